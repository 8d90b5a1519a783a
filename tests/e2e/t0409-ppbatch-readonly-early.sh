#!/bin/bash
# A database ppbatch may open but not write (a read-only file; the same
# happens in a read-only folder or mount): ppbatch stops before any worker
# analyses a trace, with exit 3 and one error naming the database, and what
# was stored stays. Before, every trace was analysed only to fail storing
# ("cannot store: cannot delete kernels: attempt to write a readonly
# database"), the run ended with "cannot resolve ranks".
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/reliab/lib-reliab.sh"
if ! as_user_ready; then
	skip "every case runs ppbatch as user nobody" "$OTHERS_WHY"
	done_testing
	exit
fi
chmod 755 "$T"
"$PP_FAST_BIN/ppgen" --out tr --pp 2 --microbatches 4 --layers 2 --iterations 1,2 --quiet
chmod -R a+rwX tr
as_user ppbatch --input tr --folders iteration_1 -j 2 --quiet 2>err1.txt
is "the first run (iteration 1) exits 0" 0 $?
before=$(sql tr/pptrace.db "SELECT path || '|' || status FROM ranks ORDER BY path")
chmod 444 tr/pptrace.db
as_user ppbatch --input tr -j 2 >out.txt 2>err.txt
is "read-only database: exit 3" 3 $?
ok_if "the error names the database and says it cannot be written" \
	grep -qF "ppbatch: error: cannot write database 'tr/pptrace.db': " err.txt
is "no trace was sent to a worker" "" "$(grep -F '] ' err.txt)"
is "nothing is reported as failed" "" "$(grep -F 'failed' out.txt err.txt)"
ok_if "no sanitizer report" sanitizer_clean err.txt
# Before, SQLite opened the file read-only and left pptrace.db-wal and -shm
# with its mode 444: after the chmod back, the next run could not write.
is "no -wal or -shm file left behind" "" "$(ls tr/pptrace.db-wal tr/pptrace.db-shm 2>/dev/null)"
chmod 644 tr/pptrace.db
is "what was stored stays" "$before" \
	"$(sql tr/pptrace.db "SELECT path || '|' || status FROM ranks ORDER BY path")"
as_user ppbatch --input tr -j 2 --quiet 2>err3.txt
is "writable again: the run exits 0" 0 $?
is "writable again: both iterations are stored" "4|4" \
	"$(sql tr/pptrace.db "SELECT count(*), sum(status = 'ok') FROM ranks")"

# The default database in an input folder the user cannot write: the error
# says where the database was to go and how to put it elsewhere. Mode 555,
# not 755: without root, as_user is the folder's owner.
mkdir -p theirs
cp -r tr/iteration_1 theirs/
chmod 555 theirs
as_user ppbatch --input theirs -j 2 2>err4.txt
is "an input folder the user cannot write: exit 3" 3 $?
is "... the error names the database, the reason and --db" \
	"ppbatch: error: cannot open database 'theirs/pptrace.db': unable to open database file: cannot create a file in folder 'theirs': Permission denied (the default database is in the input folder; --db puts it elsewhere)" \
	"$(cat err4.txt)"
as_user ppbatch --input theirs --db tr/mine.db -j 2 --quiet
is "... with --db elsewhere: exit 0" 0 $?
# A database that is only to be opened, not created, is missing, whatever
# the folder's permissions (not "cannot create a file in folder").
as_user ppagg --db theirs/none.db --no-render >/dev/null 2>err5.txt
ok_if "a missing database ppagg would read: 'No such file or directory'" \
	grep -qF "cannot open database 'theirs/none.db': unable to open database file: No such file or directory" err5.txt
chmod 755 theirs # for the cleanup
done_testing
