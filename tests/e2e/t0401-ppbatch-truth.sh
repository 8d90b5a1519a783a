#!/bin/bash
# ppbatch: on ppgen trees of several layouts, every number of the ranks,
# category_stats and steps views equals the generator's truth exactly.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/e2e/lib-ppbatch.sh"
GEN="$PP_FAST_BIN/ppgen"

check_tree() { # name ppgen-args...
	local name=$1; shift
	ok_if "$name: generate" "$GEN" --out "$name" --quiet "$@"
	ppbatch --input "$name" -j 2 --quiet
	is "$name: ppbatch exits 0" 0 $?
	for v in ranks category_stats steps; do
		ok_if "$name: $v equals truth" same_as_truth "$name/pptrace.db" "$name" "$v"
	done
	is "$name: every GPU event stored once" \
		"$(sql "$name/pptrace.db" "SELECT sum(kernels) FROM category_stats WHERE category NOT LIKE '%_recompute'")" \
		"$(sql "$name/pptrace.db" "SELECT count(*) FROM kernels")"
}

check_tree tp2pp2 --tp 2 --pp 2 --microbatches 4 --iterations 15,16 --layers 2
check_tree vpp --tp 2 --pp 4 --vpp 2 --microbatches 8 --iterations 3 --layers 1 --kernels-per-layer 4
check_tree recompute --pp 2 --dp 2 --recompute --straggler 1:1.4 --microbatches 4 \
	--iterations 5 --gzip --time-format relative --layers 2
check_tree nasty --tp 2 --pp 2 --microbatches 4 --iterations 9 --layers 2 \
	--nasty string-ids,unsorted,unicode,control-chars,orphans,zero-dur,big-ids,bom,whitespace,nan

db=tp2pp2/pptrace.db
is "ranks view: folder and path" "iteration_15|$PWD/tp2pp2/iteration_15/rank_0002_iter_15.pt.trace.json|ok" \
	"$(sql $db "SELECT folder, path, status FROM ranks WHERE iteration = 15 AND rank = 2")"
is "kernels view: types are comp/comm/mem" "comm comp mem" \
	"$(sql $db "SELECT DISTINCT type FROM kernels ORDER BY 1" | tr '\n' ' ' | sed 's/ $//')"
is "kernel steps: fwd kernels carry fwd seq" 0 \
	"$(sql $db "SELECT count(*) FROM kernels WHERE category LIKE 'fwd_%' AND (phase IS NOT 'fwd' OR seq IS NULL)")"
is "kernel sums match category sums" "" \
	"$(sql $db "SELECT k.iteration, k.rank, k.category FROM (SELECT iteration, rank, category, sum(dur_ns) s, count(*) n FROM kernels GROUP BY 1,2,3) k JOIN category_stats c USING (iteration, rank, category) WHERE c.sum_ns != k.s OR c.kernels != k.n")"
is "the run is recorded" "done|8|8|0" "$(sql $db "SELECT state, files, ok, failed FROM runs")"
done_testing
