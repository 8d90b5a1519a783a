#!/bin/bash
# Nothing silently lost or merged (docs/contracts.md §8): a trace is where
# it was laid out, not the file behind it. Two names for one file are two
# ranks, one file in two iteration folders is stored in both (and neither
# is "skipped" forever after), traces with one header rank are not merged
# into one rank. "N ok" means N rows.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/e2e/lib-ppbatch.sh"

"$PP_FAST_BIN/ppgen" --out src --pp 2 --microbatches 2 --layers 2 --iterations 1 --quiet
SRC=$PWD/src/iteration_1
R0=$SRC/rank_0000_iter_1.pt.trace.json
R1=$SRC/rank_0001_iter_1.pt.trace.json

# 1. rank_0000 and rank_0001 are links to one file: two traces, both
# stored. Their header rank is the same (one file), so each takes its file
# name's rank, and the summary says why.
mkdir -p one/iteration_3
ln -s "$R0" one/iteration_3/rank_0000.json
ln -s "$R0" one/iteration_3/rank_0001.json
ppbatch --input one -j 2 >out 2>err
is "two names: exit 0" 0 $?
ok_if "two names: the summary counts 2 ok" grep -q "2 files: 2 ok, 0 partial, 0 failed" out
is "two names: 2 ok means 2 rows" 2 "$(sql one/pptrace.db "SELECT count(*) FROM traces WHERE status = 0")"
is "two names: ranks from the file names" "0|0
1|1" "$(sql one/pptrace.db "SELECT rank, name_rank FROM traces ORDER BY path")"
is "two names: one file read twice" 1 "$(sql one/pptrace.db "SELECT count(DISTINCT file) FROM traces")"
ok_if "two names: said to be the same file" grep -q "are the same file: analysed as two traces" err
ok_if "two names: the shared header rank said" grep -q "iteration 3: 2 traces have header rank 0" err
ppagg --base-folder one --pp 2 --no-render --quiet 2>err
is "two names: ppagg exits 0" 0 $?
is "two names: ppagg counts 2 ranks" "3,2,0" "$(cut -d, -f1-3 one/pptrace/iterations.csv | tail -1)"
ppagg --base-folder one --pp 2 --no-render 2>err
ok_if "two names: its summary line counts them, one pipeline" \
	grep -q "iteration 3: 2 ranks ok, 0 failed, 1 pipeline," err

# 2. One file in two iteration folders: both iterations are stored, and a
# re-run skips both instead of calling one of them stored forever.
mkdir -p two/iteration_1 two/iteration_2
for d in two/iteration_1 two/iteration_2; do ln -s "$R0" "$R1" "$d/"; done
ppbatch --input two -j 2 >out 2>err
is "two folders: exit 0" 0 $?
ok_if "two folders: 4 ok" grep -q "4 files: 4 ok" out
is "two folders: each iteration has both ranks" "1|0
1|1
2|0
2|1" "$(sql two/pptrace.db "SELECT iteration, rank FROM ranks ORDER BY 1, 2")"
ppbatch --input two -j 2 >out 2>err
is "two folders: re-run exits 0" 0 $?
ok_if "two folders: re-run skips all 4" grep -q "4 files: 0 ok, 0 partial, 0 failed, 4 skipped" out
touch "$R1"
ppbatch --input two -j 2 >out 2>err
ok_if "two folders: a changed file is analysed again under both names" \
	grep -q "4 files: 2 ok, 0 partial, 0 failed, 2 skipped" out
is "two folders: still 4 rows" 4 "$(sql two/pptrace.db "SELECT count(*) FROM ranks")"
ppagg --base-folder two --pp 2 --no-render --quiet
is "two folders: ppagg exits 0" 0 $?
is "two folders: ppagg aggregates both iterations" "1,2,0
2,2,0" "$(tail -n +2 two/pptrace/iterations.csv | cut -d, -f1-3)"

# 3. Every header says rank 0 (real jobs write 0, or a local rank): the
# file names' ranks are used. A third trace whose name has no rank keeps
# header rank 0: that is a conflict, reported by ppbatch (exit 1) and by
# ppagg (exit 1, listed, the rank not aggregated, nothing merged).
mkdir -p hdr/iteration_5
for f in "$R0" "$R1"; do
	sed 's/"backend": "nccl", "rank": [0-9]*/"backend": "nccl", "rank": 0/' "$f" \
		>"hdr/iteration_5/$(basename "$f")"
done
ppbatch --input hdr -j 2 >out 2>err
is "header rank 0 everywhere: exit 0" 0 $?
is "header rank 0 everywhere: ranks from the file names" "0|0|0
1|0|1" "$(sql hdr/pptrace.db "SELECT rank, header_rank, name_rank FROM traces ORDER BY path")"
is "header rank 0 everywhere: the rule is noted in the row" \
	"header rank 0 is shared with other traces of the iteration: rank from the file name" \
	"$(sql hdr/pptrace.db "SELECT DISTINCT rank_note FROM traces")"
cp hdr/iteration_5/rank_0001_iter_1.pt.trace.json hdr/iteration_5/extra.pt.trace.json
ppbatch --input hdr -j 2 >out 2>err
is "a trace without a file-name rank: exit 1" 1 $?
ok_if "the conflict is in the summary" grep -q "rank conflicts: 2 traces" out
ok_if "the conflict names its iteration, rank and a trace" \
	grep -q "rank conflict: iteration 5, rank 0 is claimed by 2 traces ('.*/hdr/iteration_5/extra.pt.trace.json', '.*/hdr/iteration_5/rank_0000_iter_1.pt.trace.json'): none of them is aggregated" err
is "the conflict is recorded" "5|0|extra.pt.trace.json|2
5|0|rank_0000_iter_1.pt.trace.json|2" \
	"$(sql hdr/pptrace.db "SELECT iteration, rank, replace(path, rtrim(path, replace(path, '/', '')), ''), traces FROM rank_conflicts ORDER BY path")"
ppbatch --input hdr -j 2 >out 2>err
is "the conflict stays until resolved: a re-run exits 1 too" 1 $?
ppagg --base-folder hdr --pp 2 --no-render >aggout 2>aggerr
is "ppagg: exit 1 on a conflict" 1 $?
ok_if "ppagg: the conflict is named" grep -q "rank conflict, not aggregated: rank 0 is claimed by more than one trace" aggerr
ok_if "ppagg: the summary counts it" grep -q "iteration 5: 1 rank ok, 0 failed, 1 in conflict, 0 pipelines," aggerr
ok_if "ppagg: the report lists it" grep -q "Rank conflicts (not aggregated)" hdr/pptrace/index.html
is "ppagg: nothing of the two traces lands on rank 0" "category,kernels,sum_ns,busy_ns" \
	"$(cat hdr/pptrace/iteration_5/rank_0/categories.csv)"
is "ppagg: rank 1 is aggregated as before" 1 "$(cut -d, -f2 hdr/pptrace/iterations.csv | tail -1)"
done_testing
