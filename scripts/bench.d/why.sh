#!/bin/bash
# The why analysis (docs/why.md) on a 1,024-rank job: ppgen writes TP 2 x
# PP 16 x DP 32 with 32 micro-batches and 2 iterations (hosts' clocks
# shifted by up to 0.5 ms, a 1.5x straggler), ppbatch stores it, then
# tests/bench/why_bench.c times what ppagg's glue adds (docs/why.md §7):
# reading the communication kernels (and the traces and ops, which ppagg
# reads anyway), the engine, the critical path, writing the views. Medians
# of 3, wall and CPU time. The database is kept in $BENCH_WORK/why (made
# once, about 4 minutes on 2 cores). Measures; never asserts.
set -u
cd "$(dirname "$0")/../.."
: "${BENCH_RESULTS:=/dev/null}" "${BENCH_WORK:=bench/work}"
bindir=${PP_BIN:-$PWD/build/bin}
work="$BENCH_WORK/why"
mkdir -p "$work"
bin="$work/why_bench"
srcs="tests/bench/why_bench.c tests/unit/why/why_load.c"
if [ ! -x "$bin" ] || [ -n "$(find $srcs build/libpp.a build/libpputil.a -newer "$bin" 2>/dev/null)" ]; then
	libs="-lsqlite3 -luv -lz -linih -lm"
	nm build/libpp.a 2>/dev/null | grep -q 'U isal_inflate' && libs="$libs -lisal"
	${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -I. -Ipipeline -Itests/unit/why -o "$bin" $srcs \
		build/libpp.a build/libpputil.a $libs || exit 1
fi
tree="$work/tree"
if [ ! -s "$tree/pptrace.db" ]; then
	rm -rf "$tree"
	"$bindir/ppgen" --out "$tree" --tp 2 --pp 16 --dp 32 --microbatches 32 --iterations 1,2 \
		--clock-skew-max 500 --straggler 37:1.5 --gzip -q &&
		"$bindir/ppbatch" --input "$tree" -q || exit 1
	rm -rf "$tree"/iteration_* # the database is all the bench needs
fi
cp "$tree/pptrace.db" "$work/copy.db" || exit 1
"$bin" --db "$work/copy.db" --topology "$(ls "$tree"/unique_parallel_groups_*.txt)" --runs 3 |
	sed 's/^why_/why_1024_ranks_/' | tee -a "$BENCH_RESULTS"
rm -f "$work"/copy.db*
exit 0
