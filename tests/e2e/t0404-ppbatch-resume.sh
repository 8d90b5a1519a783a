#!/bin/bash
# ppbatch survives being killed: kill -9 of the coordinator or of a worker
# mid-run, and SIGINT, leave a database that passes integrity_check, and a
# re-run gives exactly what a clean run gives.
#
# No step races the run: workers are told (PPTRACE_TEST_WORKER_STOP, a glob
# over trace paths) to stop themselves with SIGSTOP when given a matching
# trace, before reading it. The test waits for that state (the event), so a
# kill always lands on a worker that holds a known, unfinished task.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/e2e/lib-ppbatch.sh"
GEN="$PP_FAST_BIN/ppgen"

"$GEN" --out tree --pp 4 --dp 2 --microbatches 8 --layers 48 --iterations 1,2 --quiet
ppbatch --input tree --db clean.db -j 2 --quiet
is "clean run" 0 $?
dump_db clean.db >clean.txt
is "clean run stored 16 traces" 16 "$(sql clean.db "SELECT count(*) FROM ranks WHERE status = 'ok'")"

# stopped COORD: the workers of COORD that stopped themselves (state T).
stopped() {
	local p
	for p in $(pgrep -P "$1"); do
		[ "$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null)" = T ] && echo "$p"
	done
}
# wait_stopped COORD N [OLD]: until N workers of COORD are stopped, none of
# them OLD (a worker killed before); prints them. Fails after 120 s (a hang,
# not a timing assumption: the stop is certain to come).
wait_stopped() {
	local got
	for _ in $(seq 2400); do
		got=$(stopped "$1" | grep -vx -- "${3:-none}" | tr '\n' ' ')
		[ "$(wc -w <<<"$got")" -ge "$2" ] && { echo "$got"; return 0; }
		sleep 0.05
	done
	echo "no $2 stopped worker(s) of $1" >&2
	return 1
}
# pending_term PID: SIGTERM (15) is pending for the stopped process PID.
pending_term() {
	local m
	m=$(awk '/^ShdPnd:|^SigPnd:/ { print $2 }' "/proc/$1/status" 2>/dev/null | tr '\n' ' ')
	for x in $m; do (((0x$x >> 14) & 1)) && return 0; done
	return 1
}
# wait_gone PID...: until the processes have exited.
wait_gone() {
	for p in "$@"; do
		while kill -0 "$p" 2>/dev/null; do sleep 0.05; done
	done
}

# 1. kill -9 of the coordinator: both workers hold an iteration_2 trace, so
# exactly iteration 1 is stored; continued, each finishes its trace, then
# sees its coordinator gone and exits.
PPTRACE_TEST_WORKER_STOP='*/iteration_2/*' ppbatch --input tree --db k9.db -j 2 --quiet &
coord=$!
workers=$(wait_stopped $coord 2)
kill -9 $coord
wait $coord 2>/dev/null
kill -CONT $workers
wait_gone $workers
is "coordinator killed mid-run: iteration 1 and the two traces in flight stored" \
	"8 2" "$(sql k9.db "SELECT count(*) FILTER (WHERE iteration = 1), count(*) FILTER (WHERE iteration = 2) FROM traces" | tr '|' ' ')"
is "after kill -9: integrity ok" ok "$(sql k9.db 'PRAGMA integrity_check')"
ppbatch --input tree --db k9.db -j 2 --quiet
is "re-run after kill -9 exits 0" 0 $?
ok_if "re-run after kill -9 equals a clean run" cmp -s clean.txt <(dump_db k9.db)
is "the re-run skipped what was stored" 10 "$(sql k9.db "SELECT skipped FROM runs ORDER BY id DESC LIMIT 1")"

# 2. kill -9 of one worker holding a trace: the trace is retried (by a new
# worker, which stops on it too and is continued), the run completes.
PPTRACE_TEST_WORKER_STOP='*/iteration_1/rank_0003_*' ppbatch --input tree --db w9.db -j 2 --quiet &
coord=$!
victim=$(wait_stopped $coord 1)
kill -9 $victim
retry=$(wait_stopped $coord 1 "$victim")
kill -CONT $retry
wait $coord
is "worker killed: the run still exits 0" 0 $?
is "worker killed: integrity ok" ok "$(sql w9.db 'PRAGMA integrity_check')"
ok_if "worker killed: content equals a clean run" cmp -s clean.txt <(dump_db w9.db)

# 3. SIGINT while both workers hold a trace: the coordinator terminates
# them (SIGTERM, pending while they are stopped, delivered when continued);
# exit 130, consistent, resumable.
PPTRACE_TEST_WORKER_STOP='*/iteration_2/*' ppbatch --input tree --db int.db -j 2 --quiet >int.out &
coord=$!
workers=$(wait_stopped $coord 2)
kill -INT $coord
for w in $workers; do
	while ! pending_term "$w"; do sleep 0.05; done
done
kill -CONT $workers
wait $coord
is "SIGINT: exit 130" 130 $?
ok_if "SIGINT: the summary says how to resume" \
	grep -qF " — interrupted: the same command again resumes" int.out
wait_gone $workers
is "SIGINT: integrity ok" ok "$(sql int.db 'PRAGMA integrity_check')"
is "SIGINT: the run is marked interrupted" interrupted "$(sql int.db "SELECT state FROM runs")"
is "SIGINT: iteration 1 stored, nothing of iteration 2" "8|0" \
	"$(sql int.db "SELECT count(*) FILTER (WHERE iteration = 1), count(*) FILTER (WHERE iteration = 2) FROM traces")"
ppbatch --input tree --db int.db -j 2 --quiet
is "SIGINT: re-run exits 0" 0 $?
ok_if "SIGINT: re-run equals a clean run" cmp -s clean.txt <(dump_db int.db)

# 4. The same trace's worker killed twice: retried once (a retried task is
# dispatched first, to the new worker), then failed with the signal's name.
PPTRACE_TEST_WORKER_STOP='*/iteration_1/rank_0003_*' ppbatch --input tree --db twice.db -j 1 --quiet &
coord=$!
first=$(wait_stopped $coord 1)
kill -9 $first
second=$(wait_stopped $coord 1 "$first")
kill -9 $second
wait $coord
is "killed twice: exit 1" 1 $?
is "killed twice: recorded with the signal's name" \
	"iteration_1|3|failed|worker killed by signal SIGKILL (twice)" \
	"$(sql twice.db "SELECT folder, rank, status, error FROM ranks WHERE status = 'failed'")"
is "killed twice: the other traces are ok" 15 "$(sql twice.db "SELECT count(*) FROM ranks WHERE status = 'ok'")"
ppbatch --input tree --db twice.db -j 2 --quiet
is "killed twice: a re-run retries it" 0 $?
ok_if "killed twice: then equals a clean run" cmp -s clean.txt <(dump_db twice.db)
done_testing
