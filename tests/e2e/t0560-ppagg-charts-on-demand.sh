#!/bin/bash
# --charts (docs/ppagg.md, "What the report shows"): the report of an
# 80-rank job shows the flagged ranks and a few groups and writes nothing
# else; `--charts rank=N`, `group=G` and `replica=M` (repeatable, lists)
# write and render those on demand from the database and add them to the
# pages, without removing what an earlier run wrote; `--charts all` writes
# every chart's script and CSV (today's files), rendering what the report
# shows; agg.charts does the same from the config file. Whatever is asked,
# the pages link only to files that exist. Names the job lacks are a
# warning; a bad value is a usage error.
source "$PP_ROOT/tests/lib.sh"
agg80_report "charts on demand"
it=pptrace/iteration_15
ok_if "the pages link only to files that exist" report_links pptrace
flagged=$(ls -d $it/rank_* | sed 's/.*rank_//' | sort -n)
plain=$(seq 0 79 | grep -vxF "$flagged" | head -2 | tr '\n' ' ')
set -- $plain
ok_if "two ranks the report does not show ($1, $2)" test -n "$2" -a ! -e $it/rank_$1 -a ! -e $it/rank_$2
ok_if "a PP group it does not draw (5)" test ! -e $it/pp_group_5
ok_if "a replica it does not draw (0)" test ! -e $it/model_group_0
find pptrace -type f -printf '%P\n' | sort >before

ppagg --base-folder . -j 2 -q --charts rank=$1,$2 --charts group=5 --charts replica=0
is "--charts rank=$1,$2 group=5 replica=0: exit 0" 0 $?
for r in $1 $2; do
	ok_if "rank $r: timeline and overlap, PNG and SVG" test -s $it/rank_$r/timeline.png -a \
		-s $it/rank_$r/timeline.svg -a -s $it/rank_$r/overlap.png -a -s $it/rank_$r/overlap.svg
	ok_if "rank $r: its CSVs" test -s $it/rank_$r/steps.csv -a -s $it/rank_$r/categories.csv
	ok_if "rank $r: linked from the details page" grep -q "rank_$r/timeline.svg" pptrace/iteration_15.html
done
ok_if "PP group 5: PNG and SVG" test -s $it/pp_group_5/timeline.png -a -s $it/pp_group_5/timeline.svg
ok_if "... linked" grep -q 'pp_group_5/timeline.svg' pptrace/iteration_15.html
ok_if "replica 0: PNG and SVG" test -s $it/model_group_0/timeline.png -a -s $it/model_group_0/timeline.svg
is "nothing an earlier run wrote is gone" "" "$(find pptrace -type f -printf '%P\n' | sort | comm -23 before -)"
ok_if "the pages link only to files that exist" report_links pptrace

# A run without --charts does not write them again and does not remove
# them; the pages no longer link them.
ppagg --base-folder . -j 2 -q
ok_if "again without --charts: rank $1's chart stays" test -s $it/rank_$1/timeline.png
ok_if "... unlinked" test -z "$(grep -o "rank_$1/" pptrace/iteration_15.html)"
ok_if "... the pages link only to files that exist" report_links pptrace

# --charts all: every chart's script and every CSV, the report's rendered.
ppagg --base-folder . -j 2 -q --out all --charts all
is "--charts all: exit 0" 0 $?
is "... every rank's scripts" 160 "$(ls all/iteration_15/rank_*/*.gp | wc -l)"
is "... every rank's CSVs" 160 "$(ls all/iteration_15/rank_*/*.csv | wc -l)"
is "... every PP group's script" 20 "$(ls all/iteration_15/pp_group_*/timeline.gp | wc -l)"
is "... every replica's script" 10 "$(ls all/iteration_15/model_group_*/timeline.gp | wc -l)"
is "... rendered: the ranks the report shows" "$(echo "$flagged" | wc -l)" \
	"$(ls all/iteration_15/rank_*/timeline.png | wc -l)"
ok_if "... the others render later on their own" sh -c "cd all/iteration_15/rank_$1 && gnuplot timeline.gp"
ok_if "... the pages link only to files that exist" report_links all

# The config key.
printf '[agg]\ncharts = rank=%s group=5\n' "$1" >c.ini
ppagg --base-folder . -j 2 -q --out cfg --config c.ini
is "agg.charts: exit 0" 0 $?
ok_if "agg.charts: rank $1 and group 5 drawn" test -s cfg/iteration_15/rank_$1/timeline.png -a \
	-s cfg/iteration_15/pp_group_5/timeline.png

# What the job lacks: a warning, the rest written.
ppagg --base-folder . -j 2 -q --out lack --charts rank=500 --charts group=77 --charts iteration=3 2>lack.err
is "names the job lacks: exit 0" 0 $?
ok_if "... one warning naming them" grep -q \
	"warning: --charts iteration=3, rank=500, group=77: not in the aggregated iterations or the topology" lack.err
# Bad values: usage errors.
for v in rank= rank=3-1 rank=x stage=1 "" ALL; do
	ppagg --base-folder . --out bad --charts "$v" 2>bad.err
	is "--charts '$v': exit 2" 2 $?
done
ok_if "... says what it expected" grep -q "expected all, rank=<list>, group=<list>" bad.err
printf '[agg]\ncharts = rank=1 bogus\n' >b.ini
ppagg --base-folder . --out bad --config b.ini 2>badc.err
is "a bad agg.charts: exit 2" 2 $?
ok_if "... names the key and value" grep -q "agg.charts = 'rank=1 bogus'" badc.err

# The link checker finds a link to nothing.
mkdir -p broken && printf '<a href="x/none.png">x</a><a href="#nowhere">y</a>' >broken/index.html
python3 "$PP_ROOT/tests/tools/check_report_links.py" broken >broken.out
is "the link checker fails on broken links" 1 $?
is "... naming both" 2 "$(wc -l <broken.out)"
done_testing
