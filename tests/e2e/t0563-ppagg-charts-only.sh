#!/bin/bash
# --charts on an analysed database (docs/ppagg.md, "Charts on demand"):
# when the output folder holds a report and the command line's --charts
# names only ranks, PP groups or replicas, ppagg writes and renders just
# those charts from the database: no analysis runs again and no row is
# written (the database dumps the same), index.html stays byte for byte,
# the iteration page links the new charts, nothing of the earlier run goes
# and every link of the pages resolves. Without a report in the output
# folder, with an iteration the report has no page of, or with iteration=
# or all, it is the whole run.
source "$PP_ROOT/tests/lib.sh"
agg80_report "charts on an analysed database"
it=pptrace/iteration_15
flagged=$(ls -d $it/rank_* | sed 's/.*rank_//' | sort -n)
r=$(seq 0 79 | grep -vxF "$flagged" | head -1)
ok_if "a rank the report does not show ($r)" test -n "$r" -a ! -e $it/rank_$r
ok_if "a PP group it does not draw (5)" test ! -e $it/pp_group_5
cp pptrace/index.html index.before
sql pptrace.db .dump >db.before
find pptrace -type f -printf '%P\n' | sort >files.before

ppagg --base-folder . -j 2 --charts rank=$r --charts group=5 2>err
is "--charts rank=$r group=5: exit 0" 0 $?
ok_if "... says it ran no analysis again" grep -q -- "--charts: .* chart scripts written .*(no analysis run again)" err
ok_if "... no line of an analysis" test -z "$(grep -E 'what-if|why:|advice:' err)"
ok_if "rank $r: timeline and overlap, PNG and SVG" test -s $it/rank_$r/timeline.png -a \
	-s $it/rank_$r/timeline.svg -a -s $it/rank_$r/overlap.png -a -s $it/rank_$r/overlap.svg
ok_if "rank $r: its CSVs" test -s $it/rank_$r/steps.csv -a -s $it/rank_$r/categories.csv
ok_if "PP group 5: PNG and SVG" test -s $it/pp_group_5/timeline.png -a -s $it/pp_group_5/timeline.svg
ok_if "the iteration page links rank $r" grep -q "rank_$r/timeline.svg" pptrace/iteration_15.html
ok_if "... and PP group 5" grep -q 'pp_group_5/timeline.svg' pptrace/iteration_15.html
ok_if "index.html is the earlier run's, byte for byte" cmp -s index.before pptrace/index.html
sql pptrace.db .dump >db.after
ok_if "no row written: the database dumps the same" cmp -s db.before db.after
is "nothing the earlier run wrote is gone" "" \
	"$(find pptrace -type f -printf '%P\n' | sort | comm -23 files.before -)"
is "only the charts asked for are new" \
	"$(printf '%s\n' pp_group_5 rank_$r | sort)" \
	"$(find pptrace -type f -printf '%P\n' | sort | comm -13 files.before - |
		sed -n "s|^iteration_15/\([^/]*\)/.*|\1|p" | sort -u)"
ok_if "the pages link only to files that exist" report_links pptrace

# The same charts from a whole run are the same scripts and CSVs.
ppagg --base-folder . -j 2 -q --out whole --charts rank=$r --charts group=5
is "a whole run with the same --charts: exit 0" 0 $?
for f in rank_$r/timeline.gp rank_$r/overlap.gp rank_$r/steps.csv rank_$r/categories.csv \
	pp_group_5/timeline.gp; do
	ok_if "... $f the same" cmp -s whole/iteration_15/$f $it/$f
done
ok_if "... its iteration page the same" cmp -s whole/iteration_15.html pptrace/iteration_15.html

# No report in the output folder: the whole run.
ppagg --base-folder . -j 2 --out fresh --charts rank=$r 2>err
is "--charts rank=$r into an empty folder: exit 0" 0 $?
ok_if "... the whole report" test -s fresh/index.html -a -s fresh/iterations.csv
ok_if "... with its analyses" grep -q "iterations\? aggregated in" err
# iteration= asks for more than charts: the whole run.
ppagg --base-folder . -j 2 --charts rank=$r --charts iteration=15 2>err
is "--charts rank=$r iteration=15: exit 0" 0 $?
ok_if "... the whole run" grep -q "iterations\? aggregated in" err
ok_if "... the pages link only to files that exist" report_links pptrace

# A report of iteration 15 only (as before iteration 16's traces were
# stored), then --charts on both: the report has no page of 16, so the whole
# run, said, and no page linking what is missing.
mkdir two && cd two || exit 1
python3 "$PP_ROOT/tests/e2e/mkaggdb.py" --db pptrace.db --tp 2 --pp 4 --dp 10 --mb 4 \
	--kernels 2 --iterations 15,16 --topology unique_parallel_groups_1.txt
ppagg --base-folder . -j 2 -q --iterations 15
is "a report of iteration 15 alone: exit 0" 0 $?
ppagg --base-folder . -j 2 --charts rank=3 2>err
is "--charts rank=3 on iterations 15 and 16: exit 0" 0 $?
ok_if "... says it writes the whole report" grep -q "writing it whole" err
ok_if "... the whole run" grep -q "iterations\? aggregated in" err
ok_if "... iteration 16's page, listed in index.html" grep -q 'iteration_16.html' pptrace/index.html
ok_if "... rank 3's timeline" test -s pptrace/iteration_16/rank_3/timeline.gp
ok_if "... the pages link only to files that exist" report_links pptrace
cd .. || exit 1
done_testing
