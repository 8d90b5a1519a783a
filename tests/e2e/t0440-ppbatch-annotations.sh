#!/bin/bash
# ppbatch on a trace in the shape of DeepSeek's training profile
# (tests/fixtures/deepseek-shape): the annotations view gives each of the
# ten annotations its 4 calls and GPU time (expected.txt, computed by
# make.py), the DeepEP kernels are all-to-all communication and their time
# counts as communication in the rank metrics; a re-run and a merge keep
# one row per name.
source "$PP_ROOT/tests/lib.sh"
FIX=$PP_ROOT/tests/fixtures/deepseek-shape
mkdir -p tree/iteration_1
cp "$FIX/rank_0.pt.trace.json" tree/iteration_1/
ppbatch --input tree -q
is "stored: exit 0" 0 $?
db=tree/pptrace.db
is "the ten annotations: 4 calls each and their GPU time" "$(cat "$FIX/expected.txt")" \
	"$(sql $db "SELECT name, calls, kernels, gpu_ns, comp_ns, comm_ns, overlap_ns FROM annotations
		WHERE iteration = 1 AND rank = 0 AND name != '1F1B' ORDER BY name")"
is "DeepEP's kernels: communication, all-to-all" "comm|all_to_all|24" \
	"$(sql $db "SELECT type, collective, count(*) FROM kernels WHERE name LIKE '%dpsk::ep::%' GROUP BY 1, 2")"
is "the others: computation, no collective" "comp||36" \
	"$(sql $db "SELECT type, collective, count(*) FROM kernels WHERE name NOT LIKE '%dpsk::ep::%' GROUP BY 1, 2")"
is "the rank's communication time is DeepEP's" "900000|generic" \
	"$(sql $db "SELECT comm_busy_ns, mode FROM ranks")"
is "the overlap of computation and communication is seen" "838000" \
	"$(sql $db "SELECT overlap_ns FROM ranks")"
ppbatch --input tree -q --force
is "a re-run keeps one row per name" "11|11" \
	"$(sql $db "SELECT count(*), count(DISTINCT name) FROM annotations")"
ppbatch --input tree --db shard.db -q && ppbatch --merge --db merged.db shard.db >/dev/null 2>&1
is "a merge copies them" "$(sql $db "SELECT * FROM annotations ORDER BY name")" \
	"$(sql merged.db "SELECT * FROM annotations ORDER BY name")"
done_testing
