#!/bin/bash
# Every C file of cmd/, pipeline/, storage/ and tests/ is as clang-format
# (.clang-format) writes it. `make format` fixes what this test reports.
source "$PP_ROOT/tests/lib.sh"
"$PP_ROOT/scripts/format" --check >"$T/format.out" 2>&1
rc=$?
if [ $rc = 77 ]; then
	skip "every C file is formatted" "$(head -1 "$T/format.out")"
else
	is "every C file is formatted (make format fixes them)" "0" "$rc"
	[ $rc = 0 ] || head -40 "$T/format.out" | sed 's/^/# /'
fi

# The check catches what it is meant to catch, in a planted tree: a badly
# written file is reported by name, a well written one is not, and the
# script's format mode fixes the bad one.
if command -v clang-format >/dev/null; then
	mkdir -p "$T/tree/scripts" "$T/tree/pipeline/util" "$T/tree/cmd" &&
	cp "$PP_ROOT/scripts/format" "$T/tree/scripts/" &&
	cp "$PP_ROOT/.clang-format" "$T/tree/" &&
	printf 'int good(void)\n{\n\treturn 1;\n}\n' >"$T/tree/cmd/good.c" &&
	printf 'int  bad( void ){return 2;}\n' >"$T/tree/pipeline/util/bad.c"
	"$T/tree/scripts/format" --check >"$T/bad.out" 2>&1
	is "a badly formatted file fails the check" 1 $?
	ok_if "... and the report names it" grep -q 'pipeline/util/bad.c' "$T/bad.out"
	ok_if "... but not the formatted one" sh -c "! grep -q good.c '$T/bad.out'"
	"$T/tree/scripts/format" >/dev/null 2>&1
	is "make format's script fixes it" "int bad(void)" "$(head -1 "$T/tree/pipeline/util/bad.c")"
	"$T/tree/scripts/format" --check >/dev/null 2>&1
	is "... after which the check passes" 0 $?
else
	skip "the check catches a planted file" "clang-format is not installed"
fi
done_testing
