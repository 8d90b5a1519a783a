#!/bin/bash
# ppsim: invalid inputs and dependency cycles exit 2 with a clear message.
source "$PP_ROOT/tests/lib.sh"

fails() { # fails "desc" "message part" args...
	local desc=$1 msg=$2; shift 2
	ppsim "$@" --no-visualization >out.txt 2>err.txt
	local rc=$?
	is "$desc: exit 2" 2 "$rc"
	ok_if "$desc: message" grep -q -- "$msg" err.txt
}
fails "stages not a multiple of devices" "must be a multiple of devices" --strategy interleave --devices 4 --stages 6 --microbatches 8
fails "unknown strategy" "unknown strategy 'gpipe'" --strategy gpipe --devices 4 --microbatches 8
fails "unknown warm-up rule" "unknown warm-up rule '2023' (core or legacy)" --strategy interleave --devices 2 --stages 4 --microbatches 2 --warmup 2023
fails "no micro-batches" "micro-batches" --devices 4
fails "negative time" "expected numbers >= 0" --devices 4 --microbatches 8 --forward=-1
fails "Megatron interleave rule" "Megatron needs micro-batches mod group size" --strategy interleave --devices 4 --stages 12 --microbatches 5
fails "reference deadlock is a cycle naming device and op" "dependency cycle (deadlock): device [0-9]* cannot run [FB](mb" \
	--strategy interleave --devices 4 --stages 12 --microbatches 5 --model reference
fails "dualpipe odd m" "even number of micro-batches" --strategy dualpipe --devices 4 --microbatches 9
fails "reference 1F1B with m < p-1" "needs micro-batches >= devices - 1" --devices 8 --microbatches 4 --model reference
fails "unknown option" "usage:" --devices 4 --microbatches 8 --frobnicate
# Each time is finite, their sum is not: before, a table of -nan and exit 0.
fails "times whose sum overflows" "the op times are too large" --devices 4 --microbatches 8 --forward 1e308
is "... and prints no table" "" "$(cat out.txt)"
ppsim --devices 8 --microbatches 4 --no-visualization >ok.txt
is "megatron clamps the warmup instead" "makespan: 33" "$(grep '^makespan' ok.txt)"
ppsim --help >help.txt
is "--help exits 0" 0 "$?"
ok_if "--help lists seed spellings" grep -q -- "--num-stages" help.txt
# --help lists the exit statuses ppsim has, not every command's: ppsim
# never returns 1 or a 130 that "resumes".
is "--help: its own exit statuses" "0|2|3" \
	"$(sed -n '/^exit status:/,/^$/p' help.txt | awk '$1 ~ /^[0-9]+$/ { print $1 }' | paste -sd'|')"
done_testing
