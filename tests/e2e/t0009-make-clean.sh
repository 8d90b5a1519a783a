#!/bin/bash
# make clean removes every build folder that make and its scripts create:
# each folder an O= or CHECK_O= of the Makefile or tests/fuzz/run.sh names.
# It runs on a copy of the Makefile in an empty folder holding those folders.
source "$PP_ROOT/tests/lib.sh"

dirs=$(grep -hoE '\b(CHECK_)?O *\??= *[A-Za-z0-9._/-]+' "$PP_ROOT/Makefile" "$PP_ROOT/tests/fuzz/run.sh" |
	sed 's/.*= *//' | sort -u)
ok_if "the Makefile and tests/fuzz/run.sh name build folders: $(echo $dirs)" \
	test "$(echo "$dirs" | grep -c .)" -ge 3
cp "$PP_ROOT/Makefile" .
for d in $dirs; do
	mkdir -p "$d/bin" && touch "$d/bin/x"
done
mkdir -p bench/work
make -s clean >clean.out 2>&1
ok_if "make clean exits 0" test $? = 0
is "no build folder is left" "" "$(for d in $dirs; do [ -e "$d" ] && echo "$d"; done)"
ok_if "the benchmarks' inputs (bench/work) stay" test -d bench/work
done_testing
