#!/bin/bash
# `ppbatch --format optrace` and ppagg's what-if on hand-made op traces
# (tests/fixtures/whatif/pp2dp2.csv: PP 2 x DP 2, replica 1 slow):
# - the slow worker comes first, verdict worker; a merge keeps it all;
# - an even job (every lane the same) is below the threshold: verdict none,
#   the decompositions empty, M_W and the workers' ratios NULL;
# - an incomplete grid (a second import holding one replica of a third
#   step; the same ranks imported twice) gives one line saying what is
#   missing, empty views and exit 1; --iterations picks complete ones;
# - bad inputs: a specific message (file, line, what), nothing stored,
#   exit 2 for what cannot be opened and 1 for what is wrong inside;
# - re-running replaces the import, also when the file changed.
source "$PP_ROOT/tests/lib.sh"
FIX=$PP_ROOT/tests/fixtures/whatif
cp "$FIX/pp2dp2.csv" "$FIX/pp2dp2.yaml" .

ppbatch --format optrace --input pp2dp2.csv --meta pp2dp2.yaml --db h.db >out 2>&1
is "import: exit 0" 0 $?
ok_if "the placeholders the engine inserts are noted" \
	grep -q "pp2dp2.csv: note: placeholder: a zero-length layernorm-grads-all-reduce_0_1" out
ppagg --db h.db --no-render >out 2>&1
is "ppagg: exit 0" 0 $?
is "the report lists the imported ranks as optrace, not megatron" 8 \
	"$(cat pptrace/iteration_*.html | grep -c "<td>ok</td><td>optrace</td>")"
ok_if "headline: the slow worker first" \
	grep -q "what-if: S 1.185, verdict worker, M_W 1.652 (1 worker), M_S -0.489; top workers: rank 1 (dp 1, stage 0) 1.276," out
is "whatif" "2|5|7|1.1855|worker|1|1.652" \
	"$(sql h.db "SELECT iterations, first_iteration, last_iteration, round(slowdown, 4),
		verdict, m_w_ranks, round(m_w, 3) FROM whatif")"
is "whatif_workers, slowest first" "1|1|0|1.2762
0|0|0|1.0
2|0|1|0.879
3|1|1|0.879" "$(sql h.db "SELECT rank, dp_rank, stage, round(slowdown, 4) FROM whatif_workers")"
is "whatif_optypes: 11 groups, backward-compute first" "11|backward-compute" \
	"$(sql h.db "SELECT count(*), (SELECT optype FROM whatif_optypes LIMIT 1) FROM whatif_optypes")"
is "whatif_steps" "5|0.819|0.1015
7|1.552|0.1925" \
	"$(sql h.db "SELECT iteration, round(slowdown, 3), round(t_ns / 1e9, 4) FROM whatif_steps")"
is "the ops' workers" "0|0|0
1|1|0
2|0|1
3|1|1" "$(sql h.db "SELECT DISTINCT rank, dp_rank, stage FROM ops ORDER BY rank")"

# A merge carries the ops, their workers and the import.
ppbatch --merge --db merged.db h.db >/dev/null 2>&1
is "ppbatch --merge of the database: exit 0" 0 $?
q="SELECT * FROM ops ORDER BY iteration, rank, optype, seq_id"
is "the merged ops" "$(sql h.db "$q")" "$(sql merged.db "$q")"
is "... with the import's meta" "pp2dp2|2|1" \
	"$(sql merged.db "SELECT trial_name, dp_size, count(*) FROM op_source")"
ppagg --db merged.db --no-render -q
is "... and the same analysis" "$(sql h.db "SELECT * FROM whatif")" \
	"$(sql merged.db "SELECT * FROM whatif")"

# An even job: replica 0 of step 5 in every lane of steps 5 and 6.
awk -F, -v OFS=, 'NR == 1 { print; next }
	$1 == 0 && $4 == 5 { r = $3; for (s = 5; s <= 6; s++) for (d = 0; d < 2; d++) {
		$1 = d; $3 = r + d; $4 = s; print } }' pp2dp2.csv >even.csv
