#!/bin/bash
# Of many iterations the report details three (docs/ppagg.md, "What the
# report shows"): the reference's what-if sample, 44 steps of 16 workers
# imported as t0505 does, gets per-iteration files for the slowest, the
# median and the fastest step only -- not 44 × 16 ranks' charts -- while
# index.html compares all 44 and iterations.csv lists them. `--charts
# iteration=N` adds another to the report, keeping the others; the pages
# link only to files that exist.
source "$PP_ROOT/tests/lib.sh"
AR=$SHARED/data/whatif
[ -r "$AR/trace-AR.csv.gz" ] || {
	skip "the what-if sample's report" "no $AR/trace-AR.csv.gz (set PP_SHARED)"
	done_testing
	exit
}
links() { python3 "$PP_ROOT/tests/tools/check_report_links.py" "$1"; }
"$PP_FAST_BIN/ppbatch" --format optrace --input "$AR/trace-AR.csv.gz" --meta "$AR/meta-AR.yaml" \
	--schema "$AR/trace-AR.schema.json" --db ar.db -q
is "imported" 0 $?
ppagg --db ar.db --out rep --no-render 2>err
is "ppagg --db --no-render: exit 0" 0 $?
n=$(sed -n 's/.*aggregated in [0-9.]* s, \([0-9]*\) chart scripts written.*/\1/p' err)
ok_if "a few chart scripts, not 1,982 ($n)" test -n "$n" -a "${n:-9999}" -le 150
is "three iteration folders" 3 "$(ls -d rep/iteration_* | grep -vc html)"
is "three iteration pages" 3 "$(ls rep/iteration_*.html | wc -l)"
files=$(find rep -type f | wc -l)
ok_if "at most 300 files ($files)" test "$files" -le 300
is "iterations.csv: every iteration" 45 "$(wc -l <rep/iterations.csv)"
is "index.html: every iteration compared" 44 "$(grep -c '<tr><td>\(<a href="#iter-[0-9]*">\)\?[0-9]*\(</a>\)\?</td><td>16</td>' rep/index.html)"
ok_if "... says which are detailed and how to get another" grep -q \
	'The report details 3 of the 44 iterations (the slowest: .*the median: .*the fastest: .*--charts iteration=&lt;n&gt;' \
	rep/index.html
ok_if "the pages link only to files that exist" links rep
first=$(sql ar.db "SELECT min(iteration) FROM traces")
if [ -e rep/iteration_$first ]; then
	first=$(sql ar.db "SELECT max(iteration) FROM traces")
fi
ok_if "iteration $first is not detailed" test ! -e rep/iteration_$first -a ! -e rep/iteration_$first.html
ppagg --db ar.db --out rep --no-render -q --charts iteration=$first
is "--charts iteration=$first: exit 0" 0 $?
ok_if "... its page and overview" test -s rep/iteration_$first.html -a -s rep/iteration_$first/overview/compute.gp
is "... the three others stay" 4 "$(ls rep/iteration_*.html | wc -l)"
ok_if "... index.html links its section" grep -q "href=\"#iter-$first\"" rep/index.html
ok_if "... the pages link only to files that exist" links rep
done_testing
