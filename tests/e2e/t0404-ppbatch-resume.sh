#!/bin/bash
# ppbatch survives being killed: kill -9 of the coordinator or of a worker
# mid-run, and SIGINT, leave a database that passes integrity_check, and a
# re-run gives exactly what a clean run gives.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/e2e/lib-ppbatch.sh"
GEN="$PP_FAST_BIN/ppgen"

"$GEN" --out tree --pp 4 --dp 2 --microbatches 8 --layers 48 --iterations 1,2 --quiet
ppbatch --input tree --db clean.db -j 2 --quiet
is "clean run" 0 $?
dump_db clean.db >clean.txt
is "clean run stored 16 traces" 16 "$(sql clean.db "SELECT count(*) FROM ranks WHERE status = 'ok'")"

stored() { sqlite3 "$1" "SELECT count(*) FROM traces" 2>/dev/null || echo 0; }
# wait_stored DB N: until at least N traces are committed (10 s at most).
wait_stored() {
	for _ in $(seq 100); do
		[ "$(stored "$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
# wait_gone PID...: until the processes have exited.
wait_gone() {
	for p in "$@"; do
		while kill -0 "$p" 2>/dev/null; do sleep 0.1; done
	done
}

# 1. kill -9 of the coordinator.
ppbatch --input tree --db k9.db -j 2 --quiet &
coord=$!
# Kill at the first commit: on a fast, quiet machine a later moment can
# come after the last trace (traces are big enough to leave time).
wait_stored k9.db 1
workers=$(pgrep -P $coord | tr '\n' ' ')
kill -9 $coord
wait $coord 2>/dev/null
wait_gone $workers
n=$(stored k9.db)
ok_if "coordinator killed mid-run (stored $n of 16)" test "$n" -lt 16
is "after kill -9: integrity ok" ok "$(sql k9.db 'PRAGMA integrity_check')"
ppbatch --input tree --db k9.db -j 2 --quiet
is "re-run after kill -9 exits 0" 0 $?
ok_if "re-run after kill -9 equals a clean run" cmp -s clean.txt <(dump_db k9.db)
is "the re-run skipped what was stored" "$n" "$(sql k9.db "SELECT skipped FROM runs ORDER BY id DESC LIMIT 1")"

# 2. kill -9 of one worker: the task is retried, the run completes.
ppbatch --input tree --db w9.db -j 2 --quiet &
coord=$!
wait_stored w9.db 1
victim=$(pgrep -P $coord | head -1)
kill -9 "$victim"
wait $coord
is "worker killed: the run still exits 0" 0 $?
is "worker killed: integrity ok" ok "$(sql w9.db 'PRAGMA integrity_check')"
ok_if "worker killed: content equals a clean run" cmp -s clean.txt <(dump_db w9.db)

# 3. SIGINT: exit 130, consistent, resumable.
ppbatch --input tree --db int.db -j 2 --quiet &
coord=$!
wait_stored int.db 1
workers=$(pgrep -P $coord | tr '\n' ' ')
kill -INT $coord
wait $coord
is "SIGINT: exit 130" 130 $?
wait_gone $workers
is "SIGINT: integrity ok" ok "$(sql int.db 'PRAGMA integrity_check')"
is "SIGINT: the run is marked interrupted" interrupted "$(sql int.db "SELECT state FROM runs")"
ppbatch --input tree --db int.db -j 2 --quiet
is "SIGINT: re-run exits 0" 0 $?
ok_if "SIGINT: re-run equals a clean run" cmp -s clean.txt <(dump_db int.db)

# 4. The same trace's worker killed twice: retried once, then failed with
# the signal's name (a retried task is dispatched first, to the new worker).
ppbatch --input tree --db twice.db -j 1 --quiet &
coord=$!
for round in 1 2; do
	for _ in $(seq 100); do
		w=$(pgrep -P $coord | head -1)
		[ -n "$w" ] && [ "$w" != "${last:-}" ] && break
		sleep 0.05
	done
	last=$w
	kill -9 "$w" 2>/dev/null
done
wait $coord
is "killed twice: exit 1" 1 $?
is "killed twice: recorded with the signal's name" "failed|worker killed by signal SIGKILL (twice)" \
	"$(sql twice.db "SELECT status, error FROM ranks WHERE status = 'failed'")"
is "killed twice: the other traces are ok" 15 "$(sql twice.db "SELECT count(*) FROM ranks WHERE status = 'ok'")"
ppbatch --input tree --db twice.db -j 2 --quiet
is "killed twice: a re-run retries it" 0 $?
ok_if "killed twice: then equals a clean run" cmp -s clean.txt <(dump_db twice.db)
done_testing
