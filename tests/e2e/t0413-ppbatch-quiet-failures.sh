#!/bin/bash
# --quiet prints nothing but warnings and errors, and a trace that failed is
# an error: each failure is an error line (file, byte offset, what was
# expected), a re-run that skips traces failed earlier says so, and a rank
# conflict keeps its warning. Before, both runs
# printed nothing at all and exited 1 (pptrace-cron, which runs ppbatch
# with --quiet, logged no reason).
source "$PP_ROOT/tests/lib.sh"
"$PP_FAST_BIN/ppgen" --out tr --pp 2 --microbatches 4 --layers 2 --iterations 3 --quiet
f=tr/iteration_3/rank_0001_iter_3.pt.trace.json
head -c 5000 $f >cut && mv cut $f
ppbatch --input tr -j 2 --quiet >out.txt 2>err.txt
is "a failed trace: exit 1" 1 $?
is "nothing on stdout" "" "$(cat out.txt)"
ok_if "one error line naming the file, the byte offset and what was expected" \
	grep -qE "^ppbatch: error: $f: byte 5000: file ends inside .*, expected the rest of the trace\$" err.txt
is "... and no other line" 1 "$(wc -l <err.txt)"
ppbatch --input tr -j 2 --quiet >out.txt 2>err.txt
is "the re-run: exit 1" 1 $?
is "the re-run says why" \
	"ppbatch: error: 1 trace that failed in an earlier run was skipped (--force analyses them again; SELECT path, error FROM ranks WHERE status = 'failed')" \
	"$(cat out.txt err.txt)"
"$PP_FAST_BIN/ppgen" --out tr --pp 2 --microbatches 4 --layers 2 --iterations 3 --quiet
ppbatch --input tr -j 2 --quiet >out.txt 2>err.txt
rc=$?
is "the trace mended (new size and mtime): exit 0, nothing printed" "0|" "$rc|$(cat out.txt err.txt)"
# A rank conflict (exit 1 too) keeps its warning under --quiet.
mkdir -p c/iteration_7
cp tr/iteration_3/rank_0000_iter_3.pt.trace.json c/iteration_7/a.pt.trace.json
cp tr/iteration_3/rank_0000_iter_3.pt.trace.json c/iteration_7/b.pt.trace.json
ppbatch --input c -j 2 --quiet >out.txt 2>err.txt
is "a rank conflict: exit 1" 1 $?
is "... nothing on stdout" "" "$(cat out.txt)"
ok_if "... its warning on stderr" grep -q "^ppbatch: warning: rank conflict: iteration 7, rank 0 is claimed by 2 traces" err.txt
done_testing
