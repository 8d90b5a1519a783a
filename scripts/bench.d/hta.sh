#!/bin/bash
# pptrace against Meta's Holistic Trace Analysis (HTA) on the largest real
# trace (../shared/data/real/hta/df_index_resolver, 54 MB of JSON), in one
# run: pptrace end to end (ppbatch --input -j 1 into a new database, then
# ppagg --no-render) and, when the Python package `hta` imports,
# tests/bench/hta_run.py (HTA loads the trace, then its temporal breakdown,
# idle time and comm/comp overlap), medians of 3 wall times, alternately.
# Where HTA is not installed the results say so instead of a figure.
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

have_hta=0
python3 -c 'import hta' 2>/dev/null && have_hta=1
TIMEFORMAT=%R
for round in 1 2 3; do
	rm -rf "$W/tree/pptrace.db"* "$W/tree/pptrace"
	sync
	{ time {
		"$PP_BIN/ppbatch" --input "$W/tree" --pattern '*' -j 1 --quiet &&
			"$PP_BIN/ppagg" --base-folder "$W/tree" --no-render >/dev/null 2>&1
	}; } 2>>"$W/pp.times" || { echo "hta bench: pptrace failed" >&2; exit 1; }
	if [ "$have_hta" = 1 ]; then
		python3 tests/bench/hta_run.py "$W/hta" >>"$W/hta.times" 2>"$W/hta.err" ||
			{ echo "hta bench: HTA failed: $(tail -3 "$W/hta.err")" >&2; have_hta=2; }
	fi
done
pp=$(sort -g "$W/pp.times" | sed -n 2p)
{
	echo "hta_trace_mb $(awk -v b="$bytes" 'BEGIN { printf "%.0f", b / 1e6 }') MB"
	echo "hta_pptrace_end_to_end_s $pp s"
	if [ "$have_hta" = 1 ]; then
		h=$(sort -g "$W/hta.times" | sed -n 2p)
		echo "hta_hta_s $h s"
		echo "hta_pptrace_vs_hta $(awk -v h="$h" -v p="$pp" 'BEGIN { printf "%.1f", (p > 0 ? h / p : 0) }') x"
	elif [ "$have_hta" = 2 ]; then
		echo "# hta: HTA failed on this trace (see $W/hta.err); no comparison"
	else
		echo "# hta: not measured: the Python package hta (HolisticTraceAnalysis) does not import here; install it to compare"
	fi
} | tee -a "$BENCH_RESULTS"
exit 0
