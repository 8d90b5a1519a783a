#!/bin/bash
# ppbatch: skip / --force, --folders, --shard I/N whose union is the whole,
# --merge (idempotent, no duplicates, failed ranks kept, missing shards
# reported), and two concurrent runs on one database.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/e2e/lib-ppbatch.sh"
GEN="$PP_FAST_BIN/ppgen"

"$GEN" --out tree --tp 2 --pp 2 --dp 2 --microbatches 4 --layers 2 --iterations 15,16 --quiet
f=tree/iteration_16/rank_0005_iter_16.pt.trace.json
head -c 50000 $f >cut && mv cut $f
ppbatch --input tree --db full.db -j 2 --quiet
is "full run: exit 1 (one truncated)" 1 $?
dump_db full.db >full.txt

# skip and --force
ppbatch --input tree --db full.db -j 2 >out.txt
ok_if "second run skips everything" grep -q "16 files: 0 ok, 0 partial, 0 failed, 16 skipped" out.txt
touch tree/iteration_15/rank_0002_iter_15.pt.trace.json
ppbatch --input tree --db full.db -j 2 >out.txt
ok_if "a touched file is analysed again" grep -q "16 files: 1 ok, 0 partial, 0 failed, 15 skipped" out.txt
ppbatch --input tree --db full.db -j 2 --force >out.txt
ok_if "--force analyses everything" grep -q "16 files: 15 ok, 0 partial, 1 failed, 0 skipped" out.txt
ok_if "re-analysis leaves no duplicates" cmp -s full.txt <(dump_db full.db)
ok_if "default database is <input>/pptrace.db" ppbatch --input tree --folders 'iteration_15' --quiet
is "--folders takes only matching folders" "15" "$(sql tree/pptrace.db "SELECT DISTINCT iteration FROM ranks")"

# shards: 0/3, 1/3, 2/3 are disjoint and together the whole
for i in 0 1 2; do
	ppbatch --input tree --db shard$i.db --shard $i/3 -j 1 --quiet
done
is "shard sizes 6+5+5" "6 5 5" "$(for i in 0 1 2; do sql shard$i.db 'SELECT count(*) FROM traces'; done | tr '\n' ' ' | sed 's/ $//')"
is "shards are disjoint" 16 "$(for i in 0 1 2; do sql shard$i.db 'SELECT path FROM traces'; done | sort -u | wc -l)"
is "shard k takes files k, k+3, ... in (folder, rank) order" "0 3 6" \
	"$(sql shard0.db "SELECT rank FROM ranks WHERE iteration = 15 ORDER BY rank" | head -3 | tr '\n' ' ' | sed 's/ $//')"

# merge
ppbatch --merge --db merged.db shard0.db shard1.db shard2.db >out.txt
is "merge: exit 0" 0 $?
ok_if "merge: says what it did" grep -q "merged 3 of 3 shards into merged.db: 16 traces added, 0 replaced, 0 unchanged" out.txt
ok_if "merge: equals the single run" cmp -s full.txt <(dump_db merged.db)
is "merge: the failed rank stays failed" "failed" "$(sql merged.db "SELECT status FROM ranks WHERE iteration = 16 AND rank = 5")"
ppbatch --merge --db merged.db shard2.db shard0.db shard1.db >out.txt
ok_if "merge twice: nothing changes" grep -q "0 traces added, 0 replaced, 16 unchanged" out.txt
ok_if "merge twice: still equals the single run" cmp -s full.txt <(dump_db merged.db)
is "merge: integrity ok" ok "$(sql merged.db 'PRAGMA integrity_check')"
ppbatch --merge --db part.db shard0.db missing.db shard2.db >out.txt 2>err.txt
is "missing shard: exit 1" 1 $?
ok_if "missing shard: reported" grep -q "shard 'missing.db' is missing" err.txt
ok_if "missing shard: listed in the summary" grep -q "missing or unreadable shards: 1" out.txt
is "missing shard: the others are merged" 11 "$(sql part.db 'SELECT count(*) FROM traces')"
echo "garbage" >junk.db
ppbatch --merge --db part.db junk.db 2>err.txt
is "unreadable shard: exit 1" 1 $?
ok_if "unreadable shard: reported" grep -q "shard 'junk.db' is unreadable" err.txt
ppbatch --merge --db part.db 2>/dev/null
is "merge without shards: exit 2" 2 $?

# two ppbatch processes on one database at once
ppbatch --input tree --db conc.db -j 2 --quiet & a=$!
ppbatch --input tree --db conc.db -j 2 --quiet & b=$!
wait $a; ra=$?
wait $b; rb=$?
is "concurrent runs: both finish (exit 1: the truncated trace)" "1 1" "$ra $rb"
is "concurrent runs: integrity ok" ok "$(sql conc.db 'PRAGMA integrity_check')"
ok_if "concurrent runs: content equals a single run" cmp -s full.txt <(dump_db conc.db)
done_testing
