#!/bin/bash
# The what-if analysis (docs/whatif.md): the AR sample of the reference
# (reading its op trace, the analysis, both) and a synthetic 1,024-worker
# job (PP 16 x DP 64, 64 micro-batches, 10 iterations) generated in memory.
# Targets: AR <= 50 ms, 1,024 workers <= 2 s; the reference's Python needs
# ~2 s per job plus ~0.5 s for each of M_S and M_W. Medians of 5 runs, wall
# and CPU time (on a shared, loaded machine the CPU time is the stable
# number). Also the instruction count of one AR analysis (callgrind) when
# valgrind is installed. Measures; never asserts.
set -u
cd "$(dirname "$0")/../.."
: "${BENCH_RESULTS:=/dev/null}" "${BENCH_WORK:=bench/work}"
work="$BENCH_WORK/whatif"
mkdir -p "$work"
bin="$work/whatif_bench"
srcs="tests/bench/whatif_bench.c tests/unit/whatif/wi_synth.c"
if [ ! -x "$bin" ] || [ -n "$(find $srcs build/libpp.a build/libpputil.a -newer "$bin" 2>/dev/null)" ]; then
	libs="-lz -lm"
	# the library's gzip input uses ISA-L when the build found it
	nm build/libpp.a 2>/dev/null | grep -q 'U isal_inflate' && libs="$libs -lisal"
	${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -I. -Ipipeline -Itests/unit/whatif -o "$bin" $srcs \
		build/libpp.a build/libpputil.a $libs || exit 1
fi
ar="${PP_SHARED:-$PWD/../shared}/data/whatif"
args=()
if [ -r "$ar/trace-AR.csv.gz" ]; then
	args=(--ar "$ar")
else
	echo "whatif: no AR sample at $ar: only the synthetic job" >&2
fi
"$bin" "${args[@]}" --runs 5 | tee "$work/out" | tee -a "$BENCH_RESULTS"
if [ ${#args[@]} -gt 0 ] && command -v valgrind >/dev/null; then
	valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" "$bin" "${args[@]}" --runs 1 \
		--pp 2 --dp 2 --mb 2 --steps 1 >/dev/null 2>"$work/callgrind.log"
	ir=$(awk '/^summary:/ { print $2 }' "$work/callgrind.out")
	[ -n "$ir" ] && echo "whatif_ar_read_and_analysis_instructions $ir Ir" | tee -a "$BENCH_RESULTS"
fi
exit 0
