#!/bin/bash
# A walk that finds no trace file (an empty or wrong --input, --folders or
# --pattern that match nothing) says so on stderr, naming the folder and the
# globs; before, it printed "0 files: 0 ok, ..." like a finished run. The
# exit status stays 0 (nothing failed), --quiet stays quiet, and a shard
# left empty by --shard (its tree has traces) gets no warning.
source "$PP_ROOT/tests/lib.sh"
mkdir empty
ppbatch --input empty >out.txt 2>err.txt
is "empty folder: exit 0" 0 $?
is "empty folder: the warning names the folder and the default names" \
	"ppbatch: warning: found no trace file in 'empty' or its folders (file names *.json, *.json.gz, *.pt.trace.json*): nothing to analyse" \
	"$(cat err.txt)"
ok_if "empty folder: the summary still says 0 files" grep -q "^ppbatch: 0 files: " out.txt

"$PP_FAST_BIN/ppgen" --out tr --pp 2 --microbatches 4 --layers 2 --iterations 3 --quiet
ppbatch --input tr --folders 'iter_*' 'it_3' -j 2 2>err.txt >/dev/null
is "--folders matching nothing: exit 0" 0 $?
is "--folders matching nothing: the warning names the globs" \
	"ppbatch: warning: found no trace file in the folders of 'tr' matching 'iter_*', 'it_3' (file names *.json, *.json.gz, *.pt.trace.json*): nothing to analyse" \
	"$(cat err.txt)"
ppbatch --input tr --pattern '*.trace.json.gz' -j 2 2>err.txt >/dev/null
ok_if "--pattern matching nothing: the warning names the pattern" \
	grep -qF "(file names *.trace.json.gz): nothing to analyse" err.txt
ppbatch --input empty --quiet >out.txt 2>err.txt
rc=$?
is "--quiet: exit 0, nothing printed" "0||" "$rc|$(cat out.txt)|$(cat err.txt)"
ppbatch --input tr --shard 7/8 --db shard7.db -j 2 >/dev/null 2>err.txt
rc=$?
is "an empty shard of a tree with traces: exit 0, no warning" "0|" "$rc|$(cat err.txt)"
ppbatch --input tr -j 2 --quiet
is "the tree itself: exit 0" 0 $?
is "the tree itself: both traces stored" 2 "$(sql tr/pptrace.db "SELECT count(*) FROM ranks WHERE status = 'ok'")"
done_testing
