#!/bin/bash
# pptrace against Meta's Holistic Trace Analysis (HTA) on the largest real
# trace (../shared/data/real/hta/df_index_resolver, 54 MB of JSON), in one
# run: pptrace end to end (ppbatch --input -j 1 into a new database, then
# ppagg --no-render) and, when the Python package `hta` imports,
# tests/bench/hta_run.py (HTA loads the trace, then its temporal breakdown,
# idle time and comm/comp overlap), medians of 5 wall times, alternately.
# Where HTA is not installed the results say so instead of a figure.
#   PP_BASELINE_BIN=dir  also time an older build's bin folder the same way,
#                        alternately (HTA_BASELINE_COMMIT names it): with
#                        HTA_BASELINE_X, HTA's time measured against that
#                        commit elsewhere, the results estimate HTA's ratio
#                        to today's build (an estimate, and labelled so).
# Appends "name value unit" lines to $BENCH_RESULTS. Measures; never asserts.
set -u
cd "$(dirname "$0")/../.."
: "${BENCH_RESULTS:=/dev/null}" "${BENCH_WORK:=bench/work}"
PP_BIN=${PP_BIN:-$PWD/build/bin}
real=${PP_SHARED:-$PWD/../shared}/data/real/hta/df_index_resolver__df_index_resolver.json.gz
if [ ! -f "$real" ]; then
	echo "# hta: skipped: $real not found" >>"$BENCH_RESULTS"
	exit 0
fi
W="$BENCH_WORK/hta"
rm -rf "$W"
mkdir -p "$W/tree/iteration_1" "$W/hta"
zcat "$real" >"$W/tree/iteration_1/rank_0.json"
ln -s "$(cd "$W/tree/iteration_1" && pwd)/rank_0.json" "$W/hta/rank_0.json"
bytes=$(stat -c %s "$W/tree/iteration_1/rank_0.json")
# In the page cache as a first read from disk leaves it (docs/reader.md).
scripts/bench-cache read "$W/tree/iteration_1/rank_0.json" || exit 1

have_hta=0
base=${PP_BASELINE_BIN:-}
[ -n "$base" ] && [ ! -x "$base/ppbatch" ] && { echo "hta bench: $base/ppbatch not found" >&2; exit 1; }
python3 -c 'import hta' 2>/dev/null && have_hta=1
TIMEFORMAT=%R
# end_to_end BIN TIMES: one timed ppbatch + ppagg --no-render into a new database.
end_to_end() {
	rm -rf "$W/tree/pptrace.db"* "$W/tree/pptrace"
	sync
	{ time {
		"$1/ppbatch" --input "$W/tree" --pattern '*' -j 1 --quiet &&
			"$1/ppagg" --base-folder "$W/tree" --no-render >/dev/null 2>&1
	}; } 2>>"$2"
}
for round in 1 2 3 4 5; do
	end_to_end "$PP_BIN" "$W/pp.times" || { echo "hta bench: pptrace failed" >&2; exit 1; }
	if [ -n "$base" ]; then
		end_to_end "$base" "$W/base.times" || { echo "hta bench: the baseline failed" >&2; exit 1; }
	fi
	if [ "$have_hta" = 1 ]; then
		python3 tests/bench/hta_run.py "$W/hta" >>"$W/hta.times" 2>"$W/hta.err" ||
			{ echo "hta bench: HTA failed: $(tail -3 "$W/hta.err")" >&2; have_hta=2; }
	fi
done
pp=$(sort -g "$W/pp.times" | sed -n 3p)
{
	echo "hta_trace_mb $(awk -v b="$bytes" 'BEGIN { printf "%.0f", b / 1e6 }') MB"
	echo "hta_pptrace_end_to_end_s $pp s"
	if [ -n "$base" ]; then
		b=$(sort -g "$W/base.times" | sed -n 3p)
		x=$(awk -v b="$b" -v p="$pp" 'BEGIN { printf "%.2f", (p > 0 ? b / p : 0) }')
		echo "hta_baseline_end_to_end_s $b s (${HTA_BASELINE_COMMIT:-baseline})"
		echo "hta_pptrace_vs_baseline $x x"
		[ -n "${HTA_BASELINE_X:-}" ] && [ "$have_hta" != 1 ] &&
			echo "hta_estimated_vs_hta $(awk -v a="$HTA_BASELINE_X" -v x="$x" 'BEGIN { printf "%.0f", a * x }') x (estimate: HTA measured at ${HTA_BASELINE_X}x ${HTA_BASELINE_COMMIT:-the baseline}, times this run's ratio to it)"
	fi
	if [ "$have_hta" = 1 ]; then
		h=$(sort -g "$W/hta.times" | sed -n 3p)
		echo "hta_hta_s $h s"
		echo "hta_pptrace_vs_hta $(awk -v h="$h" -v p="$pp" 'BEGIN { printf "%.1f", (p > 0 ? h / p : 0) }') x"
	elif [ "$have_hta" = 2 ]; then
		echo "# hta: HTA failed on this trace (see $W/hta.err); no comparison"
	else
		echo "# hta: not measured: the Python package hta (HolisticTraceAnalysis) does not import here; install it to compare"
	fi
} | tee -a "$BENCH_RESULTS"
exit 0
