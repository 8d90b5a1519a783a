#!/bin/bash
# ppagg: (1) a 1024-rank database (tp8 pp8 dp16, 32 micro-batches, 2 compute
# kernels per step; written by tests/e2e/mkaggdb.py in the real schema)
# aggregated without rendering: the aggregation itself (views read, metrics,
# rows written) and the whole run (plus 2192 chart scripts, CSVs, HTML), wall
# and CPU seconds; (2) gnuplot time per chart (rank timeline and overlap, an
# 8-rank PP group, a 64-rank model replica); (3) parallel rendering of a
# 64-rank run (149 charts) with -j = cores.
# Appends "name value unit" lines to $BENCH_RESULTS.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
export PP_BIN=${PP_BIN:-$root/build/bin}
bin=$PP_BIN
res=${BENCH_RESULTS:-/dev/stdout}
work=$(mktemp -d "${BENCH_WORK:-${TMPDIR:-/tmp}}/ppagg.XXXXXX")
trap 'rm -rf "$work"' EXIT
mk="python3 $root/tests/e2e/mkaggdb.py"

mkdir -p "$work/big"
$mk --db "$work/big/pptrace.db" --tp 8 --pp 8 --dp 16 --mb 32 --kernels 2 \
	--straggler 77:1.3 --topology "$work/big/unique_parallel_groups_1.txt"
TIMEFORMAT='%R %U %S'
{ time "$bin/ppagg" --base-folder "$work/big" --no-render 2>"$work/agg.err" >/dev/null; } 2>"$work/time"
read -r real user sys <"$work/time"
agg=$(sed -n 's/.*aggregated in \([0-9.]*\) s.*/\1/p' "$work/agg.err")
echo "ppagg_1024_ranks_aggregate_wall $agg s" >>"$res"
echo "ppagg_1024_ranks_no_render_wall $real s" >>"$res"
echo "ppagg_1024_ranks_no_render_cpu $(echo "$user $sys" | awk '{printf "%.2f", $1 + $2}') s" >>"$res"

it="$work/big/pptrace/iteration_15"
for c in rank_0/timeline rank_0/overlap pp_group_0/timeline model_group_0/timeline; do
	d=$(dirname "$c")
	{ time (cd "$it/$d" && gnuplot "$(basename "$c").gp"); } 2>"$work/time"
	read -r real user sys <"$work/time"
	name=$(echo "$c" | tr '/' '_' | sed 's/_0_/_/')
	echo "ppagg_render_${name}_wall $(echo "$real" | awk '{printf "%.0f", $1 * 1000}') ms" >>"$res"
	echo "ppagg_render_${name}_cpu $(echo "$user $sys" | awk '{printf "%.0f", ($1 + $2) * 1000}') ms" >>"$res"
done

mkdir -p "$work/small"
$mk --db "$work/small/pptrace.db" --tp 1 --pp 8 --dp 8 --mb 16 \
	--topology "$work/small/unique_parallel_groups_1.txt"
j=$(nproc)
"$bin/ppagg" --base-folder "$work/small" -j "$j" 2>"$work/small.err" >/dev/null
per=$(sed -n 's/.*rendering: [0-9]* charts, \([0-9.]*\) ms per chart.*/\1/p' "$work/small.err")
[ -n "$per" ] || { echo "ppagg bench: no 'rendering: N charts, X ms per chart' line from ppagg" >&2; exit 1; }
charts=$(sed -n 's/.*rendering: \([0-9]*\) charts, .*/\1/p' "$work/small.err")
echo "ppagg_render_64_ranks_charts $charts charts" >>"$res"
echo "ppagg_render_64_ranks_ms_per_chart_j$j $per ms" >>"$res"
