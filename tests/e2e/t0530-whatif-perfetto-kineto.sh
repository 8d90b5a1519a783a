#!/bin/bash
# whatif/timeline.json of a Kineto job is valid trace-event JSON (docs/
# ppagg.md "What if, in the report"; tests/tools/check_trace_events.py: the
# JSON parses, ts and dur are numbers >= 0, ...), also when a simulated
# ideal op starts before the measured step's first op: every time is
# counted from the earliest op written, measured or ideal, never written as
# a negative time such as "ts":-11.-854 (not JSON: Perfetto and
# chrome://tracing refuse the whole file).
source "$PP_ROOT/tests/lib.sh"
"$PP_FAST_BIN/ppgen" --out j --tp 2 --cp 2 --pp 4 --dp 4 --straggler 37:1.3 --layers 1 \
	--kernels-per-layer 2 -q && "$PP_FAST_BIN/ppbatch" --input j -q &&
	ppagg --base-folder j --no-render -q
is "generated, stored and aggregated" 0 $?
f=j/pptrace/whatif/timeline.json
ok_if "the Perfetto file is written" test -s $f
python3 "$PP_ROOT/tests/tools/check_trace_events.py" $f >chk.out 2>&1
is "... valid JSON and trace events" 0 $?
ok_if "... no negative time" sh -c "! grep -q '\"ts\":-' $f"
ok_if "... the earliest event starts at 0" grep -q '"ts":0.000,' $f
done_testing
