# scripts/bench-lib.sh — what the benchmarks of scripts/bench.d/ share.
# A benchmark sources it as "$(dirname "$0")/../bench-lib.sh" (a file of
# bench.d/ would be run as a benchmark itself); it sets -u (an unset
# variable is an error) and goes to the checkout's top folder, where the
# benchmarks run. Gives:
#   bench_work NAME    the defaults when a benchmark runs alone
#                      ($BENCH_RESULTS /dev/null unless set before,
#                      $BENCH_WORK bench/work), $bindir (the commands
#                      measured: $PP_BIN, else build/bin) and $work, the
#                      benchmark's scratch folder $BENCH_WORK/NAME, made.
#   bench_program NAME CFLAGS LIBS SRC...
#                      $bin, the benchmark program $work/NAME, compiled
#                      (-O2) from SRC... with build/libpp.a and
#                      build/libpputil.a, CFLAGS and LIBS (and -lisal when
#                      the library's gzip input uses ISA-L) when missing or
#                      older than a source, tests/bench/bench.h or the
#                      libraries; returns 1 when the compiler fails.

set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

bench_work() {
	: "${BENCH_RESULTS:=/dev/null}" "${BENCH_WORK:=bench/work}"
	bindir=${PP_BIN:-$PWD/build/bin}
	work="$BENCH_WORK/$1"
	mkdir -p "$work"
}

bench_program() {
	local name=$1 cflags=$2 libs=$3
	shift 3
	bin="$work/$name"
	if [ -x "$bin" ] && [ -z "$(find "$@" tests/bench/bench.h build/libpp.a build/libpputil.a -newer "$bin" 2>/dev/null)" ]; then
		return 0
	fi
	nm build/libpp.a 2>/dev/null | grep -q 'U isal_inflate' && libs="$libs -lisal"
	# shellcheck disable=SC2086
	${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -I. -Ipipeline $cflags -o "$bin" "$@" \
		build/libpp.a build/libpputil.a $libs
}
