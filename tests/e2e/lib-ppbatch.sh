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

# stopped COORD: the workers of COORD that stopped themselves (state T).
stopped() {
	local p
	for p in $(pgrep -P "$1"); do
		[ "$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null)" = T ] && echo "$p"
	done
}
# wait_stopped COORD N [OLD]: until N workers of COORD are stopped, none of
# them OLD (a worker killed before); prints them. Fails after 120 s (a hang,
# not a timing assumption: the stop is certain to come).
wait_stopped() {
	local got
	for _ in $(seq 2400); do
		got=$(stopped "$1" | grep -vx -- "${3:-none}" | tr '\n' ' ')
		[ "$(wc -w <<<"$got")" -ge "$2" ] && { echo "$got"; return 0; }
		sleep 0.05
	done
	echo "no $2 stopped worker(s) of $1" >&2
	return 1
}

# lock_taken DB: another connection cannot begin a write transaction now.
lock_taken() {
	! sqlite3 "$1" "BEGIN IMMEDIATE; ROLLBACK;" 2>/dev/null
}
# open_traces PID: how many trace files PID has open.
open_traces() {
	local n=0 f
	for f in /proc/"$1"/fd/*; do
		case $(readlink "$f" 2>/dev/null) in *.pt.trace.json) n=$((n + 1)) ;; esac
	done
	echo $n
}
# worker_holds_two TREE DB: runs `ppbatch -j 1 --force` on TREE into DB in
# the background (pid in coord), its worker (worker) stopped on its first
# trace (PPTRACE_TEST_WORKER_STOP, see t0404) until the sqlite3 shell
# (holder, reading fd 7) holds DB's write lock; then the worker goes on,
# and this waits until it holds two traces open, which a worker that waits
# for the lock never does. Each wait is bounded (a hang is a failure, not a
# timing assumption). Two TAP tests.
worker_holds_two() {
	local tree=$1 db=$2 two=no
	PPTRACE_TEST_WORKER_STOP='*/rank_0000_*' ppbatch --input "$tree" --db "$db" -j 1 --force --quiet &
	coord=$!
	worker=$(wait_stopped $coord 1)
	worker=${worker// /}
	mkfifo holder.in
	sqlite3 "$db" <holder.in >/dev/null 2>holder.err &
	holder=$!
	exec 7>holder.in
	echo "BEGIN IMMEDIATE; DELETE FROM runs WHERE 0;" >&7
	for _ in $(seq 2400); do lock_taken "$db" && break; sleep 0.05; done
	ok_if "the sqlite3 shell holds the write lock" lock_taken "$db"
	kill -CONT $worker
	for _ in $(seq 2400); do
		[ "$(open_traces "$worker")" -ge 2 ] && { two=yes; break; }
		kill -0 $worker 2>/dev/null || break
		sleep 0.05
	done
	is "while the lock is held, the worker reads its second trace" yes $two
}
