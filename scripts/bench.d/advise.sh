#!/bin/bash
# The schedule advisor (docs/advisor.md): advise_run() on a PP 16 job (a
# 1,024-rank job is PP 16 x DP 64; the advisor works on its 16 stages) with
# 64 micro-batches and 8 layers a stage, and on a heavier one (PP 16, 128
# micro-batches, 32 layers a stage: VPP 2 to 32). Target: <= 1 s inside
# ppagg for the 1,024-rank job. Medians of 5 runs, wall and CPU time.
# Measures; never asserts.
set -u
cd "$(dirname "$0")/../.."
: "${BENCH_RESULTS:=/dev/null}" "${BENCH_WORK:=bench/work}"
work="$BENCH_WORK/advise"
mkdir -p "$work"
bin="$work/advise_bench"
src=tests/bench/advise_bench.c
if [ ! -x "$bin" ] || [ -n "$(find $src build/libpp.a build/libpputil.a -newer "$bin" 2>/dev/null)" ]; then
	${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -I. -Ipipeline -o "$bin" $src \
		build/libpp.a build/libpputil.a $(pkg-config --libs inih 2>/dev/null || echo -linih) -lm || exit 1
fi
"$bin" --pp 16 --mb 64 --layers 8 --runs 5 | tee -a "$BENCH_RESULTS"
"$bin" --pp 16 --mb 128 --layers 32 --runs 5 | tee -a "$BENCH_RESULTS"
