#!/bin/bash
# Arguments ppbatch has no use for are usage errors, not silently dropped:
# a second folder after --input (before, 'ppbatch --input a b' analysed a
# and exited 0 without a word about b), a file after an op trace,
# --inspect with --merge (before, --merge was ignored), --pp-size outside
# --format pp-timer and --input with --merge.
source "$PP_ROOT/tests/lib.sh"
"$PP_FAST_BIN/ppgen" --out a --pp 2 --microbatches 4 --layers 2 --iterations 1 --quiet
"$PP_FAST_BIN/ppgen" --out b --pp 2 --microbatches 4 --layers 2 --iterations 1 --quiet

ppbatch --input a b -j 2 >out.txt 2>err.txt
is "a second folder: exit 2" 2 $?
ok_if "... names it" grep -qF "ppbatch: error: unexpected argument 'b' (--input takes one folder" err.txt
ok_if "... and nothing was analysed (no database)" test ! -e a/pptrace.db -a ! -e b/pptrace.db

ppbatch --format optrace --input a/.truth/optrace.csv extra.csv --db op.db 2>err.txt
is "a file after an op trace: exit 2" 2 $?
ok_if "... names it" grep -qF "unexpected argument 'extra.csv'" err.txt
ok_if "... and nothing was imported" test ! -e op.db

ppbatch --inspect --merge --db m.db a/iteration_1/rank_0000_iter_1.pt.trace.json >out.txt 2>err.txt
is "--inspect with --merge: exit 2" 2 $?
ok_if "... says they exclude each other" grep -qF "ppbatch: error: --inspect and --merge exclude each other" err.txt

# Options of another mode: before, silently ignored.
ppbatch --input a --pp-size 2 -j 2 2>err.txt
is "--pp-size without --format pp-timer: exit 2" 2 $?
ok_if "... says where it belongs" grep -qF "ppbatch: error: --pp-size and --vpp-size go with --format pp-timer" err.txt
ppbatch --merge --db m.db --input a a/pptrace.db 2>err.txt
is "--merge with --input: exit 2" 2 $?
ok_if "... says what --merge takes" grep -qF "ppbatch: error: --merge takes the shard databases as arguments, not --input" err.txt
ok_if "... and nothing was created" test ! -e m.db -a ! -e a/pptrace.db

# What takes several values still does.
ppbatch --input a --folders iteration_1 iteration_2 -j 2 --quiet
is "--folders with two globs: exit 0" 0 $?
is "... both ranks stored" 2 "$(sql a/pptrace.db "SELECT count(*) FROM ranks WHERE status = 'ok'")"
ppbatch --inspect a/iteration_1/rank_0000_iter_1.pt.trace.json a/iteration_1/rank_0001_iter_1.pt.trace.json >out.txt
is "--inspect with two files: exit 0" 0 $?
done_testing
