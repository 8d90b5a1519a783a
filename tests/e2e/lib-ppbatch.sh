# lib-ppbatch.sh — helpers shared by the tNN04xx-ppbatch-*.sh scripts.
# Source after tests/lib.sh.

# truth_query VIEW: the SELECT of docs/contracts.md §4 for VIEW.
truth_query() {
	case $1 in
	ranks) echo "SELECT iteration,rank,mode,window_start_ns,window_end_ns,gpu_busy_ns,idle_ns,bubble_ns,comp_busy_ns,comm_busy_ns,overlap_ns,printf('%.6f', coverage) AS coverage FROM ranks ORDER BY iteration, rank" ;;
	category_stats) echo "SELECT iteration,rank,category,kernels,sum_ns,busy_ns FROM category_stats ORDER BY iteration, rank, category" ;;
	steps) echo "SELECT iteration,rank,phase,seq,cpu_start_ns,cpu_end_ns,start_ns,end_ns,wall_ns,comp_ns,comm_ns,overlap_ns,kernels FROM steps ORDER BY iteration, rank, phase, seq" ;;
	esac
}

# view_csv DB VIEW: the view as ppgen's truth file would hold it.
view_csv() {
	sql -csv -header "$1" "$(truth_query "$2")"
}

# same_as_truth DB TREE VIEW [FILTER]: the view equals TREE/.truth/VIEW.csv
# (optionally both filtered through the grep -v pattern FILTER).
same_as_truth() {
	local db=$1 tree=$2 view=$3 filter=${4:-^\$NEVER}
	view_csv "$db" "$view" | grep -v -- "$filter" >"$T/got.$view.csv"
	grep -v -- "$filter" "$tree/.truth/$view.csv" >"$T/want.$view.csv"
	diff "$T/want.$view.csv" "$T/got.$view.csv" | head -20
	cmp -s "$T/want.$view.csv" "$T/got.$view.csv"
}

# dump_db DB: every row of the four views (and status/error), sorted, for
# comparing two databases.
dump_db() {
	sql -csv "$1" "
	SELECT 'r', iteration, folder, rank, path, bytes, status, error, mode,
	       window_start_ns, window_end_ns, gpu_busy_ns, idle_ns, bubble_ns,
	       comp_busy_ns, comm_busy_ns, overlap_ns, coverage FROM ranks;
	SELECT 'c', * FROM category_stats;
	SELECT 's', * FROM steps;
	SELECT 'k', * FROM kernels;" | LC_ALL=C sort
}
