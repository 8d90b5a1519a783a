#!/bin/bash
# The report of a 1,024-rank job (tp 8 x pp 16 x dp 8) opens in a headless
# Chromium (no network; flags in docs/ppagg.md, "Tests"): index.html stays
# under 2 MB with its few overview images, every one of them loads and the
# console stays silent; the details page with its 1,024-row table loads too.
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
is "every PP group rendered" 64 "$(ls pptrace/iteration_15/pp_group_*/timeline.png | wc -l)"
if ! command -v chromium >/dev/null; then
	skip "headless chromium" "chromium is not installed"
	done_testing
	exit
fi
mkdir -p profile
for page in index.html iteration_15.html; do
	timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$T/profile" --enable-logging=stderr --v=0 \
		--dump-dom "file://$T/pptrace/$page" >dom.html 2>chrome.err
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
