#!/bin/bash
# The report of a large job (docs/ppagg.md, "Overview" and "What the report
# shows"): above 64 ranks the default shows the overview (heatmaps over the
# stage × replica grid with hover text naming the worst rank of each cell,
# step times per stage), the flagged ranks' charts, the PP groups of the
# stragglers and of the slowest pipelines, the replicas of the stragglers
# and of the slowest pipeline -- and writes nothing else: no script or CSV
# of another rank or group. --rank-charts (the older spelling) and
# agg.rank_charts still choose the report's rank charts. index.html stays
# small; the details page holds every rank. Up to 64 ranks every chart is
# shown as before; of many iterations the report details three.
source "$PP_ROOT/tests/lib.sh"
if ! command -v gnuplot >/dev/null; then
	skip "overview rendering" "gnuplot is not installed"
	done_testing
	exit
fi
mk="python3 $PP_ROOT/tests/e2e/mkaggdb.py"
# 80 ranks: tp 2 x pp 4 x dp 10 (mkaggdb lays out tp, dp, pp), rank 13 (stage 0
# of replica 6) 40 % slower.
mkdir -p big
$mk --db big/pptrace.db --tp 2 --pp 4 --dp 10 --mb 4 --kernels 2 --straggler 13:1.4 \
	--topology big/unique_parallel_groups_1.txt
ppagg --base-folder big -j 2 -q
is "ppagg renders the large job" 0 $?
it=big/pptrace/iteration_15
for m in bubble compute idle coverage steps; do
	ok_if "overview $m: PNG" test -s $it/overview/$m.png
	ok_if "overview $m: SVG" grep -q '<svg' $it/overview/$m.svg
done
ok_if "compute heatmap: the straggler's cell names it" grep -q \
	"showHypertext(evt,'stage 0, replica 6\\\\nrank 13: forward+backward compute [0-9.]* ms\\\\n(worst of 2 ranks)'" \
	$it/overview/compute.svg
cells=$(grep -c "showHypertext(evt,'stage" $it/overview/bubble.svg)
is "bubble heatmap: one hover per cell (4 stages x 10 replicas)" 40 "$cells"
ok_if "steps chart: the straggler's replica dot" grep -q \
	"stage 0, replica 6: rank 13\\\\nmedian fwd step" $it/overview/steps.svg
# The worst ranks: the straggler leads the compute table.
first=$(sed -n '/<caption>forward+backward compute/,/<\/table>/p' big/pptrace/index.html |
	grep -o 'iteration_15.html#r[0-9]*' | head -1)
is "worst compute rank: the straggler" "iteration_15.html#r13" "$first"
ok_if "straggler: timeline PNG and SVG" test -s $it/rank_13/timeline.png -a -s $it/rank_13/timeline.svg
ok_if "straggler: overlap PNG" test -s $it/rank_13/overlap.png
ok_if "... its overlap SVG is left to its script" test ! -e $it/rank_13/overlap.svg
# A rank no list names: nothing of it is written.
flagged=$(grep -o 'iteration_15.html#r[0-9]*' big/pptrace/index.html | sed 's/.*#r//' | sort -un)
plain=$(seq 0 79 | grep -vxF "$flagged" | head -1)
ok_if "an unflagged rank exists ($plain)" test -n "$plain"
ok_if "unflagged rank $plain: no script, no CSV" test ! -e $it/rank_$plain
n=$(ls -d $it/rank_* | wc -l)
is "rank folders: the flagged ranks only" "$(echo "$flagged" | wc -l)" "$n"
g13=$(grep -l "'rank 13' [0-9]" $it/pp_group_*/timeline.gp | head -1)
ok_if "the straggler's PP group: PNG and SVG" test -s "${g13%.gp}.png" -a -s "${g13%.gp}.svg"
ng=$(ls $it/pp_group_*/timeline.gp | wc -l)
ok_if "PP groups: the straggler's and the 3 slowest pipelines' ($ng of 20)" test "$ng" -ge 3 -a "$ng" -le 4
is "... each rendered (PNG)" "$ng" "$(ls $it/pp_group_*/timeline.png | wc -l)"
is "... the others' SVG is left to their script" 1 "$(ls $it/pp_group_*/timeline.svg | wc -l)"
ok_if "the straggler's model replica (6) is drawn" test -s $it/model_group_6/timeline.png
nm=$(ls $it/model_group_*/timeline.gp | wc -l)
ok_if "model replicas: the straggler's and the slowest pipeline's ($nm of 10)" test "$nm" -ge 1 -a "$nm" -le 2
ok_if "the details page says how to get another rank's charts" \
	grep -q -- '--charts rank=&lt;r&gt;' big/pptrace/iteration_15.html
