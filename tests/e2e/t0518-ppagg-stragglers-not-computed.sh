#!/bin/bash
# The straggler flag compares a rank's forward+backward compute kernels with
# its DP group's (docs/ppagg.md "Numbers"). Where no DP group has two ranks
# with such kernels to compare -- an op-trace import (no kernels), DP 1 --
# ppagg says the flag was not computed, and why, not "0 stragglers" and
# "none" next to a what-if that names the slow worker; a job where the flag
# ran and found nothing says "none".
source "$PP_ROOT/tests/lib.sh"
FIX=$PP_ROOT/tests/fixtures/whatif
cp "$FIX/pp2dp2.csv" "$FIX/pp2dp2.yaml" .
ppbatch --format optrace --input pp2dp2.csv --meta pp2dp2.yaml --db h.db -q
is "op trace: imported" 0 $?
ppagg --db h.db --out rep --no-render 2>imp.err
is "op trace: ppagg exit 0" 0 $?
ok_if "op trace: the summary says the flag was not computed" \
	grep -q 'stragglers not computed (no DP group has two ranks with forward/backward compute kernels' imp.err
ok_if "op trace: ... and no longer '0 stragglers'" sh -c "! grep -q '0 stragglers' imp.err"
ok_if "op trace: the comparison table says 'not computed'" grep -q '<td>not computed</td></tr>' rep/index.html
ok_if "op trace: the stragglers section says why" \
	grep -q '<p>Not computed: no DP group has two ranks .*imports, which store no kernels.</p>' rep/index.html

"$PP_FAST_BIN/ppgen" --out dp1 --pp 2 --dp 1 --straggler 1:1.5 --layers 1 --kernels-per-layer 2 -q &&
	"$PP_FAST_BIN/ppbatch" --input dp1 -q && ppagg --base-folder dp1 --no-render 2>dp1.err
is "dp 1: generated, stored and aggregated" 0 $?
ok_if "dp 1: the summary says the flag was not computed" grep -q ', stragglers not computed (' dp1.err
ok_if "dp 1: the report too" grep -q '<p>Not computed: ' dp1/pptrace/index.html

"$PP_FAST_BIN/ppgen" --out dp2 --pp 2 --dp 2 --layers 1 --kernels-per-layer 2 -q &&
	"$PP_FAST_BIN/ppbatch" --input dp2 -q && ppagg --base-folder dp2 --no-render 2>dp2.err
is "dp 2, no straggler: generated, stored and aggregated" 0 $?
ok_if "dp 2, no straggler: the summary says 0 stragglers" grep -q ', 0 stragglers$' dp2.err
ok_if "dp 2, no straggler: the report says none" grep -q '<p>None above the threshold.</p>' dp2/pptrace/index.html
ok_if "dp 2, no straggler: the comparison table says none" grep -q '<td>none</td></tr>' dp2/pptrace/index.html
done_testing
