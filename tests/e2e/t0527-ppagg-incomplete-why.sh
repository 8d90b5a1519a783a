#!/bin/bash
# An incomplete group says why each of its ranks is not analysed: "1 (in
# conflict)" (two traces claim it: docs/contracts.md §8), "(failed)",
# "(missing)", never "missing or failed rank 1", under "model replica" as
# in the rest of the report.
source "$PP_ROOT/tests/lib.sh"
"$PP_FAST_BIN/ppgen" --out j --pp 2 --dp 2 --layers 1 --kernels-per-layer 2 -q
it=j/iteration_15
cp $it/rank_0001_iter_15.pt.trace.json $it/rank_0001_iter_15.copy.pt.trace.json
head -c 20000 $it/rank_0002_iter_15.pt.trace.json >t && mv t $it/rank_0002_iter_15.pt.trace.json
"$PP_FAST_BIN/ppbatch" --input j -q 2>/dev/null
is "a conflict and a failed trace: ppbatch exit 1" 1 $?
ppagg --base-folder j --no-render 2>agg.err >/dev/null
is "ppagg: exit 1" 1 $?
ok_if "the warning: rank 1 in conflict" grep -q \
	'^ppagg: warning: iteration 15: PP group 1 incomplete, not drawn and no pipeline row; rank not analysed: 1 (in conflict)$' agg.err
ok_if "the warning: rank 2 failed" grep -q \
	'^ppagg: warning: iteration 15: PP group 0 incomplete, not drawn and no pipeline row; rank not analysed: 2 (failed)$' agg.err
idx=j/pptrace/index.html
ok_if "the report: PP group 1, rank 1 in conflict" grep -q '<li>PP group 1: rank not analysed: 1 (in conflict)</li>' $idx
ok_if "the report: model replica 1 (rank 1 is dp 1)" grep -q '<li>model replica 1: rank not analysed: 1 (in conflict)</li>' $idx
ok_if "the report: model replica 0, rank 2 failed" grep -q '<li>model replica 0: rank not analysed: 2 (failed)</li>' $idx
done_testing
