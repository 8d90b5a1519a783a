#!/bin/bash
# A what-if cell's slow rank is named by the straggler flag's own comparison
# (docs/whatif.md §9.2): more than agg.straggler_threshold above the cell's
# lower median, so a rank exactly at the threshold is not named. A test of
# sum > median × (1 + threshold) in doubles would name it: on this job (TP
# 2, rank 5 of cell 4-5 slowed, seed 1, iteration 15) median × (1 +
# threshold) rounds below the sum.
# ppgen -> ppbatch -> ppagg with the threshold at the cell's own excess, then
# just below it.
source "$PP_ROOT/tests/lib.sh"
"$PP_FAST_BIN/ppgen" --out j --tp 2 --pp 4 --dp 2 -m 8 --iterations 15 --straggler 5:1.3 \
	--seed 1 -q && "$PP_FAST_BIN/ppbatch" --input j --quiet
is "job generated and stored" 0 "$?"
# The cell's compute per rank: busy of fwd_computation + bwd_computation.
sums=$(sql j/pptrace.db "SELECT group_concat(c, ' ') FROM (SELECT sum(busy_ns) AS c
	FROM category_stats WHERE category IN ('fwd_computation', 'bwd_computation')
	AND rank IN (4, 5) GROUP BY rank ORDER BY rank)")
read -r lo hi <<<"$sums"
ok_if "rank 5 computes more than its partner 4 ($sums)" test "${hi:-0}" -gt "${lo:-0}" -a "${lo:-0}" -gt 0
# The excess as a double, (hi - lo) / lo, printed so that it reads back exact.
at=$(awk -v lo="$lo" -v hi="$hi" 'BEGIN { printf "%.17g", (hi - lo) / lo }')
below=$(awk -v lo="$lo" -v hi="$hi" 'BEGIN { printf "%.17g", (hi - lo) / lo * 0.999 }')
slow_of_cell() { # threshold: the slow rank named for the cell of ranks 4-5
	printf '[agg]\nstraggler_threshold = %s\n' "$1" >agg.ini
	ppagg --base-folder j --config agg.ini --no-render -q 2>/dev/null || return 1
	sql j/pptrace.db "SELECT coalesce(slow_rank, 'none') FROM whatif_workers WHERE rank = 4"
}
is "threshold just below the excess ($below): rank 5 named" 5 "$(slow_of_cell "$below")"
is "threshold at the excess ($at): not more than it, none named" none "$(slow_of_cell "$at")"
done_testing
