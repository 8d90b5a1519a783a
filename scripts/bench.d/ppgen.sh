#!/bin/bash
# ppgen: seconds to write one 1 GB single-rank trace (tp1 pp1 dp1, 1730 layers
# x 64 kernels x 4 micro-batches = about 1.03 GB of JSON), truth included.
# Appends "ppgen_1gb_seconds <value> s" to $BENCH_RESULTS.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${PP_BIN:-$root/build/bin}
out=$(mktemp -d "${BENCH_WORK:-${TMPDIR:-/tmp}}/ppgen.XXXXXX")
trap 'rm -rf "$out"' EXIT
t0=$(date +%s.%N)
"$bin/ppgen" --out "$out/t" --layers 1730 --kernels-per-layer 64 --microbatches 4 --quiet
t1=$(date +%s.%N)
bytes=$(stat -c %s "$out"/t/iteration_15/rank_0000_iter_15.pt.trace.json)
secs=$(echo "$t0 $t1 $bytes" | awk '{printf "%.2f", ($2 - $1) * 1e9 / $3}')
echo "ppgen_1gb_seconds $secs s" >>"${BENCH_RESULTS:-/dev/stdout}"