ppbatch --format optrace --input even.csv --db even.db -q &&
	ppagg --db even.db --no-render >out 2>&1
is "even job: exit 0" 0 $?
ok_if "headline: below the threshold" \
	grep -q "what-if: S 1.000 (below 1.03: no straggler worth explaining; 116 ops in [0-9.]* s)" out
is "whatif: verdict none, M_W and its ranks NULL, M_S computed" "none|NULL|NULL|NULL|0.6" \
	"$(sql even.db "SELECT verdict, coalesce(m_w, 'NULL'), coalesce(m_w_add, 'NULL'),
		coalesce(m_w_ranks, 'NULL'), round(m_s, 3) FROM whatif")"
is "no S_t" 0 "$(sql even.db "SELECT count(*) FROM whatif_optypes")"
is "the workers are listed, their ratios NULL" "4|0|0|0" \
	"$(sql even.db "SELECT count(*), count(s_dp), count(s_pp), count(slowdown) FROM whatif_workers")"
is "per step S still" "2" "$(sql even.db "SELECT count(slowdown) FROM whatif_steps")"

# An incomplete grid: step 9 of replica 0 only, from a second file (valid on
# its own: DP 1 x PP 2, so without DP collectives).
awk -F, -v OFS=, 'NR == 1 { print; next }
	$1 == 0 && $4 == 5 && $5 != "params-all-gather" && $5 != "grads-reduce-scatter" {
		$4 = 9; print }' pp2dp2.csv >step9.csv
ppbatch --format optrace --input step9.csv --db h.db -q
is "importing the one-replica step: exit 0" 0 $?
ppagg --db h.db --no-render >out 2>&1
is "ppagg over iterations 5, 7 and 9: exit 1" 1 $?
is "one line says what is missing" \
	"ppagg: warning: what-if: not computed: the ops of 3 iterations do not fill the 2 x 2 grid (dp x stage) in each: iteration 9 lacks dp 1 stage 0; iteration 9 lacks dp 1 stage 1" \
	"$(grep "warning: what-if" out)"
ok_if "the headline says so" grep -q "; what-if: not computed\(; advice: [^;]*\)\?; report:" out
is "the views are empty" "0|0|0|0" "$(sql h.db "SELECT (SELECT count(*) FROM whatif),
	(SELECT count(*) FROM whatif_optypes), (SELECT count(*) FROM whatif_workers),
	(SELECT count(*) FROM whatif_steps)")"
ppagg --db h.db --iterations 5 7 --no-render -q
is "--iterations 5 7: exit 0" 0 $?
is "... and the analysis is back" "2|worker" "$(sql h.db "SELECT iterations, verdict FROM whatif")"

# The same ranks imported twice (a copy of the file): rank conflicts, which
# ppbatch reports and ppagg does not aggregate.
cp pp2dp2.csv copy.csv
ppbatch --format optrace --input pp2dp2.csv --db c.db -q
ppbatch --format optrace --input copy.csv --db c.db >out 2>&1
is "a second import of the same ranks: exit 1" 1 $?
ok_if "it names a conflict" grep -q "rank conflict: iteration 5, rank 0 is also claimed" out
ok_if "... and counts the others" grep -q "rank conflict: 5 more of the import's traces" out
ppagg --db c.db --no-render >out 2>&1
is "ppagg: exit 1" 1 $?
ok_if "the grid lacks the conflicting ranks" grep -q \
	"what-if: not computed: the ops stored for these iterations belong to no aggregated rank" out
