#!/bin/bash
# A worker that finds the database's write lock taken by another process
# does not wait idle: it asks for its next trace (WORKER_MORE, docs/ppbatch.md
# "How it runs", "Waiting for the database") and reads it while the first
# one waits to be stored in the background. Once the lock is free,
# everything is stored exactly as by an uncontended run.
#
# The lock is held by the sqlite3 shell inside BEGIN IMMEDIATE
# (worker_holds_two in lib-ppbatch.sh).
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
# trace; then the lock is taken and the worker continued.
worker_holds_two tree held.db
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
