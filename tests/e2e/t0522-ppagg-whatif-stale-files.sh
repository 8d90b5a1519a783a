#!/bin/bash
# out/whatif/ holds the what-if charts and Perfetto file of ppagg's last run
# (docs/ppagg.md "What if, in the report"). A run without them (S below
# 1.03, an incomplete grid, no ops) leaves no earlier run's files there,
# where whatif/timeline.json would show the earlier run's straggler beside
# an index.html that says "no straggler worth explaining". Such a run
# removes them -- only those names, and never through a symlink planted
# in the output folder.
source "$PP_ROOT/tests/lib.sh"
gen() { "$PP_FAST_BIN/ppgen" --pp 2 --dp 2 --layers 1 --kernels-per-layer 2 -q "$@"; }
gen --out j --iterations 1 --straggler 1:1.5 && gen --out even --iterations 2 &&
	mv even/iteration_2 j/ && "$PP_FAST_BIN/ppbatch" --input j -q
is "generated (iteration 1 with a straggler, 2 even) and stored" 0 $?
ppagg --base-folder j --iterations 1 --no-render -q
is "iteration 1: exit 0" 0 $?
ok_if "... writes whatif/ (S above the threshold)" test -f j/pptrace/whatif/timeline.json
ppagg --base-folder j --iterations 2 --no-render -q
is "iteration 2: exit 0" 0 $?
ok_if "... S below the threshold, said in the report" grep -q 'below the 1.03 threshold' j/pptrace/index.html
ok_if "... and the earlier run's whatif/ files are gone" test ! -e j/pptrace/whatif
if command -v gnuplot >/dev/null; then
	ppagg --base-folder j --iterations 1 -q -j 1 --rank-charts none &&
		ppagg --base-folder j --iterations 2 -q -j 1 --rank-charts none
	is "rendered, then a run without the analysis: exit 0" 0 $?
	ok_if "... the rendered PNGs and SVGs are gone too" test ! -e j/pptrace/whatif
else
	skip "rendered what-if charts removed" "gnuplot is not installed"
fi
mkdir elsewhere && echo keep >elsewhere/timeline.json && ln -s "$PWD/elsewhere" j/pptrace/whatif
ppagg --base-folder j --iterations 2 --no-render -q
is "a symlink planted at whatif/: exit 0" 0 $?
is "... the file behind it is left alone" keep "$(cat elsewhere/timeline.json)"
ok_if "... and so is the symlink" test -L j/pptrace/whatif
done_testing
