#!/bin/bash
# A trace that is truncated, removed, garbled or extended while ppbatch reads
# it: a specific error for that file (or a correct result when the change
# came after the read), the other file is processed, nothing crashes.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/reliab/lib-reliab.sh"

if pp_unimplemented ppbatch --input "$T/none"; then
	skip "files changing while read" "ppbatch batch mode is not implemented yet"
	done_testing; exit
fi
# A file cut while a window of it is mapped ends its worker with SIGBUS
# (docs/reader.md), which ppbatch retries; ASan would catch the signal,
# print a report and exit 1 instead: let it through as it is without ASan.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_sigbus=0"
# A large valid trace (rank 0, read first with -j 1) and a small one (rank 1).
python3 - "$T/proto" <<'PY'
import json, os, sys
d = sys.argv[1]; os.makedirs(d)
ev = ['{"ph":"X","cat":"python_function","name":"megatron/core/pipeline_parallel/schedules.py(412): forward_step","pid":1,"tid":1,"ts":0,"dur":100000000}']
for i in range(400000):
    ev.append('{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":%d,"dur":1,"args":{"correlation":%d}}' % (10 + i * 200, i + 1))
    ev.append('{"ph":"X","cat":"kernel","name":"sm80_gemm_%d","pid":0,"tid":7,"ts":%d,"dur":50,"args":{"correlation":%d,"stream":7,"device":0}}' % (i % 50, 20 + i * 200, i + 1))
for r, evs in ((0, ev), (1, ev[:3])):
    with open(os.path.join(d, "rank_%04d_iter_1.pt.trace.json" % r), "w") as f:
        f.write('{"distributedInfo":{"rank":%d},"traceEvents":[\n%s\n]}\n' % (r, ",\n".join(evs)))
PY
echo "# large trace: $(stat -c %s "$T/proto/rank_0000_iter_1.pt.trace.json") bytes"
for mode in truncate unlink garble grow; do
	rm -rf "$T/base" "$T/$mode.db"
	mkdir -p "$T/base/iteration_1"
	cp "$T"/proto/* "$T/base/iteration_1/"
	setsid ppbatch --input "$T/base" --db "$T/$mode.db" -j 1 --quiet 2>"$T/err" &
	pid=$!
	what=$(python3 "$RELIAB/mutate_on_open.py" \
		"$T/base/iteration_1/rank_0000_iter_1.pt.trace.json" "$mode" "$pid" 120)
	wait "$pid"
	rc=$?
	echo "# $mode: $what; ppbatch exit $rc"
	ok_if "$mode: ppbatch exits 0 or 1 (got $rc)" test "$rc" -le 1
	ok_if "$mode: no sanitizer report" sanitizer_clean "$T/err"
	r0=$(sqlite3 -separator ' | ' "$T/$mode.db" "SELECT status, error FROM ranks WHERE rank = 0" 2>&1)
	echo "# $mode: rank 0: $r0"
	case $r0 in
	ok*) ok_if "$mode: rank 0 ok" true ;;
	"failed | "?*) ok_if "$mode: rank 0 failed with an error" true ;;
	*) ok_if "$mode: rank 0 ok, or failed with an error (got '$r0')" false ;;
	esac
	is "$mode: rank 1 analysed" ok "$(sql "$T/$mode.db" "SELECT status FROM ranks WHERE rank = 1" 2>&1)"
	is "$mode: integrity_check" ok "$(db_integrity "$T/$mode.db")"
done
done_testing
