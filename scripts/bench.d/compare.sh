#!/bin/bash
# ppagg --compare (docs/compare.md) on two 1,024-rank jobs: ppgen writes
# TP 8 x PP 16 x DP 8, one iteration, seeds 1 and 2; ppbatch stores each and
# ppagg aggregates each (the baseline must have been aggregated). Then, three
# rounds, alternately: ppagg --no-render on the second job alone and with
# --compare the first; the medians of the wall times, the differences of the
# medians of wall and CPU (user + sys) time (what the comparison adds to
# ppagg; on a loaded machine the CPU figure is the steadier) and ppagg's own
# wall time of the comparison (its summary line's "(in X s)"). The trees' databases are kept in
# $BENCH_WORK/compare (made once, a few minutes on 2 cores). Measures; never
# asserts.
: "${BENCH_RESULTS:=/dev/stdout}"
source "$(dirname "$0")/../bench-lib.sh"
bench_work compare
for s in 1 2; do
	t="$work/seed$s"
	if [ ! -s "$t/pptrace.db" ]; then
		rm -rf "$t"
		"$bindir/ppgen" --out "$t" --tp 8 --pp 16 --dp 8 --iterations 1 --seed "$s" -q &&
			"$bindir/ppbatch" --input "$t" -q &&
			"$bindir/ppagg" --base-folder "$t" --no-render -q || exit 1
		rm -rf "$t"/iteration_* "$t"/pptrace # the database and topology are all it needs
	fi
done
new="$work/seed2"
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
TIMEFORMAT='%R %U %S'
: >"$work/plain" && : >"$work/with" && : >"$work/own"
for _ in 1 2 3; do
	{ time "$bindir/ppagg" --base-folder "$new" --no-render >/dev/null 2>&1; } 2>>"$work/plain"
	{ time "$bindir/ppagg" --base-folder "$new" --no-render --compare "$work/seed1/pptrace.db" \
		>/dev/null 2>"$work/err"; } 2>>"$work/with"
	sed -n 's/.*compared with .*(in \([0-9.]*\) s).*/\1/p' "$work/err" | head -n 1 >>"$work/own"
done
wall() { awk '{ print $1 }' "$1" | median; }
cpu() { awk '{ printf "%.2f\n", $2 + $3 }' "$1" | median; }
own=$(median <"$work/own")
[ -n "$own" ] || { echo "compare bench: no 'compared with ... (in X s)' line from ppagg" >&2; exit 1; }
diff() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }'; }
{
	echo "compare_1024_ranks_ppagg_no_render_wall $(wall "$work/plain") s"
	echo "compare_1024_ranks_ppagg_with_compare_wall $(wall "$work/with") s"
	echo "compare_1024_ranks_added_wall $(diff "$(wall "$work/with")" "$(wall "$work/plain")") s"
	echo "compare_1024_ranks_added_cpu $(diff "$(cpu "$work/with")" "$(cpu "$work/plain")") s"
	echo "compare_1024_ranks_comparison_wall $own s"
} >>"$BENCH_RESULTS"
# ppagg without --compare empties the views again: leave the tree as made.
"$bindir/ppagg" --base-folder "$new" --no-render -q >/dev/null 2>&1
exit 0
