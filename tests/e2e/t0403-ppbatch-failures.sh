#!/bin/bash
# ppbatch with bad inputs: a truncated trace is failed with the reader's
# message (partial with --salvage) while the other ranks are complete and
# exact; entries that are not traces are per-file failures, not crashes;
# usage errors exit 2; a timeout is recorded.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/e2e/lib-ppbatch.sh"
GEN="$PP_FAST_BIN/ppgen"

"$GEN" --out tr --tp 2 --pp 2 --microbatches 4 --iterations 3 --layers 2 --quiet
f=tr/iteration_3/rank_0001_iter_3.pt.trace.json
head -c $(($(stat -c %s $f) / 2)) $f >cut && mv cut $f
ppbatch --input tr -j 2 >out.txt 2>err.txt
is "a failed trace makes exit 1" 1 $?
is "the truncated rank is failed" "failed" "$(sql tr/pptrace.db "SELECT status FROM ranks WHERE rank = 1")"
ok_if "its error is the reader's message" \
	grep -q "file ends inside an event" <(sql tr/pptrace.db "SELECT error FROM ranks WHERE rank = 1")
is "a failed rank has NULL metrics" "|||" \
	"$(sql tr/pptrace.db "SELECT mode, gpu_busy_ns, window_start_ns, coverage FROM ranks WHERE rank = 1")"
is "no kernels for the failed rank" 0 "$(sql tr/pptrace.db "SELECT count(*) FROM kernels WHERE rank = 1")"
ok_if "the summary lists the failure" grep -q "rank_0001_iter_3.pt.trace.json: .*file ends inside" out.txt
ok_if "the summary counts" grep -q "4 files: 3 ok, 0 partial, 1 failed, 0 skipped" out.txt
for v in ranks category_stats steps; do
	ok_if "other ranks: $v equals truth" same_as_truth tr/pptrace.db tr $v '^3,1,'
done
ppbatch --input tr -j 2 --quiet
is "a re-run skips the failed trace (exit 1: still failed)" \
	"1|failed" "$(echo "$?|$(sql tr/pptrace.db "SELECT status FROM ranks WHERE rank = 1")")"
ppbatch --input tr -j 2 --quiet --salvage --force
is "--salvage: exit 0" 0 $?
is "--salvage: partial with what was kept" "partial|truncated trace salvaged" \
	"$(sql tr/pptrace.db "SELECT status, substr(error, 1, 24) FROM ranks WHERE rank = 1")"
ok_if "--salvage: the partial rank has kernels" test \
	"$(sql tr/pptrace.db "SELECT count(*) FROM kernels WHERE rank = 1")" -gt 0

# Entries that are not traces.
mkdir -p odd/iteration_1/rank_3_iter_1.json odd/iteration_1/.hidden odd/.truth
cp tr/iteration_3/rank_0000_iter_3.pt.trace.json odd/iteration_1/rank_0_iter_1.json
ln -s rank_9_iter_1.json odd/iteration_1/rank_9_iter_1.json
ln -s /nonexistent odd/iteration_1/rank_8_iter_1.json
echo '{"traceEvents": [' >odd/.truth/ignored.json
printf 'not json at all' >odd/iteration_1/rank_7_iter_1.json
ppbatch --input odd -j 2 --quiet
is "bad entries: exit 1" 1 $?
is "bad entries: one row each, good one ok" \
	"0|ok 3|failed 7|failed 8|failed 9|failed" \
	"$(sql odd/pptrace.db "SELECT rank || '|' || status FROM ranks ORDER BY rank" | tr '\n' ' ' | sed 's/ $//')"
ok_if "directory named like a trace" grep -q "is a directory" <(sql odd/pptrace.db "SELECT error FROM ranks WHERE rank = 3")
ok_if "looping symlink" grep -q "cannot stat.*Too many levels" <(sql odd/pptrace.db "SELECT error FROM ranks WHERE rank = 9")
ok_if "dot folders are ignored" test "$(sql odd/pptrace.db "SELECT count(*) FROM ranks WHERE path LIKE '%truth%'")" = 0

# Usage errors and a fatal database.
ppbatch 2>/dev/null; is "no --input: exit 2" 2 $?
ppbatch --input nowhere 2>err.txt; is "missing input: exit 2" 2 $?
ok_if "missing input: says why" grep -q "cannot read input folder 'nowhere'" err.txt
ppbatch --input tr/iteration_3/rank_0000_iter_3.pt.trace.json 2>err.txt; is "a file as --input: exit 2" 2 $?
ok_if "a file as --input: points to --inspect" \
	grep -qF "Not a directory (--input takes the folder of the iteration_N folders; to describe one trace: ppbatch --inspect FILE)" err.txt
ppbatch --input tr --shard 3/3 2>/dev/null; is "bad shard: exit 2" 2 $?
echo "not a database" >bad.db
ppbatch --input tr --db bad.db 2>err.txt; is "unusable database: exit 3" 3 $?
ok_if "unusable database: says why" grep -q "bad.db" err.txt
ppbatch --input tr --db nodir/x.db 2>err.txt; is "database in a missing folder: exit 3" 3 $?
# Before, SQLite's words alone: "unable to open database file".
is "database in a missing folder: the system's reason" \
	"ppbatch: error: cannot open database 'nodir/x.db': unable to open database file: folder 'nodir': No such file or directory" \
	"$(cat err.txt)"

# --timeout kills and records; a re-run retries timed-out traces.
"$GEN" --out slow --pp 2 --microbatches 16 --iterations 1 --layers 8 --quiet
ppbatch --input slow -j 1 --timeout 0.001 --quiet
is "timeout: exit 1" 1 $?
is "timeout: recorded" "failed|timed out after 0.001 s: worker killed" \
	"$(sql slow/pptrace.db "SELECT DISTINCT status, error FROM ranks")"
ppbatch --input slow -j 2 --quiet
is "timeout: a re-run retries them" "ok" "$(sql slow/pptrace.db "SELECT DISTINCT status FROM ranks")"

# A [patterns] glob whose quote is not closed: one usage error naming the file and the
# key, before any worker starts.
printf '[patterns]\nforward_step = "nn.Module: X\n' >quote.ini
ppbatch --input slow --config quote.ini --quiet 2>err.txt
is "unclosed quote in a pattern: exit 2" 2 $?
is "unclosed quote in a pattern: says where" \
	"ppbatch: error: quote.ini: config key patterns.forward_step: a quote is not closed in '\"nn.Module: X'" \
	"$(cat err.txt)"
done_testing
