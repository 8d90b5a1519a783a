#!/bin/bash
# The usage blocks of docs/usage.md are exactly the commands' --help output,
# and every command answers --help with exit 0 and a usage error with exit 2.
. "$PP_ROOT/tests/lib.sh"

for c in ppbatch ppagg ppsim ppgen; do
	ok_if "$c --help exits 0" "$PP_BIN/$c" --help
	"$PP_BIN/$c" --no-such-option >/dev/null 2>&1
	is "$c with an unknown option exits 2" 2 $?
	ok_if "docs/usage.md has a usage block for $c" grep -q "<!-- usage:$c -->" "$PP_ROOT/docs/usage.md"
done
ok_if "docs/usage.md's usage blocks equal --help (scripts/usage-doc)" \
	python3 "$PP_ROOT/scripts/usage-doc" --check "$PP_BIN" "$PP_ROOT/docs/usage.md"
done_testing
