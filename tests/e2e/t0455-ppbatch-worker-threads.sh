#!/bin/bash
# ppbatch --worker-threads: a worker that reads on a thread of its own
# (plain traces) or inflates on one (gzip) stores exactly what a worker of
# one thread stores, on plain, gzip and nasty ppgen trees, with -j 1 and
# -j 2; the truth holds; a truncated trace is salvaged alike, a cut or
# corrupt one fails alike; the option and the config key are checked.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/e2e/lib-ppbatch.sh"
GEN="$PP_FAST_BIN/ppgen"

# same_runs TREE: ppbatch with 1 and 2 threads per worker, -j 1 and -j 2.
same_runs() {
	local tree=$1 t j
	for t in 1 2; do
		for j in 1 2; do
			ppbatch --input "$tree" --db "$tree-t$t-j$j.db" -j $j --worker-threads $t --quiet
			is "$tree: -j $j --worker-threads $t exits 0" 0 $?
		done
	done
	dump_db "$tree-t1-j1.db" >"$T/want" || { ok_if "$tree: dump" false; return; }
	for db in "$tree-t2-j1.db" "$tree-t2-j2.db" "$tree-t1-j2.db"; do
		dump_db "$db" >"$T/got"
		ok_if "$tree: $db stores what one thread stores" cmp -s "$T/want" "$T/got"
	done
	for v in ranks category_stats steps; do
		ok_if "$tree: $v equals truth with 2 threads" same_as_truth "$tree-t2-j1.db" "$tree" "$v"
	done
}

ok_if "plain: generate" "$GEN" --out plain --quiet --tp 2 --pp 2 --microbatches 8 \
	--iterations 3 --layers 2
same_runs plain
ok_if "gzip: generate" "$GEN" --out gz --quiet --pp 2 --dp 2 --recompute --microbatches 8 \
	--iterations 4 --layers 2 --gzip --time-format relative
same_runs gz
ok_if "nasty: generate" "$GEN" --out nasty --quiet --tp 2 --pp 2 --microbatches 4 \
	--iterations 9 --layers 2 \
	--nasty string-ids,unsorted,unicode,control-chars,orphans,zero-dur,big-ids,bom,whitespace,nan
same_runs nasty

# Truncated, cut and corrupt traces: the same outcome with 1 and 2 threads.
mkdir -p cut/iteration_1
src=$(ls plain/iteration_3/*.json | head -1)
size=$(stat -c %s "$src")
head -c $((size / 2)) "$src" >cut/iteration_1/rank_0000_iter_1.pt.trace.json
gzip -c "$src" >cut/iteration_1/rank_0002_iter_1.pt.trace.json.gz
gz=$(stat -c %s cut/iteration_1/rank_0002_iter_1.pt.trace.json.gz)
head -c $((gz / 2)) cut/iteration_1/rank_0002_iter_1.pt.trace.json.gz \
	>cut/iteration_1/rank_0001_iter_1.pt.trace.json.gz
# a byte of the deflate data flipped: corrupt
printf '\x5a' | dd of=cut/iteration_1/rank_0002_iter_1.pt.trace.json.gz bs=1 seek=3000 \
	conv=notrunc 2>/dev/null
outcome() { # DB
	sql "$1" "SELECT rank, status, replace(error, '$PWD/', '') FROM ranks ORDER BY rank"
}
for salvage in "" --salvage; do
	for t in 1 2; do
		ppbatch --input cut --db "cut$salvage-t$t.db" -j 1 --worker-threads $t $salvage \
			--quiet 2>/dev/null
		is "cut${salvage:+, salvage}: $t threads exit 1" 1 $?
	done
	want=$(outcome "cut$salvage-t1.db")
	is "cut${salvage:+, salvage}: the same outcome with 2 threads" "$want" \
		"$(outcome "cut$salvage-t2.db")"
done
is "cut: failed, failed, failed" "failed failed failed" \
	"$(sql cut-t2.db "SELECT status FROM ranks ORDER BY rank" | tr '\n' ' ' | sed 's/ $//')"
is "salvage: partial, partial, failed (corrupt)" "partial partial failed" \
	"$(sql cut--salvage-t2.db "SELECT status FROM ranks ORDER BY rank" | tr '\n' ' ' | sed 's/ $//')"
dump_db cut--salvage-t1.db >"$T/want"
dump_db cut--salvage-t2.db >"$T/got"
ok_if "salvage: the same kernels kept with 2 threads" cmp -s "$T/want" "$T/got"

# The option and the key.
ppbatch --input plain --db bad.db --worker-threads 3 --quiet 2>err
is "--worker-threads 3: usage error" 2 $?
ok_if "--worker-threads 3: says what is expected" grep -q "worker-threads" err
printf '[batch]\nworker_threads = 0\n' >auto.ini
ppbatch --input plain --db auto.db --config auto.ini -j 1 --quiet
is "worker_threads = 0 (auto): exits 0" 0 $?
dump_db auto.db >"$T/got"
dump_db plain-t1-j1.db >"$T/want"
ok_if "worker_threads = 0: the same database" cmp -s "$T/want" "$T/got"
printf '[batch]\nworker_threads = 5\n' >bad.ini
ppbatch --input plain --db bad2.db --config bad.ini --quiet 2>err
is "worker_threads = 5: usage error" 2 $?
ok_if "worker_threads = 5: names the key" grep -q "worker_threads" err
done_testing
