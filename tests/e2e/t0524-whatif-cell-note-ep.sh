#!/bin/bash
# The what-if's note on cells of several ranks (docs/whatif.md §9.1) gives
# the cell's shape and says the lowest rank is the worker, also where the
# cell's ranks are expert-parallel ones (EP 2, TP 1): not "its lowest
# (tensor and context rank 0) is its worker".
source "$PP_ROOT/tests/lib.sh"
"$PP_FAST_BIN/ppgen" --out j --pp 2 --dp 2 --ep 2 --straggler 3:1.5 --layers 1 \
	--kernels-per-layer 2 -q && "$PP_FAST_BIN/ppbatch" --input j -q &&
	ppagg --base-folder j --no-render 2>agg.err >/dev/null
is "generated, stored and aggregated" 0 $?
is "the note gives the cell's shape" \
	"cells: each (dp_rank, stage) cell has 2 ranks (TP 1 x CP 1 x EP 2); its lowest is its worker" \
	"$(sql j/pptrace.db "SELECT notes FROM whatif" | grep '^cells:')"
ok_if "... on stderr too" grep -q '^ppagg: what-if: note: cells: each (dp_rank, stage) cell has 2 ranks (TP 1 x CP 1 x EP 2); its lowest is its worker$' agg.err
is "... the straggler's cell names it" "2|3" \
	"$(sql j/pptrace.db "SELECT rank, slow_rank FROM whatif_workers WHERE slow_rank IS NOT NULL")"
done_testing
