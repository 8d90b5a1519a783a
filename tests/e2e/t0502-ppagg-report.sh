#!/bin/bash
# ppagg renders its charts (gnuplot, in parallel) and the report loads in a
# headless Chromium: every image loads, no console error; the SVGs carry
# hover text on the blocks; global and individual alignment differ.
source "$PP_ROOT/tests/lib.sh"
mkdir -p run
python3 "$PP_ROOT/tests/e2e/mkaggdb.py" --db run/pptrace.db --tp 1 --pp 2 --dp 1 --mb 3 \
	--iterations 4,5 --topology run/unique_parallel_groups_1.txt
if ! command -v gnuplot >/dev/null; then
	skip "rendering" "gnuplot is not installed"
	done_testing
	exit
fi
ok_if "ppagg renders" ppagg --base-folder run -j 2 -q
for c in rank_0/timeline rank_1/overlap pp_group_0/timeline model_group_0/timeline; do
	ok_if "$c.png is a PNG" sh -c "head -c 8 run/pptrace/iteration_5/$c.png | grep -q PNG"
	ok_if "$c.svg is an SVG" grep -q '<svg' "run/pptrace/iteration_5/$c.svg"
done
# A chart gnuplot cannot write (its PNG name is a folder) fails alone, with
# gnuplot's own message; the others are rendered.
cp -r run run2 && rm -rf run2/pptrace && mkdir -p run2/pptrace/iteration_5/rank_1/overlap.png
ppagg --base-folder run2 -j 2 -q 2>fail.err
is "a failed chart: exit 1" 1 $?
ok_if "... reported with gnuplot's message" grep -q \
	"warning: gnuplot failed on 'run2/pptrace/iteration_5/rank_1/overlap.gp' (exit 1): .*overlap.gp\" line [0-9]*: " fail.err
ok_if "... the other charts rendered" test -s run2/pptrace/iteration_5/rank_1/timeline.png
ok_if "hover text on a block" grep -q "showHypertext(evt,'rank 1 bwd_computation\\\\nstep bwd 2, " \
	run/pptrace/iteration_5/pp_group_0/timeline.svg
ok_if "hover text on a bar" grep -q "showHypertext(evt,'rank 0 fwd mbs 1" \
	run/pptrace/iteration_5/rank_0/overlap.svg
gp=run/pptrace/iteration_4/pp_group_0/timeline.gp
blocks=$(awk '/^\$c[0-9] << EOD/{f=1;next} /^EOD/{f=0} f' $gp | wc -l)
hovers=$(awk '/^\$hover << EOD/{f=1;next} /^EOD/{f=0} f' $gp | wc -l)
is "every block has a hover point" "$blocks" "$hovers"
ok_if "blocks drawn" test "$blocks" -gt 20
ok_if "report links the other iteration" grep -q 'href="iteration_4.html#r1">4</a>' run/pptrace/iteration_5.html
ok_if "x axis in ms" grep -q "set xlabel 'time since the group''s first GPU event (ms)'" run/pptrace/iteration_4/pp_group_0/timeline.gp
ppagg --base-folder run --iterations 4 --time-alignment individual --no-render -q --out ind
ok_if "individual alignment" grep -q "individual alignment" ind/iteration_4/pp_group_0/timeline.gp

if ! command -v chromium >/dev/null; then
	skip "headless chromium check" "chromium is not installed"
	done_testing
	exit
fi
mkdir -p profile
# Both pages: the summary with its overview, and an iteration's details.
for page in index.html:10 iteration_5.html:6; do
	min=${page#*:} page=${page%:*}
	chromium_dom "run/pptrace/$page"
	is "chromium loads $page" 0 $?
	n=$(grep -c '<img ' run/pptrace/$page)
	is "$page: every image loads ($n)" "data-images=\"$n/$n\"" "$(grep -o 'data-images="[^"]*"' dom.html)"
	ok_if "$page: at least $min images" test "$n" -ge "$min"
	is "$page: no console message" "" "$(grep 'CONSOLE' chrome.err)"
done
done_testing
