#!/bin/bash
# A real version-7 database (tests/fixtures/db-v7: made by a pptrace of the
# same schema version whose kernels view looked the names of its codes up
# row by row) gets today's view definitions when a command opens it to
# write, with no version change: every view gives the same rows, in the
# same order, and the view definitions equal a new file's.
source "$PP_ROOT/tests/lib.sh"
tar -xzf "$PP_ROOT/tests/fixtures/db-v7/db-v7.tar.gz"
is "the fixture is a version-7 file" 7 "$(sql pptrace.db "PRAGMA user_version")"
ok_if "its kernels view looks its category up row by row" \
	grep -q "SELECT name FROM category_codes" <(sql pptrace.db \
		"SELECT sql FROM sqlite_master WHERE type = 'view' AND name = 'kernels'")
views=$(sql pptrace.db "SELECT name FROM sqlite_master WHERE type = 'view' ORDER BY name")
dump() {
	local v
	for v in $views; do
		echo "== $v"
		sql "$1" "SELECT * FROM \"$v\""
	done
}
dump pptrace.db >before
ok_if "its kernels have categories, phases and collectives" \
	grep -q "|dp_communication|comm|0|dp|.*|all_reduce$" before

# ppagg opens it to write (and writes the same analysis again).
ppagg --db pptrace.db --no-render --quiet -o out
is "ppagg on it: exit 0" 0 $?
is "still version 7" 7 "$(sql pptrace.db "PRAGMA user_version")"
ok_if "every view gives the rows it gave, in the same order" cmp -s before <(dump pptrace.db)
cp "$PP_ROOT/tests/fixtures/whatif/pp2dp2.csv" "$PP_ROOT/tests/fixtures/whatif/pp2dp2.yaml" .
ppbatch --format optrace --input pp2dp2.csv --meta pp2dp2.yaml --db clean.db -q
is "its views are today's definitions" \
	"$(sql clean.db "SELECT name, sql FROM sqlite_master WHERE type = 'view' ORDER BY name")" \
	"$(sql pptrace.db "SELECT name, sql FROM sqlite_master WHERE type = 'view' ORDER BY name")"
done_testing
