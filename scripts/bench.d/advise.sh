#!/bin/bash
# The schedule advisor (docs/advisor.md): advise_run() on a PP 16 job (a
# 1,024-rank job is PP 16 x DP 64; the advisor works on its 16 stages) with
# 64 micro-batches and 8 layers a stage, and on a heavier one (PP 16, 128
# micro-batches, 32 layers a stage: VPP 2 to 32). Target: <= 1 s inside
# ppagg for the 1,024-rank job (measured last, below). Medians of 5 runs,
# wall and CPU time.
# Measures; never asserts.
source "$(dirname "$0")/../bench-lib.sh"
bench_work advise
bench_program advise_bench "" "$(pkg-config --libs inih 2>/dev/null || echo -linih) -lm" \
	tests/bench/advise_bench.c || exit 1
"$bin" --pp 16 --mb 64 --layers 8 --runs 5 | tee -a "$BENCH_RESULTS"
"$bin" --pp 16 --mb 128 --layers 32 --runs 5 | tee -a "$BENCH_RESULTS"
# Inside ppagg: a 1,024-rank database (tp 4, pp 16, dp 16, 32 micro-batches,
# written by tests/e2e/mkaggdb.py), the advisor's own time from ppagg's
# "advice: ... advised in X s" line (measuring its inputs from the 64 PP
# groups, the engine, the views written).
export PP_BIN=${PP_BIN:-$PWD/build/bin}
rm -rf "$work/ppagg" && mkdir -p "$work/ppagg"
python3 tests/e2e/mkaggdb.py --db "$work/ppagg/pptrace.db" --tp 4 --pp 16 --dp 16 --mb 32 \
	--kernels 2 --topology "$work/ppagg/unique_parallel_groups_1.txt" || exit 1
"$PP_BIN/ppagg" --base-folder "$work/ppagg" --no-render --rank-charts none 2>"$work/ppagg.err" >/dev/null
s=$(sed -n 's/^ppagg: advice: .*; advised in \([0-9.]*\) s$/\1/p' "$work/ppagg.err")
[ -n "$s" ] || { echo "advise bench: no 'advised in X s' line from ppagg" >&2; exit 1; }
echo "advise_ppagg_1024_ranks_pp16_wall $s s" | tee -a "$BENCH_RESULTS"
