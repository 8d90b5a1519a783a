#!/bin/bash
# ppbatch's --input is the base folder, ppagg's --input one iteration folder
# (docs/ppagg.md). `ppagg --input BASE` -- the same words as the ppbatch run
# before it -- says BASE is a base folder and what to give instead, not
# "cannot open database './pptrace.db'" (BASE's parent); exit 3 (nothing
# was done). An iteration folder ppbatch was given on its own holds
# pptrace.db too, with its traces: the message then says to give it as
# --base-folder (not a base folder with 'DIR/iteration_<n>', not there).
source "$PP_ROOT/tests/lib.sh"
"$PP_FAST_BIN/ppgen" --out run --pp 2 --layers 1 --kernels-per-layer 2 -q &&
	"$PP_FAST_BIN/ppbatch" --input run -q
is "generated and stored" 0 $?
ppagg --input run --no-render -q 2>base.err
is "--input BASE: exit 3" 3 $?
is "... the message says what is wrong and what to give" \
	"ppagg: error: --input 'run' is a base folder (it holds pptrace.db), not an iteration folder: use --base-folder 'run', or --input 'run/iteration_<n>' (ppbatch's --input is the base folder; ppagg's is one iteration)" \
	"$(cat base.err)"
ppagg --input run/iteration_15 --no-render -q 2>iter.err
is "--input BASE/iteration_15: exit 0" 0 $?
# ppbatch given one iteration folder (docs/ppbatch.md) keeps the database
# there: that folder is no base folder, and it has no iteration_<n> in it.
"$PP_FAST_BIN/ppgen" --out one --pp 2 --layers 1 --kernels-per-layer 2 -q &&
	"$PP_FAST_BIN/ppbatch" --input one/iteration_15 -q
is "an iteration folder stored on its own" 0 $?
ppagg --input one/iteration_15 --no-render -q 2>own.err
is "--input of that folder: exit 3" 3 $?
is "... the message says to give it as the base folder" \
	"ppagg: error: --input 'one/iteration_15' holds its own pptrace.db (ppbatch was given this iteration folder): use --base-folder 'one/iteration_15' (ppagg's --input reads the database of the folder above, 'one/pptrace.db')" \
	"$(cat own.err)"
ppagg --base-folder one/iteration_15 --pp 2 --no-render -q
is "... which aggregates it: exit 0" 0 $?
mkdir empty
ppagg --input empty/iteration_1 --no-render -q 2>nodb.err
is "no database at all: exit 3" 3 $?
ok_if "... the database error as before" grep -q "^ppagg: error: cannot open database 'empty/pptrace.db': .* (run ppbatch first?)$" nodb.err
done_testing
