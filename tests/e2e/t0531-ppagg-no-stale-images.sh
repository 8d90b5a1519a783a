#!/bin/bash
# A chart's PNG and SVG are of the run that wrote its script (docs/ppagg.md,
# --no-render). A run that writes a script but does not render it -- with
# --no-render, a chart the render plan leaves to its script, or gnuplot
# missing -- leaves no image an earlier run rendered beside it, so the
# report never shows a chart of other data. A chart a run does not write
# at all (the report does not show it) is left as an earlier run wrote it,
# script and images, and the pages do not link it.
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
gp_before=$(stat -c %Y.%i "${rank_png%.png}.gp")
ppagg --base-folder j -q -j 1 --rank-charts none
is "again without the rank charts: exit 0" 0 $?
is "... the rank chart is not written again" "$gp_before" "$(stat -c %Y.%i "${rank_png%.png}.gp")"
ok_if "... its script and images stay as the earlier run left them" \
	test -s "$rank_png" -a -s "${rank_png%.png}.svg"
ok_if "... and the pages do not link it" \
	test -z "$(grep -ho 'rank_[0-9]*/[a-z]*\.[a-z]*' j/pptrace/*.html)"
ok_if "... the charts rendered this time are there" test "$(imgs | wc -l)" -gt 0
ppagg --base-folder j -q --no-render
is "again with --no-render: exit 0" 0 $?
is "... no image is left" "" "$(imgs)"
ok_if "... the scripts are there" test -n "$(find j/pptrace -name '*.gp' | head -1)"
done_testing
