#!/bin/bash
# The README is a front door and the docs say what is true now: the README
# fits in 250 lines and opens with the picture of the report, the two set-up
# commands and a quick start; every link of README.md and docs/ reaches its
# file and heading; reference pages carry no commit ids or dates (history is
# docs/history.md) and code and tests no "issue N" or dated history
# (tests/tools/check_docs.py).
source "$PP_ROOT/tests/lib.sh"
readme=$PP_ROOT/README.md

n=$(wc -l <"$readme")
ok_if "README.md has $n lines, at most 250" test "$n" -le 250
# The first sh block: the two set-up commands.
first=$(sed -n '/^```sh$/,/^```$/p' "$readme" | sed -n '1,/^```$/p' | sed '1d;$d')
is "the first commands are make demo and make check" "make demo|make check" \
	"$(printf '%s\n' "$first" | awk '{ print $1, $2 }' | paste -sd'|')"
ok_if "a quick start section" grep -q '^## Quick start' "$readme"
pic=$(sed -n 's/^!\[[^]]*\](\([^)]*\.png\)).*/\1/p' "$readme" | head -1)
ok_if "a picture of the report: ${pic:-none}" test -n "$pic" -a -f "$PP_ROOT/$pic"
ok_if "... a PNG file" sh -c "head -c 8 '$PP_ROOT/$pic' | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a'"
size=$(stat -c %s "$PP_ROOT/$pic" 2>/dev/null || echo 0)
ok_if "... of $size bytes, under 200 KB" test "$size" -gt 0 -a "$size" -lt 204800
ok_if "scripts/report-picture (make report-picture) remakes it" \
	sh -c "test -x '$PP_ROOT/scripts/report-picture' && bash -n '$PP_ROOT/scripts/report-picture' &&
		grep -q '^report-picture:' '$PP_ROOT/Makefile'"
checker_clean "links resolve, reference pages and code say what is true now" 300 \
	"$PP_ROOT/tests/tools/check_docs.py" "$PP_ROOT"
done_testing
