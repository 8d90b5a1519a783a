#!/bin/bash
# Every command's --help and a usage error end without a leak or a sanitizer
# report (regression: ppbatch --help leaked its option state).
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/reliab/lib-reliab.sh"

for c in "$PP_BIN"/*; do
	[ -x "$c" ] || continue
	n=${c##*/}
	"$n" --help >/dev/null 2>"$T/err"
	is "$n --help exits 0" 0 $?
	ok_if "$n --help: no sanitizer report" sanitizer_clean "$T/err"
	"$n" --no-such-option >/dev/null 2>"$T/err"
	is "$n --no-such-option exits 2" 2 $?
	ok_if "$n usage error: no sanitizer report" sanitizer_clean "$T/err"
done
done_testing
