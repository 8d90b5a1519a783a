#!/bin/bash
# New C code is formatted: every line of cmd/, pipeline/, storage/ and tests/
# changed since .clang-format was added is as clang-format (.clang-format)
# writes it. `make format` fixes what this test reports.
source "$PP_ROOT/tests/lib.sh"
"$PP_ROOT/scripts/format" --check >"$T/format.out" 2>&1
rc=$?
if [ $rc = 77 ]; then
	skip "changed lines are formatted" "$(head -1 "$T/format.out")"
else
	is "changed lines are formatted (make format fixes them)" "0" "$rc"
	[ $rc = 0 ] || head -40 "$T/format.out" | sed 's/^/# /'
fi

# The check catches what it is meant to catch, in a planted repository: a
# file added after .clang-format and written badly is reported; an older one
# is not.
if command -v git-clang-format >/dev/null && command -v git >/dev/null; then
	mkdir -p "$T/repo/scripts" "$T/repo/pipeline/util" && cd "$T/repo" &&
	cp "$PP_ROOT/scripts/format" scripts/ &&
	printf 'int  old( void ){return 1;}\n' >pipeline/util/old.c &&
	git init -q . && git add -A && git -c user.name=t -c user.email=t@t commit -qm old &&
	cp "$PP_ROOT/.clang-format" . && git add .clang-format &&
	git -c user.name=t -c user.email=t@t commit -qm format &&
	printf 'int  fresh( void ){return 2;}\n' >pipeline/util/new.c && git add pipeline/util/new.c
	scripts/format --check >"$T/bad.out" 2>&1
	is "a badly formatted file added later fails the check" 1 $?
	ok_if "... and the report names it" grep -q 'pipeline/util/new.c' "$T/bad.out"
	ok_if "... but not the file older than .clang-format" sh -c "! grep -q old.c '$T/bad.out'"
	scripts/format >/dev/null 2>&1
	is "make format's script fixes it" "int fresh(void)" "$(head -1 pipeline/util/new.c)"
	cd "$T"
else
	skip "the check catches a planted file" "git or git-clang-format is not installed"
fi
done_testing
