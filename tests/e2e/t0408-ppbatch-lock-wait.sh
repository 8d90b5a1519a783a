#!/bin/bash
# A worker that finds the database's write lock taken by another process
# does not wait idle: it asks for its next trace (WORKER_MORE, docs/ppbatch.md
# "How it runs", "Waiting for the database") and reads it while the first
# one waits to be stored in the background. Once the lock is free,
# everything is stored exactly as by an uncontended run.
#
# The lock is held by the sqlite3 shell inside BEGIN IMMEDIATE. The test
# waits for events, each bounded (a hang is a failure, not a timing
# assumption): the lock seen taken, then the one worker holding two traces
# open at once, which a worker that waits for the lock never does.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/e2e/lib-ppbatch.sh"
GEN="$PP_FAST_BIN/ppgen"

"$GEN" --out tree --pp 4 --microbatches 4 --layers 2 --quiet
ppbatch --input tree --db clean.db -j 1 --quiet
is "uncontended run" 0 $?
dump_db clean.db >clean.txt
is "uncontended run stored 4 traces" 4 "$(sql clean.db "SELECT count(*) FROM ranks WHERE status = 'ok'")"
ppbatch --input tree --db held.db -j 1 --quiet

# The run starts (its runs row written) and its worker stops on its first
# trace (PPTRACE_TEST_WORKER_STOP, see t0404); then the lock is taken and
# the worker continued.
PPTRACE_TEST_WORKER_STOP='*/rank_0000_*' ppbatch --input tree --db held.db -j 1 --force --quiet &
coord=$!
worker=$(wait_stopped $coord 1)
worker=${worker// /}
# lock_taken: another connection cannot begin a write transaction now.
lock_taken() {
	! sqlite3 held.db "BEGIN IMMEDIATE; ROLLBACK;" 2>/dev/null
}
mkfifo holder.in
sqlite3 held.db <holder.in >/dev/null 2>holder.err &
holder=$!
exec 7>holder.in
echo "BEGIN IMMEDIATE; DELETE FROM runs WHERE 0;" >&7
for _ in $(seq 2400); do lock_taken && break; sleep 0.05; done
ok_if "the sqlite3 shell holds the write lock" lock_taken
kill -CONT $worker

# open_traces PID: how many trace files PID has open.
open_traces() {
	local n=0 f
	for f in /proc/"$1"/fd/*; do
		case $(readlink "$f" 2>/dev/null) in *.pt.trace.json) n=$((n + 1)) ;; esac
	done
	echo $n
}
two=no
for _ in $(seq 2400); do
	[ "$(open_traces "$worker")" -ge 2 ] && { two=yes; break; }
	kill -0 $worker 2>/dev/null || break
	sleep 0.05
done
is "while the lock is held, the worker reads its second trace" yes $two
is "nothing of this run is stored while the lock is held" 0 \
	"$(sql held.db "SELECT count(*) FROM traces WHERE run_id = (SELECT max(id) FROM runs)")"

echo "COMMIT;" >&7
exec 7>&-
wait $holder
is "the lock holder committed" "0 " "$? $(cat holder.err)"
wait $coord
is "the run exits 0 once the lock is free" 0 $?
is "every trace stored" 4 "$(sql held.db "SELECT count(*) FROM ranks WHERE status = 'ok'")"
ok_if "the content equals the uncontended run's" cmp -s clean.txt <(dump_db held.db)
is "integrity ok" ok "$(sql held.db 'PRAGMA integrity_check')"
done_testing
