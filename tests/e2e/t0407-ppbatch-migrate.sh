#!/bin/bash
# A real version-2 database (tests/fixtures/db-v2: made by pptrace before the
# identity change, from a tree where one file has two names and two
# iteration folders link the same files) is migrated in place (to version 3, then 4):
# its rows take the paths they are laid out at without being analysed
# again, what version 2 had lost is analysed, and the result equals a clean
# run of today's ppbatch. ppagg and --merge use an upgraded file too.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/e2e/lib-ppbatch.sh"
FIX=$PP_ROOT/tests/fixtures/db-v2/db-v2.tar.gz
OLD=/tmp/pptrace-v2-fixture

tar -xzf "$FIX"
is "the fixture is a version-2 file" 2 "$(sql pptrace.db "PRAGMA user_version")"
is "version 2 had kept 2 rows of 5 traces" "iteration_2|0
iteration_2|1" "$(sql pptrace.db "SELECT folder, rank FROM traces ORDER BY rank")"
# Move the stored paths to this tree, give the files their stored times.
sql pptrace.db "UPDATE traces SET path = replace(path, '$OLD', '$T')" >/dev/null
while IFS='|' read -r path mtime; do
	touch -m -d "@$((mtime / 1000000000)).$(printf %09d $((mtime % 1000000000)))" "$path"
done < <(sql pptrace.db "SELECT path, mtime_ns FROM traces")
cp pptrace.db v2.db

ppbatch --input tree --db pptrace.db -j 2 >out 2>err
is "the upgraded database: exit 0" 0 $?
is "now version 7 (today's)" 7 "$(sql pptrace.db "PRAGMA user_version")"
ok_if "the two stored traces were adopted, not analysed again" \
	grep -q "5 files: 3 ok, 0 partial, 0 failed, 2 skipped" out
ok_if "the adoption is said" grep -q "2 traces stored by an older pptrace took the path" err
is "every trace has its row, in its own iteration" "1|0|iteration_1/rank_0000_iter_1.pt.trace.json
1|1|iteration_1/rank_0001_iter_1.pt.trace.json
1|2|iteration_1/rank_0002_iter_1.pt.trace.json
2|0|iteration_2/rank_0000_iter_1.pt.trace.json
2|1|iteration_2/rank_0001_iter_1.pt.trace.json" \
	"$(sql pptrace.db "SELECT iteration, rank, substr(path, length('$T/tree/') + 1) FROM ranks ORDER BY 1, 2")"

ppbatch --input tree --db clean.db -j 2 >/dev/null 2>&1
ok_if "the migrated database equals a clean run" cmp -s <(dump_db clean.db) <(dump_db pptrace.db)
is "its views are today's definitions" \
	"$(sql clean.db "SELECT name, sql FROM sqlite_master WHERE type = 'view' ORDER BY name")" \
	"$(sql pptrace.db "SELECT name, sql FROM sqlite_master WHERE type = 'view' ORDER BY name")"
is "its code tables are today's" \
	"$(sql clean.db "SELECT * FROM category_codes; SELECT * FROM phase_codes")" \
	"$(sql pptrace.db "SELECT * FROM category_codes; SELECT * FROM phase_codes")"
ppbatch --input tree --db pptrace.db -j 2 >out 2>&1
ok_if "a second run skips everything" grep -q "5 files: 0 ok, 0 partial, 0 failed, 5 skipped" out

# ppagg opens a version-2 file as well (and upgrades it); --merge refuses
# a version-2 shard with a clear message instead of mixing identities.
cp v2.db agg.db
ppagg --base-folder tree --db agg.db --pp 2 --no-render --quiet
is "ppagg on a version-2 file: exit 0" 0 $?
is "ppagg upgraded it" 7 "$(sql agg.db "PRAGMA user_version")"
ppbatch --merge --db merged.db v2.db >out 2>&1
is "merge of a version-2 shard: exit 1" 1 $?
ok_if "merge says why" grep -q "v2.db' is unreadable: another schema version" out
done_testing
