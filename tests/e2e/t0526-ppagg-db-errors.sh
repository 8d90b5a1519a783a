#!/bin/bash
# ppagg on a database it cannot use. "(run ppbatch first?)" fits a database
# that is not there, and only there: not a file that is not a database, a
# database of a newer pptrace or an SQLite file of something else, where
# running ppbatch is no answer. Exit 3 each.
source "$PP_ROOT/tests/lib.sh"
ppagg --db missing.db -q 2>missing.err
is "no database: exit 3" 3 $?
ok_if "... the message suggests ppbatch" grep -q "^ppagg: error: cannot open database 'missing.db': .* (run ppbatch first?)$" missing.err
echo hello >text.db
ppagg --db text.db -q 2>text.err
is "a text file: exit 3" 3 $?
ok_if "... the message names the file" grep -q "^ppagg: error: .*'text.db'.*not a database" text.err
ok_if "... and does not suggest ppbatch" sh -c "! grep -q 'run ppbatch first' text.err"
sqlite3 other.db "CREATE TABLE x(a)"
ppagg --db other.db -q 2>other.err
is "another program's SQLite file: exit 3" 3 $?
is "... the message says so, without the hint" \
	"ppagg: error: database 'other.db': not a pptrace database (user_version 0 but 1 tables)" "$(cat other.err)"
is "... and the file is left as it was" "x" "$(sqlite3 other.db .tables)"
"$PP_FAST_BIN/ppgen" --out j --pp 2 --layers 1 --kernels-per-layer 2 -q && "$PP_FAST_BIN/ppbatch" --input j -q
sqlite3 j/pptrace.db "PRAGMA user_version = 99"
ppagg --base-folder j -q --no-render 2>newer.err
is "a newer schema: exit 3" 3 $?
ok_if "... the message says to use a newer pptrace" grep -q "schema version 99 is newer than this pptrace" newer.err
ok_if "... and does not suggest ppbatch" sh -c "! grep -q 'run ppbatch first' newer.err"
done_testing
