#!/bin/bash
# ppagg --compare on ppgen pairs of known truth (docs/compare.md): the same
# job with another seed (nothing flagged, three iterations and one);
# every compute kernel 5 % slower (compute flagged on every stage, the
# data-parallel communication not); one rank 1.5x slower (that rank, its
# stage, the what-if verdict none -> worker, exit 4); 1F1B against VPP 2 of
# the same model (step and bubble changes, the schedule change stated, a
# stage's compute unchanged); the data-parallel collectives of half the
# ranks 30 % slower (exactly those ranks, first, exit 4).
source "$PP_ROOT/tests/lib.sh"

# gen NAME OPTIONS...: a tree, analysed and aggregated (no charts).
gen() {
	local n=$1
	shift
	"$PP_FAST_BIN/ppgen" --out "$n" --quiet "$@" &&
		ppbatch --input "$n" -j 2 -q &&
		ppagg --base-folder "$n" --no-render -q 2>"$n.agg.err"
}
# compare NEW BASE [OPTIONS...]: ppagg --compare; its exit status in $rc.
compare() {
	local n=$1 b=$2
	shift 2
	ppagg --base-folder "$n" --no-render -q --compare "$b/pptrace.db" "$@" >"$n.out" 2>"$n.err"
	rc=$?
}
sentence() {
	sql "$1/pptrace.db" "SELECT sentence FROM comparison"
}
# The flagged rows of every comparison view.
flagged() {
	sql "$1/pptrace.db" "SELECT 'summary ' || metric FROM compare_summary WHERE flagged
		UNION ALL SELECT 'category ' || stage || ' ' || category FROM compare_categories WHERE flagged
		UNION ALL SELECT 'optype ' || stage || ' ' || optype FROM compare_optypes WHERE flagged
		UNION ALL SELECT 'group ' || stage || ' ' || kind FROM compare_groups WHERE flagged
		UNION ALL SELECT 'rank ' || rank FROM compare_ranks WHERE flagged"
}

A="--tp 2 --pp 4 --dp 2 --microbatches 8 --layers 2 --kernels-per-layer 4 --iterations 1,2,3"
gen a1 $A --seed 1 && gen a2 $A --seed 2 && gen a3 $A --seed 3 ||
	{ ok_if "ppgen, ppbatch, ppagg on the trees" false; done_testing; exit; }

# 1. Another seed: nothing flagged, over three iterations and one.
for p in "a2 a1" "a3 a1" "a3 a2"; do
	set -- $p
	compare "$1" "$2"
	is "seed $1 against $2: exit 0" 0 "$rc"
	is "... nothing flagged" "" "$(flagged "$1")"
	ok_if "... the sentence says so ($(sentence "$1"))" \
		sh -c "sqlite3 $1/pptrace.db 'SELECT sentence FROM comparison' | grep -q ': everything within noise.$'"
	compare "$1" "$2" --iterations 2 --compare-iterations iteration_2
	is "... one iteration each: nothing flagged" "0|" "$rc|$(flagged "$1")"
done
is "the comparison records what it compared" "$T/a2/pptrace.db|7|2|2|0" \
	"$(cd "$T" && ppagg --base-folder a3 --no-render -q --compare "$T/a2/pptrace.db" --iterations 2 \
		--compare-iterations 2 && sql a3/pptrace.db "SELECT baseline, baseline_version,
		base_iterations, new_iterations, regression FROM comparison")"
is "one iteration: the step's noise from its pipelines, or the floor" 1 \
	"$(sql a3/pptrace.db "SELECT noise_from IN ('pipelines', 'floor') FROM compare_summary
		WHERE metric = 'step_ns'")"

# 2. Every compute kernel 5 % slower.
gen acmp $A --seed 2 --slow-compute 1.05
compare acmp a1
is "compute 5 % slower: exit 0 (the step grew less than 5 %)" 0 "$rc"
is "... forward and backward compute flagged on every stage" "8" \
	"$(sql acmp/pptrace.db "SELECT count(*) FROM compare_categories WHERE flagged
		AND category IN ('fwd_computation', 'bwd_computation')")"
is "... by 5 %" "0.05|0.05" \
	"$(sql acmp/pptrace.db "SELECT round(min(change), 2), round(max(change), 2)
		FROM compare_categories WHERE category IN ('fwd_computation', 'bwd_computation')")"
is "... data-parallel communication not flagged" "0|0" \
	"$(sql acmp/pptrace.db "SELECT (SELECT count(*) FROM compare_categories WHERE flagged
		AND category = 'dp_communication'), (SELECT count(*) FROM compare_groups
		WHERE flagged AND kind = 'dp')")"
