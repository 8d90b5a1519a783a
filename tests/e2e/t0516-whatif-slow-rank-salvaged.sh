#!/bin/bash
# A salvaged trace does not make its cell's partner the slow rank
# (docs/whatif.md §9.2): a trace cut short computes less, so summing it
# would put its partner "above the lower median". The cell's sums take only
# the iterations where every rank of the cell has a whole trace (status ok).
# ppgen (TP 2, an even job) -> rank 5's trace cut at 70 % -> ppbatch
# --salvage -> ppagg.
source "$PP_ROOT/tests/lib.sh"
"$PP_FAST_BIN/ppgen" --out j --tp 2 --pp 4 --dp 2 -m 8 --iterations 15 --layers 1 -q
is "job generated" 0 "$?"
f=j/iteration_15/rank_0005_iter_15.pt.trace.json
head -c $(($(stat -c %s "$f") * 7 / 10)) "$f" >cut && mv cut "$f"
ppbatch --input j --salvage -q
is "ppbatch --salvage: exit 0" 0 "$?"
is "rank 5 is stored as a partial trace" partial \
	"$(sql j/pptrace.db "SELECT status FROM ranks WHERE rank = 5")"
ppagg --base-folder j --no-render -q 2>agg.err
is "ppagg: exit 0" 0 "$?"
is "the what-if is computed over the 8 cells (rank 5 is no worker)" 8 \
	"$(sql j/pptrace.db "SELECT count(*) FROM whatif_workers")"
is "no cell names a slow rank: not rank 4, the salvaged rank's partner" 0 \
	"$(sql j/pptrace.db "SELECT count(slow_rank) FROM whatif_workers")"
done_testing
