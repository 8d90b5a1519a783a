#!/bin/bash
# When the aggregated traces hold no ops, ppagg says where ops come from,
# also for a Kineto tree whose traces all failed: not "(op traces: ppbatch
# --format optrace)" alone, as if op traces were the only way in; ppbatch
# derives the ops of every Megatron-mode Kineto trace it reads whole
# (docs/contracts.md §4.1).
source "$PP_ROOT/tests/lib.sh"
"$PP_FAST_BIN/ppgen" --out j --pp 2 --layers 1 --kernels-per-layer 2 -q
for f in j/iteration_15/*.json; do head -c 5000 "$f" >t && mv t "$f"; done
"$PP_FAST_BIN/ppbatch" --input j -q 2>/dev/null
is "every trace truncated: ppbatch exit 1" 1 $?
ppagg --base-folder j --no-render 2>agg.err >/dev/null
is "ppagg: exit 1 (failed ranks)" 1 $?
ok_if "the line says where ops come from" grep -q \
	'^ppagg: what-if: no ops in these iterations: ppbatch derives them from the Megatron-mode Kineto traces it read whole (status ok: not from failed, salvaged or generic-mode ones) and imports op traces (ppbatch --format optrace)$' \
	agg.err
ok_if "the report too" grep -q '<p>No what-if analysis: the aggregated traces hold no ops; ppbatch derives them from the Megatron-mode Kineto traces it read whole' j/pptrace/index.html
done_testing
