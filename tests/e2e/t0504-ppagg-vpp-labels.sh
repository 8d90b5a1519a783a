#!/bin/bash
# docs/semantics.md §6: with VPP known (agg.vpp) and a topology, ppagg labels every fwd
# and bwd step with its model chunk and micro-batch in Megatron's
# interleaved order: per-rank steps.csv columns chunk,microbatch and the
# overlap chart's hover text. ppgen -> ppbatch -> ppagg, pp 2 x vpp 2.
# (tests/unit/gen/test_gen.c checks the labels against ppgen's schedule builder
# for many shapes.)
source "$PP_ROOT/tests/lib.sh"
"$PP_FAST_BIN/ppgen" --out g --pp 2 --vpp 2 --microbatches 4 --layers 2 --kernels-per-layer 2 -q
"$PP_FAST_BIN/ppbatch" --input g --quiet
is "ppbatch ok" 0 "$?"
printf '[agg]\nvpp = 2\n' >vpp.ini
ppagg --base-folder g --config vpp.ini --no-render --quiet
is "ppagg ok" 0 "$?"
csv=g/pptrace/iteration_15/rank_1/steps.csv
is "steps.csv has the label columns" "chunk,microbatch" "$(head -1 "$csv" | cut -d, -f14,15)"
is "fwd: chunk and micro-batch in program order" \
	"0:0 0:1 1:0 1:1 0:2 0:3 1:2 1:3" \
	"$(awk -F, '$1 == "fwd" { printf "%s%s:%s", s, $14, $15; s = " " }' "$csv")"
is "bwd: chunks in reverse" \
	"1:0 1:1 0:0 0:1 1:2 1:3 0:2 0:3" \
	"$(awk -F, '$1 == "bwd" { printf "%s%s:%s", s, $14, $15; s = " " }' "$csv")"
is "other phases unlabelled" "" \
	"$(awk -F, 'NR > 1 && $1 != "fwd" && $1 != "bwd" && ($14 != "" || $15 != "")' "$csv")"
# The hover text is composed by gnuplot from the script's columns: render
# the SVG to read it.
svg_of() {
	(cd "$(dirname "$1")" && gnuplot -e 'pp_png=0' "$(basename "$1")") && echo "${1%.gp}.svg"
}
have_gnuplot=$(command -v gnuplot)
if [ -n "$have_gnuplot" ]; then
	ok_if "overlap chart hover names chunk and micro-batch" \
		grep -q 'rank 1 fwd step 2: chunk 1, mbs 0' "$(svg_of g/pptrace/iteration_15/rank_1/overlap.gp)"
else
	skip "overlap chart hover names chunk and micro-batch" "gnuplot is not installed"
fi
# Without agg.vpp (the default 1) the schedule's VPP 2 wins (docs/ppagg.md
# "VPP"): the same labels, and a warning.
ppagg --base-folder g --no-render --quiet 2>default.err
is "default agg.vpp on a vpp-2 job: the schedule's labels" "0:0 0:1 1:0 1:1 0:2 0:3 1:2 1:3" \
	"$(awk -F, '$1 == "fwd" { printf "%s%s:%s", s, $14, $15; s = " " }' "$csv")"
ok_if "... and a warning says so" grep -q "agg.vpp = 1 (not set: the default) overridden" default.err
# A 1F1B job: chunk 0, and the micro-batch is the seq.
"$PP_FAST_BIN/ppgen" --out g1 --pp 2 --microbatches 8 --layers 2 --kernels-per-layer 2 -q &&
	"$PP_FAST_BIN/ppbatch" --input g1 --quiet && ppagg --base-folder g1 --no-render --quiet
is "1F1B job generated and aggregated" 0 "$?"
csv=g1/pptrace/iteration_15/rank_1/steps.csv
is "vpp 1: chunk 0, micro-batch = seq" "0:0 0:1 0:2 0:3 0:4 0:5 0:6 0:7" \
	"$(awk -F, '$1 == "fwd" { printf "%s%s:%s", s, $14, $15; s = " " }' "$csv")"
if [ -n "$have_gnuplot" ]; then
	ok_if "vpp 1: hover says mbs" grep -q 'rank 1 fwd mbs 3' "$(svg_of g1/pptrace/iteration_15/rank_1/overlap.gp)"
else
	skip "vpp 1: hover says mbs" "gnuplot is not installed"
fi
done_testing