ok_if "... another group's" grep -q -- '--charts group=&lt;g&gt;' big/pptrace/iteration_15.html
ok_if "... another replica's" grep -q -- '--charts replica=&lt;m&gt;' big/pptrace/iteration_15.html
ok_if "the pages link only to files that exist" \
	python3 "$PP_ROOT/tests/tools/check_report_links.py" big/pptrace
ok_if "index.html: no table of every rank" test -z "$(grep -o 'id="r13"' big/pptrace/index.html)"
ok_if "details page: the table of every rank" grep -q 'id="r79"' big/pptrace/iteration_15.html
ok_if "index.html says how a cell folds its ranks" grep -q 'its 2 ranks (TP 2' big/pptrace/index.html

# --rank-charts, the older spelling: the report's own rank charts.
ppagg --base-folder big -q --out none --rank-charts none
is "--rank-charts none: exit 0" 0 $?
is "--rank-charts none: no rank chart" 0 "$(ls none/iteration_15/rank_*/*.gp 2>/dev/null | wc -l)"
ok_if "... the overview still" test -s none/iteration_15/overview/bubble.png
ppagg --base-folder big -q --out list --rank-charts 5,60-61 -j 2
for r in 5 60 61 13; do
	ok_if "--rank-charts 5,60-61: rank $r rendered" test -s list/iteration_15/rank_$r/timeline.png
done
ppagg --base-folder big -q --out all --rank-charts all -j 2
is "--rank-charts all: every rank chart in both formats" "160 160" \
	"$(ls all/iteration_15/rank_*/*.png | wc -l) $(ls all/iteration_15/rank_*/*.svg | wc -l)"
printf '[agg]\nrank_charts = none\n' >none.ini
ok_if "agg.rank_charts = none: scripts written" ppagg --base-folder big -q --out cfg --config none.ini --no-render
ok_if "agg.rank_charts = none: rendered" ppagg --base-folder big -q --out cfg --config none.ini
is "agg.rank_charts = none" 0 "$(ls cfg/iteration_15/rank_*/*.png 2>/dev/null | wc -l)"
ppagg --base-folder big -q --out cfg2 --config none.ini --rank-charts 7
ok_if "... the flag wins" test -s cfg2/iteration_15/rank_7/timeline.png
ppagg --base-folder big --rank-charts 3-1 2>bad.err
is "a bad --rank-charts: exit 2" 2 $?
ok_if "... says what it expected" grep -q "rank list such as 0-7,77" bad.err
printf '[agg]\nrank_charts = some\n' >bad.ini
ppagg --base-folder big --config bad.ini 2>badc.err
is "a bad agg.rank_charts: exit 2" 2 $?
ok_if "... names the key and value" grep -q "agg.rank_charts = 'some'" badc.err

# Up to 64 ranks: every chart, every format (the 16-rank demo's shape).
mkdir -p small
$mk --db small/pptrace.db --tp 2 --pp 4 --dp 2 --mb 4 --straggler 5:1.3 \
	--topology small/unique_parallel_groups_1.txt
ppagg --base-folder small -j 2 -q
is "16 ranks: rendered" 0 $?
gps=$(cd small/pptrace && find . -name '*.gp' | sort | sed 's/\.gp$//')
is "16 ranks: every script has its PNG" "$gps" \
	"$(cd small/pptrace && find . -name '*.png' | sort | sed 's/\.png$//')"
is "16 ranks: every script has its SVG" "$gps" \
	"$(cd small/pptrace && find . -name '*.svg' | sort | sed 's/\.svg$//')"
is "16 ranks: 16 rank timelines" 16 "$(ls small/pptrace/iteration_15/rank_*/timeline.png | wc -l)"

# The same 16 ranks in five iterations: the report details three (the
# slowest, the median, the fastest), 48 rank charts, so every rank of them
# (an op trace of many steps would otherwise show ranks × steps charts).
mkdir -p five
$mk --db five/pptrace.db --tp 2 --pp 4 --dp 2 --mb 4 --straggler 5:1.3 --iterations 15,16,17,18,19 \
	--topology five/unique_parallel_groups_1.txt
ppagg --base-folder five -j 2 -q
is "16 ranks x 5 iterations: rendered" 0 $?
is "16 ranks x 5 iterations: three iterations detailed" 3 "$(ls -d five/pptrace/iteration_1[5-9] | wc -l)"
is "... three iteration pages" 3 "$(ls five/pptrace/iteration_1[5-9].html | wc -l)"
is "... every rank of them" 48 "$(ls five/pptrace/iteration_1[5-9]/rank_*/timeline.png | wc -l)"
ok_if "... index.html says which and how to get another" \
	grep -q 'The report details 3 of the 5 iterations.*--charts iteration=&lt;n&gt;' five/pptrace/index.html
ok_if "... iterations.csv has all five" test "$(wc -l <five/pptrace/iterations.csv)" -eq 6
ok_if "... the pages link only to files that exist" \
	python3 "$PP_ROOT/tests/tools/check_report_links.py" five/pptrace
done_testing
