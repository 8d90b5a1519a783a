#!/bin/bash
# A coordinator killed (kill -9) while its worker holds two traces (the
# first waiting for the write lock, the second read meanwhile, see t0408):
# the worker stores both before it exits, as it stored the one trace in
# hand before the second-trace change (docs/ppbatch.md "How it runs",
# "Waiting for the database"; it dropped the second one when the first
# one's reply failed, until 2026-11-26). The next run stores the rest.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/e2e/lib-ppbatch.sh"
GEN="$PP_FAST_BIN/ppgen"

"$GEN" --out tree --pp 4 --microbatches 4 --layers 2 --quiet
ppbatch --input tree --db clean.db -j 1 --quiet
is "uncontended run" 0 $?
ppbatch --input tree --db gone.db -j 1 --quiet

worker_holds_two tree gone.db

{ kill -9 $coord && wait $coord; } 2>/dev/null
echo "COMMIT;" >&7
exec 7>&-
wait $holder
is "the lock holder committed" "0 " "$? $(cat holder.err)"
# The worker is no child of this shell: wait for it to be gone (bounded).
gone() { ! kill -0 "$worker" 2>/dev/null; }
for _ in $(seq 2400); do gone && break; sleep 0.05; done
ok_if "the worker exited" gone
is "both traces it held are stored" 2 \
	"$(sql gone.db "SELECT count(*) FROM traces WHERE run_id = (SELECT max(id) FROM runs)")"

ppbatch --input tree --db gone.db -j 1 --quiet
is "the next run completes" 0 $?
ok_if "the content equals the uncontended run's" cmp -s <(dump_db clean.db) <(dump_db gone.db)
is "integrity ok" ok "$(sql gone.db 'PRAGMA integrity_check')"
done_testing
