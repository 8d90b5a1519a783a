#!/bin/bash
# ppagg --compare on schedule dumps (ppbatch --format pp-timer), which store
# steps without kernels (docs/compare.md "Imports"): the same model run
# 1F1B and interleaved (VPP 2), and with fewer micro-batches. They compare
# without error, name the schedule change, and compare a stage's forward
# and backward time (unchanged: the same work) besides step and bubble.
source "$PP_ROOT/tests/lib.sh"

# The dumps, from ppsim's schedules of one model: 4 devices, forward 1.5 ms
# and backward 3.25 ms per micro-batch a stage (interleaved: two chunks of
# half that); shifted by 0.125 ms as a real dump's clock.
ppsim --devices 4 --microbatches 8 --forward 1.5 --backward 3.25 --json --no-visualization >m8.json &&
	ppsim --devices 4 --microbatches 6 --forward 1.5 --backward 3.25 --json --no-visualization >m6.json &&
	ppsim --strategy interleave --devices 4 --stages 8 --microbatches 8 --forward 0.75 \
		--backward 1.625 --json --no-visualization >il.json ||
	{ ok_if "ppsim" false; done_testing; exit; }
dump="python3 $PP_ROOT/tests/e2e/pptimer-dump.py"
$dump m8.json plain/iteration_3 4 1 && $dump m6.json m6/iteration_3 4 1 && $dump il.json vpp/iteration_3 4 2 ||
	{ ok_if "the dumps" false; done_testing; exit; }
for d in plain m6; do
	ppbatch --format pp-timer --input $d --pp-size 4 --vpp-size 1 -q &&
		ppagg --base-folder $d --pp 4 --no-render -q
done
ppbatch --format pp-timer --input vpp --pp-size 4 --vpp-size 2 -q && ppagg --base-folder vpp --pp 4 --no-render -q 2>/dev/null
is "the dumps imported and aggregated" "4|4|4" \
	"$(for d in plain m6 vpp; do sql $d/pptrace.db "SELECT count(*) FROM pipelines JOIN pp_groups USING (iteration, pp_group)"; done | paste -sd'|')"

# 1F1B -> interleaved, the same model.
ppagg --base-folder vpp --pp 4 --no-render -q --compare plain/pptrace.db 2>err
is "interleaved against 1F1B: exit 0" 0 $?
is "... the schedule change stated" "vpp|1|2|1" \
	"$(sql vpp/pptrace.db "SELECT metric, base, new, flagged FROM compare_summary WHERE note IS NOT NULL")"
is "... the step 13.6 % shorter, the bubble 42 % smaller (ppsim's makespans)" "step_ns|-0.136|1
bubble|-0.421|1" "$(sql vpp/pptrace.db "SELECT metric, round(change, 3), flagged FROM compare_summary
	WHERE metric IN ('step_ns', 'bubble')")"
is "... the steps' times" "52250000.0|45125000.0" \
	"$(sql vpp/pptrace.db "SELECT base, new FROM compare_summary WHERE metric = 'step_ns'")"
is "... each stage's forward and backward time the same (from the steps)" "8|0|0.0" \
	"$(sql vpp/pptrace.db "SELECT count(*), sum(flagged), max(abs(change)) FROM compare_categories
		WHERE category IN ('fwd_computation', 'bwd_computation') AND stage IS NOT NULL")"
is "... the sentence" "Step -13.6 % (noise ±3.0 %), bubble 27.3 % → 15.8 %: schedule 1F1B → interleaved 1F1B (VPP 1 → 2); everything else within noise." \
	"$(sql vpp/pptrace.db "SELECT sentence FROM comparison")"
is "... each stage's rank compared" "4|0" "$(sql vpp/pptrace.db "SELECT count(*), sum(flagged) FROM compare_ranks")"

# 8 -> 6 micro-batches.
ppagg --base-folder m6 --pp 4 --no-render -q --compare plain/pptrace.db
is "6 micro-batches against 8: exit 0" 0 $?
is "... the change stated" "microbatches|8|6" \
	"$(sql m6/pptrace.db "SELECT metric, base, new FROM compare_summary WHERE metric = 'microbatches'")"
ok_if "... first in the sentence" sh -c "sqlite3 m6/pptrace.db 'SELECT sentence FROM comparison' |
	grep -q '^Step -[0-9.]* % (noise ±3.0 %)[^:]*: micro-batches 8 → 6; '"
is "... a stage's forward time 25 % shorter (6 of 8 micro-batches)" "-0.25" \
	"$(sql m6/pptrace.db "SELECT DISTINCT round(change, 2) FROM compare_categories WHERE category = 'fwd_computation'")"
done_testing
