#!/bin/bash
# The report of a 1,024-rank job (tp 8 x pp 16 x dp 8) opens in a headless
# Chromium (no network; flags in docs/ppagg.md, "Tests"): index.html stays
# under 2 MB with its few overview images, every one of them loads and the
# console stays silent; the details page with its 1,024-row table loads too.
# The output holds what the report shows: at most 600 files and 15 MB, the
# pages link only to files that exist, and `--charts rank=N` adds rank N's
# charts on demand, leaving the rest as it was.
source "$PP_ROOT/tests/lib.sh"
python3 "$PP_ROOT/tests/e2e/mkaggdb.py" --db pptrace.db --tp 8 --pp 16 --dp 8 --mb 4 \
	--kernels 2 --straggler 77:1.3 --topology unique_parallel_groups_1.txt
if ! command -v gnuplot >/dev/null; then
	skip "1,024-rank report" "gnuplot is not installed"
	done_testing
	exit
fi
ppagg --base-folder . -j 2 -q
is "ppagg renders 1,024 ranks" 0 $?
size=$(stat -c %s pptrace/index.html)
ok_if "index.html is at most 2 MB ($size bytes)" test "$size" -le 2097152
is "index.html: the overview's 5 images and the advisor's chart" 6 "$(grep -c '<img ' pptrace/index.html)"
ok_if "... the advisor's chart among them" grep -q '<img src="advice/step_memory.png"' pptrace/index.html
ok_if "details page: a row per rank" test "$(grep -c '<tr id="r' pptrace/iteration_15.html)" -eq 1024
n=$(ls pptrace/iteration_15/pp_group_*/timeline.png | wc -l)
ok_if "PP groups drawn: the straggler's and the 3 slowest pipelines' ($n of 64)" \
	test "$n" -ge 3 -a "$n" -le 4
files=$(find pptrace -type f | wc -l)
ok_if "at most 600 files ($files)" test "$files" -le 600
bytes=$(du -sb pptrace | cut -f1)
ok_if "at most 15 MB ($bytes bytes, du -sb)" test "$bytes" -le 15000000
ok_if "the pages link only to files that exist" \
	python3 "$PP_ROOT/tests/tools/check_report_links.py" pptrace
flagged=$(grep -o 'iteration_15.html#r[0-9]*' pptrace/index.html | sed 's/.*#r//' | sort -un)
plain=$(seq 0 1023 | grep -vxF "$flagged" | tail -1)
ok_if "rank $plain is not flagged: nothing of it written" test ! -e pptrace/iteration_15/rank_$plain
find pptrace -type f -printf '%P %T@\n' | sort >before
ppagg --base-folder . -j 2 -q --charts rank=$plain
is "--charts rank=$plain: exit 0" 0 $?
ok_if "... its timeline, PNG and SVG" \
	test -s pptrace/iteration_15/rank_$plain/timeline.png -a -s pptrace/iteration_15/rank_$plain/timeline.svg
ok_if "... its CSVs" test -s pptrace/iteration_15/rank_$plain/steps.csv
ok_if "... the details page links it" grep -q "rank_$plain/timeline.svg" pptrace/iteration_15.html
gone=$(find pptrace -type f -printf '%P\n' | sort | comm -13 - <(cut -d' ' -f1 before))
is "... no file of the earlier run is gone" "" "$gone"
ok_if "... the pages link only to files that exist" \
	python3 "$PP_ROOT/tests/tools/check_report_links.py" pptrace
if ! command -v chromium >/dev/null; then
	skip "headless chromium" "chromium is not installed"
	done_testing
	exit
fi
mkdir -p profile
for page in index.html iteration_15.html; do
	chromium_dom "pptrace/$page"
	is "chromium loads $page" 0 $?
	ok_if "$page: the page ran its script" grep -q 'data-images="' dom.html
	is "$page: no console message" "" "$(grep 'CONSOLE' chrome.err)"
	# The summary's images are above the fold: all of them load (the
	# details page loads its images lazily).
	[ "$page" = index.html ] &&
		is "index.html: every image loads" 'data-images="6/6"' \
			"$(grep -o 'data-images="[^"]*"' dom.html)"
done
done_testing
