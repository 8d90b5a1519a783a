#!/bin/bash
# A worker that exits with a status (not a signal) while it holds its first
# task — out of memory here; a sanitizer's report, which turns a SIGBUS or
# SIGSEGV into exit 1, is the same case — loses that task, which is retried
# once and then recorded as failed; the run goes on and the other traces are
# recorded. Only a worker that exits before it has started (before its
# "ready" line, docs/ppbatch.md) stops the run. Before the ready line, the
# first task's loss stopped the whole run with exit 3 and nothing recorded.
# Optimised build ($PP_FAST_BIN): sanitizers reserve terabytes of address
# space, so `ulimit -v` cannot apply to them.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/reliab/lib-reliab.sh"
if [ "${PP_VALGRIND:-0}" = 1 ]; then
	skip "worker exit" "valgrind cannot run under a small ulimit -v"
	done_testing; exit
fi
make_dataset "$T/base" 4 --layers 2 --microbatches 4
ntraces=$(find "$T/base" -name '*.json*' | wc -l)

# A worker whose task input fails (a directory here; out of memory in
# getline() alike) exits 3 with the reason: it looked like the clean end of
# its tasks (exit 0) before.
ppbatch --worker --db "$T/rd.db" </ >/dev/null 2>"$T/rd.err"
is "a worker whose task input cannot be read exits 3" 3 $?
ok_if "... and says why" grep -q "cannot read the next task" "$T/rd.err"

# The smallest address-space limit (in 256 KiB steps) under which a worker
# starts (writes "ready" on an empty task list) and under which the
# coordinator alone runs: just above both, every worker starts and no
# trace fits (each needs a window of at least 1 MiB more).
probe() { # probe KIB CMD...: does CMD succeed (stdout: $T/probe.out) under ulimit -v KIB?
	local kb=$1
	shift
	(ulimit -v "$kb" && exec "$@" </dev/null >"$T/probe.out" 2>/dev/null)
}
worker_kb=
coord_kb=
mkdir -p "$T/empty"
for kb in $(seq 4096 256 65536); do
	[ -z "$worker_kb" ] && probe "$kb" "$FAST/ppbatch" --worker --db "$T/probe.db" &&
		grep -qx ready "$T/probe.out" && worker_kb=$kb
	[ -z "$coord_kb" ] && probe "$kb" "$FAST/ppbatch" --input "$T/empty" --db "$T/probe2.db" &&
		coord_kb=$kb
	[ -n "$worker_kb" ] && [ -n "$coord_kb" ] && break
done
ok_if "a worker starts under some limit up to 64 MiB (got '$worker_kb' KiB)" test -n "$worker_kb"
ok_if "the coordinator runs under some limit up to 64 MiB (got '$coord_kb' KiB)" test -n "$coord_kb"
# Without both limits the run below would be under a made-up one (an empty
# operand is 0 in $((...))): its results would say nothing.
if [ -z "$worker_kb" ] || [ -z "$coord_kb" ]; then
	done_testing; exit
fi
limit=$(((worker_kb > coord_kb ? worker_kb : coord_kb) + 768))
echo "# worker starts at $worker_kb KiB, the coordinator at $coord_kb KiB; ulimit -v $limit KiB"

(ulimit -v "$limit" && exec "$FAST/ppbatch" --input "$T/base" --db "$T/lim.db" -j 2 --quiet) 2>"$T/err"
rc=$?
sed 's/^/# /' "$T/err" | sort | uniq -c | head -5
is "every worker out of memory on its first task: exit 1 (traces failed), not 3" 1 "$rc"
is "every trace is recorded" "$ntraces" "$(sql "$T/lim.db" "SELECT count(*) FROM ranks")"
is "... as failed by its worker's exit, twice" "$ntraces" \
	"$(sql "$T/lim.db" "SELECT count(*) FROM ranks WHERE status = 'failed'
	  AND error GLOB 'worker exited with status [1-9]* (twice)'")"
ok_if "the reason is on stderr" grep -q "out of memory" "$T/err"
is "integrity_check" ok "$(db_integrity "$T/lim.db")"

# The same tree without the limit: the failures were for lack of memory, so a
# re-run retries them (failed by a crash, not by their input) and stores all.
"$FAST/ppbatch" --input "$T/base" --db "$T/lim.db" -j 2 --quiet 2>"$T/err2"
is "re-run without the limit exits 0" 0 $?
is "... and every trace is ok" "$ntraces" \
	"$(sql "$T/lim.db" "SELECT count(*) FROM ranks WHERE status = 'ok'")"
done_testing
