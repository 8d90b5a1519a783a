#!/bin/bash
# tests/fuzz/run.sh — build the libFuzzer targets (tests/fuzz/fuzz_*.c) with
# clang and run them, one core, each for SECONDS:
#
#   tests/fuzz/run.sh [SECONDS] [TARGET...]      (default 300 s, all targets)
#
# Seeds: tests/fuzz/corpus/<target>/ (read only); the growing corpus lives in
# build-fuzz/work/<target>/, crashes in build-fuzz/crash/. Each run appends
# "date target seconds executions coverage features crashes" (seconds the
# fuzzer actually ran: less than SECONDS when it stopped on a crash) to
# build-fuzz/stats.txt (totals for docs/fuzzing.md). A crash input belongs
# in tests/fuzz/regress/<target>/ once fixed: make check replays them.
set -u
cd "$(dirname "$0")/../.."
secs=${1:-300}
# Seconds one input may take before libFuzzer calls it a hang. Wall-clock
# time: at nice 19 on a busy machine a fast input can wait seconds for a core.
tmo=${FUZZ_TIMEOUT:-60}
[ $# -gt 0 ] && shift
O=build-fuzz
CC=${FUZZ_CC:-clang}
PKGS="sqlite3 libuv zlib inih"
ISAL_DEF=-DPP_HAVE_ISAL # gzip through ISA-L as the Makefile builds it, when installed
pkg-config --exists libisal 2>/dev/null && PKGS="$PKGS libisal" || ISAL_DEF=
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all"
CFLAGS="-std=c11 -D_GNU_SOURCE -I. -Ipipeline $(pkg-config --cflags $PKGS) $ISAL_DEF -g -O1 $SAN"
LIBS="$(pkg-config --libs $PKGS) -lm"
: "${SIMD_AVX2_CFLAGS:?run through make fuzz, which owns the SIMD flags}" "${SIMD_AVX512_CFLAGS:?run through make fuzz}"
mkdir -p "$O/obj" "$O/work" "$O/crash"
objs=()
for c in pipeline/*/*.c storage/*.c; do
	[ -z "$ISAL_DEF" ] && [ "$c" = pipeline/read/gunzip_isal.c ] && continue
	o=$O/obj/$(echo "${c%.c}" | tr / _).o
	level= # the reader's SIMD levels: the Makefile's flags (make fuzz passes them)
	case $c in
	pipeline/read/trace_events_avx2.c) level=$SIMD_AVX2_CFLAGS ;;
	pipeline/read/trace_events_avx512.c) level=$SIMD_AVX512_CFLAGS ;;
	esac
	if [ ! -f "$o" ] || [ "$c" -nt "$o" ] || [ -n "$(find pipeline storage -name '*.h' -newer "$o")" ]; then
		$CC $CFLAGS $level -fsanitize=fuzzer-no-link -c "$c" -o "$o" || exit 3
	fi
	objs+=("$o")
done
targets=("$@")
if [ ${#targets[@]} = 0 ]; then
	for f in tests/fuzz/fuzz_*.c; do t=${f##*/fuzz_}; targets+=("${t%.c}"); done
fi
for t in "${targets[@]}"; do
	$CC $CFLAGS -fsanitize=fuzzer "tests/fuzz/fuzz_$t.c" "${objs[@]}" $LIBS -o "$O/fuzz_$t" || exit 3
	mkdir -p "$O/work/$t" "tests/fuzz/corpus/$t"
	echo "fuzz: $t for $secs s"
	t0=$(date +%s)
	"$O/fuzz_$t" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -timeout="$tmo" \
		-print_final_stats=1 -artifact_prefix="$O/crash/$t-" \
		"$O/work/$t" "tests/fuzz/corpus/$t" >"$O/$t.log" 2>&1
	rc=$?
	ran=$(($(date +%s) - t0))
	execs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$O/$t.log")
	cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$O/$t.log" | tail -1 | awk '{ print $2, $4 }')
	crashes=$(find "$O/crash" -name "$t-*" ! -name "$t-slow-unit-*" | wc -l) # slow units are not bugs
	echo "$(date -u +%FT%TZ) $t $ran ${execs:-0} ${cov:-0 0} $crashes" | tee -a "$O/stats.txt"
	[ "$rc" = 0 ] || { echo "fuzz: $t stopped (exit $rc), see $O/$t.log"; grep -A20 -m1 -E 'ERROR|runtime error' "$O/$t.log"; }
done
