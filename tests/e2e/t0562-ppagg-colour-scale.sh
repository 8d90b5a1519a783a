#!/bin/bash
# The overview's colour scales are anchored (docs/ppagg.md, "Overview"): in
# the bubble, compute and idle maps each cell is coloured by its difference
# from its stage's median cell, on a scale of a least half width (compute
# and idle: the straggler threshold of the median compute), stated in the
# legend. On an even ppgen job (1-2 % of noise in compute, a bubble share
# that falls from the first stage to the last by design) no cell of those
# maps is dark; with a straggler its cell is the only dark one of the
# compute map. Dark: the cell's text is white.
source "$PP_ROOT/tests/lib.sh"
# The text colour of every cell of a map (16777215: white on a dark cell).
colours() { awk '/^\$cells << EOD/{f=1;next} /^EOD/{f=0} f && !/^#/{print $1, $2, $(NF-1)}' "$1"; }
dark() { colours "$1" | awk '$3 == 16777215 {print $1, $2}'; }
"$PP_FAST_BIN/ppgen" --out even --tp 2 --pp 4 --dp 4 --layers 2 --iterations 1 -q &&
	"$PP_FAST_BIN/ppgen" --out slow --tp 2 --pp 4 --dp 4 --layers 2 --iterations 1 \
		--straggler 21:1.3 -q &&
	"$PP_FAST_BIN/ppbatch" --input even -q && "$PP_FAST_BIN/ppbatch" --input slow -q
is "two jobs generated and stored" 0 $?
ppagg --base-folder even -q --no-render && ppagg --base-folder slow -q --no-render
is "ppagg: exit 0" 0 $?
e=$(ls -d even/pptrace/iteration_*/overview) s=$(ls -d slow/pptrace/iteration_*/overview)
spread=$(colours $e/compute.gp | wc -l)
is "even job: 16 cells" 16 "$spread"
ok_if "even job: the compute values differ (noise)" \
	test "$(awk '/^\$cells << EOD/{f=1;next} /^EOD/{f=0} f && !/^#/{print $3}' $e/compute.gp | sort -u | wc -l)" -gt 8
for m in bubble compute idle; do
	is "even job, $m map: no dark cell" "" "$(dark $e/$m.gp)"
done
ok_if "the legend states the scale" \
	grep -q "^set cblabel 'vs its stage''s median, ±[0-9.]* ms (at least ±[0-9.]*)'" $e/compute.gp
ok_if "the page states the rule" grep -q 'compared with the median cell of its stage' even/pptrace/index.html
# Rank 21: tp 1, dp 2, stage 2 (rank = tp + 2 (dp + 4 stage)): the cell
# of replica 2, stage 2.
is "straggler: its cell is the only dark one" "2 2" "$(dark $s/compute.gp)"
ok_if "... its hover names it" grep -q '"stage 2, replica 2\\nrank 21: forward+backward compute' $s/compute.gp
done_testing
