#!/bin/bash
# The why analysis (docs/why.md) on a 1,024-rank job: ppgen writes TP 2 x
# PP 16 x DP 32 with 32 micro-batches and 2 iterations (hosts' clocks
# shifted by up to 0.5 ms, a 1.5x straggler), ppbatch stores it, then
# tests/bench/why_bench.c runs ppagg's data layer on it and prints what its
# why analysis adds (agg/agg_why.c, docs/why.md §7): reading the ops and
# communication kernels, the engine, the critical path, writing the views,
# the whole in wall and CPU time; with the default rows (the tensor-parallel
# instances summarised, not listed) and with every instance listed
# (agg.tp_collective_rows = all), and the scan of the timelines' blocks the
# report no longer makes (the why analysis' scan kept them: what it adds to
# ppagg is its total less that). Medians of 3. The database is kept in
# $BENCH_WORK/why (made once, about 4 minutes on 2 cores). Measures; never
# asserts.
source "$(dirname "$0")/../bench-lib.sh"
bench_work why
bench_program why_bench -Itests/unit/why "-lsqlite3 -luv -lz -linih -lm" \
	tests/bench/why_bench.c tests/unit/why/why_load.c || exit 1
tree="$work/tree"
if [ ! -s "$tree/pptrace.db" ]; then
	rm -rf "$tree"
	"$bindir/ppgen" --out "$tree" --tp 2 --pp 16 --dp 32 --microbatches 32 --iterations 1,2 \
		--clock-skew-max 500 --straggler 37:1.5 --gzip -q &&
		"$bindir/ppbatch" --input "$tree" -q || exit 1
	rm -rf "$tree"/iteration_* # the database is all the bench needs
fi
mkdir -p "$work/copy"
cp "$tree/pptrace.db" "$tree"/unique_parallel_groups_*.txt "$work/copy/" || exit 1
"$bin" --db "$work/copy/pptrace.db" --runs 3 |
	sed 's/^why_/why_1024_ranks_/' | tee -a "$BENCH_RESULTS"
"$bin" --db "$work/copy/pptrace.db" --runs 3 --rows all |
	sed 's/^why_/why_1024_ranks_all_rows_/' | tee -a "$BENCH_RESULTS"
rm -rf "$work/copy"
exit 0
