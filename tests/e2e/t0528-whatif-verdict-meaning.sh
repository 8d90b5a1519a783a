#!/bin/bash
# The what-if section of the report says what its verdict means (docs/
# whatif.md §6), not only "Verdict: spread.", which leaves the reader to
# look the word up. Three ppgen jobs, one per verdict: a slow
# GPU (worker), a slow last stage (stage), a slow middle stage (spread).
source "$PP_ROOT/tests/lib.sh"
verdict() { # verdict NAME PPGEN-ARGS...: the verdict's line of the report
	local d=$1
	shift
	"$PP_FAST_BIN/ppgen" --out "$d" --layers 1 --kernels-per-layer 2 -q "$@" &&
		"$PP_FAST_BIN/ppbatch" --input "$d" -q && ppagg --base-folder "$d" --no-render -q &&
		grep -o 'Verdict: <b>[^<]*</b> ([^)]*)' "$d/pptrace/index.html"
}
is "a slow GPU: worker, and what it means" \
	"Verdict: <b>worker</b> (making the top 3 % of workers ideal removes at least half of the slowdown: M_W ≥ ½)" \
	"$(verdict w --pp 4 --dp 2 --straggler 3:1.5)"
is "a slow last stage: stage, and what it means" \
	"Verdict: <b>stage</b> (making the last pipeline stage ideal removes at least half of the slowdown: M_S ≥ ½)" \
	"$(verdict s --pp 4 --dp 2 --slow-stage last:1.6)"
is "a slow middle stage: spread, and what it means" \
	"Verdict: <b>spread</b> (neither the top 3 % of workers nor the last stage remove half of the slowdown: it is spread over the job)" \
	"$(verdict m --pp 4 --dp 4 --slow-stage 1:1.3)"
done_testing
