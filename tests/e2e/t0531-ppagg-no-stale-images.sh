#!/bin/bash
# A chart's PNG and SVG are of the run that wrote its script (docs/ppagg.md,
# --no-render). A run that does not render a chart -- with --no-render, a
# rank chart the render plan leaves out, or gnuplot missing -- leaves no
# image an earlier run rendered beside the new script, so the report never
# shows a chart of other data.
source "$PP_ROOT/tests/lib.sh"
if ! command -v gnuplot >/dev/null; then
	skip "stale images removed" "gnuplot is not installed (the images come from it)"
	done_testing
	exit
fi
"$PP_FAST_BIN/ppgen" --out j --pp 2 --dp 2 --layers 1 --kernels-per-layer 2 --iterations 1 -q &&
	"$PP_FAST_BIN/ppbatch" --input j -q
is "generated and stored" 0 $?
ppagg --base-folder j -q -j 1 --rank-charts all
is "rendered with every rank's charts: exit 0" 0 $?
imgs() { find j/pptrace -name '*.png' -o -name '*.svg' | sort; }
rank_png=$(find j/pptrace -path '*rank_*' -name '*.png' | head -1)
ok_if "... a rank chart's PNG is there" test -n "$rank_png"
n_before=$(imgs | wc -l)
ok_if "... and images of other charts ($n_before in all)" test "$n_before" -gt 2
ppagg --base-folder j -q -j 1 --rank-charts none
is "again without the rank charts: exit 0" 0 $?
ok_if "... the rank chart's script is written anew" test -f "${rank_png%.png}.gp"
ok_if "... its earlier PNG is gone" test ! -e "$rank_png"
ok_if "... its earlier SVG is gone" test ! -e "${rank_png%.png}.svg"
ok_if "... the charts rendered this time are there" test "$(imgs | wc -l)" -gt 0
ppagg --base-folder j -q --no-render
is "again with --no-render: exit 0" 0 $?
is "... no image is left" "" "$(imgs)"
ok_if "... the scripts are there" test -n "$(find j/pptrace -name '*.gp' | head -1)"
done_testing
