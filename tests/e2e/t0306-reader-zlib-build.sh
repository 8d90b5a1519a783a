#!/bin/bash
# The reader built without ISA-L (make ISAL=0, zlib's inflate only): its
# unit tests pass, the gzip ones on zlib, and the ISA-L case says it is
# skipped. make check builds that variant into build-zlib/.
source "$PP_ROOT/tests/lib.sh"

bin=${PP_ZLIB_UNIT:-}/test_trace_read
if [ -z "${PP_ZLIB_UNIT:-}" ] || [ ! -x "$bin" ]; then
	skip "zlib-only reader tests" "no ISAL=0 build (make check builds build-zlib/)"
	done_testing
	exit 0
fi
"$bin" >out.txt 2>&1
is "zlib-only build: unit tests exit 0" 0 "$?"
ok_if "zlib-only build: gzip read by zlib" grep -q '^\[       OK \] test_gzip_zlib' out.txt
ok_if "zlib-only build: ISA-L case skipped" grep -q '^\[  SKIPPED \] test_gzip_isal' out.txt
ok_if "zlib-only build: nothing failed" sh -c '! grep -q FAILED out.txt'
done_testing
