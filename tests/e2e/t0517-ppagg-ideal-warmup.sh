#!/bin/bash
# The ideal pipeline follows the warm-up rule the job ran (docs/ppagg.md
# "VPP"): with as many micro-batches as stages and VPP > 1, Megatron-LM up
# to 2023 runs every forward first and current Megatron core clamps the
# warm-up. Simulating the core rule for both would give a legacy job with
# uneven stages an ideal too short and a gap too large.
# ppgen (pp 3 x vpp 2, 3 micro-batches, stage 1 slowed) under each rule ->
# ppbatch -> ppagg; each ideal must be ppsim's makespan under the job's rule
# with the stage medians the database holds.
source "$PP_ROOT/tests/lib.sh"
# The lower median of each stage's fwd and bwd step walls (rank = stage
# here), as ppsim's per-stage lists for 2 chunks: "f0,f1,f2,f0,f1,f2 b0,...".
medians() {
	sql "$1/pptrace.db" "SELECT group_concat(w, ',') FROM (SELECT phase, rank, wall_ns AS w
		FROM (SELECT phase, rank, wall_ns, row_number() OVER (PARTITION BY rank, phase
			ORDER BY wall_ns) AS k, count(*) OVER (PARTITION BY rank, phase) AS n
		FROM steps WHERE iteration = 15 AND phase IN ('fwd', 'bwd') AND start_ns IS NOT NULL)
		WHERE k = (n - 1) / 2 + 1), (SELECT 0 AS c UNION ALL SELECT 1)
		GROUP BY phase ORDER BY phase DESC, c, rank" | tr '\n' ' '
}
makespan() { # makespan RULE FWD BWD
	ppsim --strategy interleave --devices 3 --stages 6 -m 3 --warmup "$1" --forward "$2" \
		--backward "$3" --json --no-visualization | sed -n 's/.*"makespan":\([0-9]*\).*/\1/p'
}
for rule in legacy core; do
	"$PP_FAST_BIN/ppgen" --out "$rule" --pp 3 --vpp 2 -m 3 --warmup "$rule" --slow-stage 1:1.3 \
		--layers 1 --kernels-per-layer 2 -q && "$PP_FAST_BIN/ppbatch" --input "$rule" -q &&
		ppagg --base-folder "$rule" --no-render -q 2>/dev/null
	is "$rule: generated, stored and aggregated" 0 "$?"
	read -r fwd bwd <<<"$(medians "$rule")"
	ok_if "$rule: six forward and six backward medians ($fwd / $bwd)" \
		test "$(echo "$fwd,$bwd" | tr ',' '\n' | grep -c '^[1-9][0-9]*$')" -eq 12
	ideal=$(sql "$rule/pptrace.db" "SELECT ideal_ns FROM pipelines WHERE iteration = 15")
	is "$rule: the ideal is ppsim's makespan under the $rule rule" \
		"$(makespan "$rule" "$fwd" "$bwd")" "${ideal:-no ideal_ns}"
	other=$([ "$rule" = legacy ] && echo core || echo legacy)
	alt=$(makespan "$other" "$fwd" "$bwd")
	ok_if "$rule: ... which the $other rule would not give ($alt against $ideal)" \
		test -n "$alt" -a "$alt" != "$ideal"
done
done_testing
