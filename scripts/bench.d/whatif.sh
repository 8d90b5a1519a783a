#!/bin/bash
# The what-if analysis (docs/whatif.md): the AR sample of the reference
# (reading its op trace, the analysis, both) and a synthetic 1,024-worker
# job (PP 16 x DP 64, 64 micro-batches, 10 iterations) generated in memory;
# then both through the commands: `ppbatch --format optrace` (read,
# validate, store) and ppagg's what-if part (read the ops from the
# database, analyse, store the views: the "N ops in S s" of its summary).
# Targets: AR <= 50 ms, 1,024 workers <= 2 s; the reference's Python needs
# ~2 s per job plus ~0.5 s for each of M_S and M_W. Medians of 5 runs
# (commands: of 3), wall and CPU time (on a shared, loaded machine the CPU
# time is the stable number). Also the instruction count of one AR read +
# analysis (callgrind) when valgrind is installed. Measures; never asserts.
source "$(dirname "$0")/../bench-lib.sh"
bench_work whatif
bench_program whatif_bench -Itests/unit/whatif "-lz -lm" \
	tests/bench/whatif_bench.c tests/unit/whatif/wi_synth.c || exit 1
ar="${PP_SHARED:-$PWD/../shared}/data/whatif"
args=()
if [ -r "$ar/trace-AR.csv.gz" ]; then
	args=(--ar "$ar")
else
	echo "whatif: no AR sample at $ar: only the synthetic job" >&2
fi
"$bin" "${args[@]}" --runs 5 --write-csv "$work/synth.csv" | tee "$work/out" | tee -a "$BENCH_RESULTS"
if [ ${#args[@]} -gt 0 ] && command -v valgrind >/dev/null; then
	valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" "$bin" "${args[@]}" --runs 1 \
		--pp 2 --dp 2 --mb 2 --steps 1 >/dev/null 2>"$work/callgrind.log"
	ir=$(awk '/^summary:/ { print $2 }' "$work/callgrind.out")
	[ -n "$ir" ] && echo "whatif_ar_read_and_analysis_instructions $ir Ir" | tee -a "$BENCH_RESULTS"
fi

# Through the commands: NAME INPUT [ppbatch options]; 3 runs, medians.
commands() {
	local name=$1 input=$2 k real user sys
	shift 2
	: >"$work/import.t" && : >"$work/agg.t"
	# As a first read from disk leaves it (docs/reader.md, "The page cache's state").
	scripts/bench-cache read "$input" || return 1
	for k in 1 2 3; do
		rm -f "$work/$name.db"*
		TIMEFORMAT='%R %U %S'
		{ time "$bindir/ppbatch" --format optrace --input "$input" --db "$work/$name.db" -q "$@"; } \
			2>>"$work/import.t" || return 1
		"$bindir/ppagg" --db "$work/$name.db" --out "$work/$name.out" --no-render -j 1 \
			2>"$work/agg.err" >/dev/null || return 1
		sed -n 's/.* ops in \([0-9.]*\) s).*/\1/p' "$work/agg.err" >>"$work/agg.t"
	done
	med() { sort -n | sed -n 2p; }
	real=$(awk '{ print $1 }' "$work/import.t" | med)
	user=$(awk '{ print $2 + $3 }' "$work/import.t" | med)
	echo "whatif_${name}_ppbatch_optrace_s $real s" | tee -a "$BENCH_RESULTS"
	echo "whatif_${name}_ppbatch_optrace_cpu_s $user s" | tee -a "$BENCH_RESULTS"
	echo "whatif_${name}_ppagg_whatif_s $(med <"$work/agg.t") s" | tee -a "$BENCH_RESULTS"
}
if [ ${#args[@]} -gt 0 ]; then
	commands ar "$ar/trace-AR.csv.gz" --meta "$ar/meta-AR.yaml" \
		--schema "$ar/trace-AR.schema.json" || echo "whatif: AR through the commands failed" >&2
fi
commands synth "$work/synth.csv" || echo "whatif: the synthetic job through the commands failed" >&2
rm -rf "$work/synth.csv" "$work"/*.db* "$work"/*.out
exit 0