is "... no rank stands out" 0 "$(sql acmp/pptrace.db "SELECT count(*) FROM compare_ranks WHERE flagged")"
ok_if "... the sentence names compute first ($(sentence acmp))" \
	sh -c "sqlite3 acmp/pptrace.db 'SELECT sentence FROM comparison' |
		grep -q '^Step +4.[0-9] % (noise ±3.0 %): backward compute on every rank +5.[0-9] %; forward compute on every rank +5.[0-9] %'"

# 3. One rank 1.5x slower: that rank, its stage, the verdict.
gen astr $A --seed 2 --straggler 5:1.5
compare astr a1
is "rank 5 1.5x slower: exit 4 (a regression)" 4 "$rc"
is "... exactly rank 5 against its stage" "5|1|0.5|0.0" \
	"$(sql astr/pptrace.db "SELECT rank, stage, round(change, 1), round(stage_change, 1)
		FROM compare_ranks WHERE flagged")"
is "... the what-if verdict changed, flagged" "none|worker|1" \
	"$(sql astr/pptrace.db "SELECT base, new, flagged FROM compare_summary WHERE metric = 'whatif_verdict'")"
ok_if "... the sentence: the verdict, then the rank first ($(sentence astr))" \
	sh -c "sqlite3 astr/pptrace.db 'SELECT sentence FROM comparison' |
		grep -q '(verdict none → worker): compute on rank 5 (stage 1) +[45][0-9].[0-9] %'"
ok_if "... the regression said on stderr" grep -q "warning: compare: regression: the step time grew" astr.err

# 4. 1F1B against VPP 2 of the same model (half the layers per chunk).
V="--tp 1 --pp 4 --dp 2 --microbatches 8 --kernels-per-layer 4 --iterations 1,2,3"
gen v1 $V --layers 2 && gen v2 $V --layers 1 --vpp 2
compare v2 v1
is "VPP 2 against 1F1B: exit 0 (faster)" 0 "$rc"
is "... step and bubble shorter, flagged" "step_ns|1|-
bubble|1|-" "$(sql v2/pptrace.db "SELECT metric, flagged, CASE WHEN change < 0 THEN '-' ELSE '+' END
	FROM compare_summary WHERE metric IN ('step_ns', 'bubble')")"
is "... the schedule change stated" "vpp|1|2|schedule 1F1B → interleaved 1F1B: a stage's times are compared over all its model chunks, per-chunk times are not" \
	"$(sql v2/pptrace.db "SELECT metric, base, new, note FROM compare_summary WHERE metric = 'vpp'")"
ok_if "... and first in the sentence ($(sentence v2))" \
	sh -c "sqlite3 v2/pptrace.db 'SELECT sentence FROM comparison' |
		grep -q '^Step -[0-9.]* % (noise ±3.0 %), bubble [0-9.]* % → [0-9.]* %: schedule 1F1B → interleaved 1F1B (VPP 1 → 2)'"
is "... a stage's compute is the same: nothing per chunk" "0|8" \
	"$(sql v2/pptrace.db "SELECT sum(flagged), count(*) FROM compare_optypes
		WHERE optype IN ('forward-compute', 'backward-compute')")"
is "... ranks compared: the layout is the same" 8 "$(sql v2/pptrace.db "SELECT count(*) FROM compare_ranks")"

# 5. The DP collectives of half the ranks (0-3: stage 0) 30 % slower, on a
# job small enough that they are a tenth of its step.
D="--tp 2 --pp 2 --dp 2 --microbatches 2 --layers 1 --kernels-per-layer 1 --grad-reduce finish --iterations 1,2,3"
gen d1 $D --seed 1 && gen d2 $D --seed 2 && gen ddp $D --seed 2 --slow-dp 0-3:1.3
compare d2 d1
is "small job, another seed: nothing flagged" "0|" "$rc|$(flagged d2)"
compare ddp d1
is "DP collectives of ranks 0-3 30 % slower: exit 4" 4 "$rc"
is "... the dp groups of exactly stage 0 (ranks 0-3), +30 %" "0|0.3" \
	"$(sql ddp/pptrace.db "SELECT stage, round(change, 1) FROM compare_groups WHERE flagged AND kind = 'dp'")"
ok_if "... first in the sentence ($(sentence ddp))" \
	sh -c "sqlite3 ddp/pptrace.db 'SELECT sentence FROM comparison' |
		grep -q '^Step +[0-9.]* % (noise ±[0-9.]* %)[^:]*: data-parallel collectives on ranks 0–3 (stage 0) +[23][0-9].[0-9] %'"
is "... no rank's compute stands out" 0 "$(sql ddp/pptrace.db "SELECT count(*) FROM compare_ranks WHERE flagged")"
ok_if "... the sentence on stderr" grep -q "^ppagg: compared with d1/pptrace.db (iterations 1, 2, 3): Step +" ddp.err
done_testing