# The copy changes: importing it again replaces its earlier import whole
# (its steps 5 and 7 go, step 9 comes), and the conflicts go with them.
cp step9.csv copy.csv
ppbatch --format optrace --input copy.csv --db c.db -q
is "the changed file replaces its import: exit 0" 0 $?
is "its steps now" "9" \
	"$(sql c.db "SELECT DISTINCT iteration FROM ranks WHERE folder = 'copy.csv' ORDER BY 1")"
is "no conflict left" 0 "$(sql c.db "SELECT count(*) FROM rank_conflicts")"

# Bad inputs: a message naming the file and the line, nothing stored.
dump() {
	sql "$1" "SELECT count(*), sum(start_ns), sum(end_ns) FROM ops; SELECT * FROM ranks;
		SELECT * FROM steps; SELECT path, trial_name, optype_order FROM op_source"
}
dump h.db >before
bad() { # bad DESC STATUS MESSAGE FILE [ARGS...]: the import fails so and stores nothing
	local desc=$1 status=$2 msg=$3 file=$4
	shift 4
	ppbatch --format optrace --input "$file" --db h.db "$@" >out 2>&1
	is "$desc: exit $status" "$status" $?
	is "$desc: the message" "$msg" "$(cat out)"
	ok_if "$desc: nothing stored" cmp -s before <(dump h.db)
}
cp pp2dp2.csv b.csv
sed -i '3s/,0.074,/,abc,/' b.csv
bad "a bad number" 1 \
	"ppbatch: error: b.csv:3: column 'start_ts': 'abc' is not a decimal number of seconds" b.csv
cp pp2dp2.csv b.csv
sed -i '5s/backward-recv/backward-recieve/' b.csv
bad "an unknown op type" 1 \
	"ppbatch: error: b.csv:5: column 'optype': unknown op type 'backward-recieve'" b.csv
grep -v '^1,1,3,7,forward-compute,[^,]*,[^,]*,1,' pp2dp2.csv >b.csv
bad "a missing op" 1 \
	"ppbatch: error: b.csv: step 7, dp_rank 1 lacks forward-compute_1_1, which step 5, dp_rank 0 has: every (step, dp_rank) must have the same ops" b.csv
(cat pp2dp2.csv; sed -n 2p pp2dp2.csv) >b.csv
bad "a duplicate op" 1 \
	"ppbatch: error: b.csv:118: backward-compute_0_0 appears twice in step 5, dp_rank 0 (rank 0)" b.csv
sed 's/^step,/stop,/; 1s/,step,/,stop,/' pp2dp2.csv >b.csv
bad "a missing column" 1 \
	"ppbatch: error: b.csv:1: the header lacks column 'step' (an op trace needs dp_rank, stage, rank, step, optype, start_ts, duration, seq_id, mc, mb_id, gmc)" b.csv
gzip -c pp2dp2.csv | head -c 400 >b.csv.gz
bad "a truncated gzip file" 1 \
	"ppbatch: error: cannot read 'b.csv.gz': the gzip data ends before its last member does (a truncated file)" b.csv.gz
sed 's/world_size: 4/world_size: 8/' pp2dp2.yaml >b.yaml
bad "a meta that does not add up" 1 \
	"ppbatch: error: b.yaml: world_size is 8 but dp_size*pp_size*tp_size*dsp_size = 2*2*1*1 = 4" \
	pp2dp2.csv --meta b.yaml
bad "a missing file" 2 \
	"ppbatch: error: cannot stat 'none.csv': No such file or directory" none.csv
bad "a missing meta file" 2 \
	"ppbatch: error: cannot open 'none.yaml': No such file or directory" pp2dp2.csv --meta none.yaml
ppbatch --format optrace --input b.csv --db fresh.db >/dev/null 2>&1
ok_if "a new database is not even created" test ! -e fresh.db
ppbatch --input . --meta pp2dp2.yaml --db h.db >out 2>&1
is "--meta without --format optrace: exit 2" 2 $?
is "... says so" "ppbatch: error: --meta and --schema go with --format optrace" "$(cat out)"
done_testing
