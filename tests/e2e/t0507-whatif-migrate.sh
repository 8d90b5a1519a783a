#!/bin/bash
# A real version-3 database (tests/fixtures/db-v3: Kineto traces and ppagg's
# rows, made before the ops and the what-if analysis) is migrated in place
# to version 7 by the first command that opens it to write: its rows and
# views keep their content, the views are today's definitions, and an op
# trace imports into it. ppagg then analyses the imported steps, says in one
# line that the Kineto iteration has no ops when it is aggregated with
# them, and says nothing is missing when it is aggregated alone.
source "$PP_ROOT/tests/lib.sh"
tar -xzf "$PP_ROOT/tests/fixtures/db-v3/db-v3.tar.gz"
is "the fixture is a version-3 file" 3 "$(sql pptrace.db "PRAGMA user_version")"
views="ranks category_stats steps kernels rank_conflicts pp_groups pipelines stragglers"
dump() {
	local v
	for v in $views; do
		echo "== $v"
		sql "$1" "SELECT * FROM $v WHERE iteration = 1"
	done
}
dump pptrace.db >v3-views
ok_if "it holds Kineto traces and ppagg's rows" grep -q "^1|0|0|0|1|" v3-views

cp "$PP_ROOT/tests/fixtures/whatif/pp2dp2.csv" "$PP_ROOT/tests/fixtures/whatif/pp2dp2.yaml" .
ppbatch --format optrace --input pp2dp2.csv --meta pp2dp2.yaml --db pptrace.db -q
is "an op-trace import into it: exit 0" 0 $?
is "now version 7" 7 "$(sql pptrace.db "PRAGMA user_version")"
ok_if "its earlier rows are all there, unchanged" cmp -s v3-views <(dump pptrace.db)
ppbatch --format optrace --input pp2dp2.csv --db clean.db -q
is "its views are today's definitions" \
	"$(sql clean.db "SELECT name, sql FROM sqlite_master WHERE type = 'view' ORDER BY name")" \
	"$(sql pptrace.db "SELECT name, sql FROM sqlite_master WHERE type = 'view' ORDER BY name")"
is "its code tables are today's" \
	"$(sql clean.db "SELECT * FROM category_codes; SELECT * FROM phase_codes;
		SELECT * FROM optype_codes")" \
	"$(sql pptrace.db "SELECT * FROM category_codes; SELECT * FROM phase_codes;
		SELECT * FROM optype_codes")"
is "the Kineto traces have no ops, the import its 116" "1|0
5|58
7|58" "$(sql pptrace.db "SELECT r.iteration, count(o.rank) FROM ranks r LEFT JOIN ops o
	ON o.iteration = r.iteration AND o.rank = r.rank GROUP BY 1 ORDER BY 1")"

ppagg --db pptrace.db --pp 2 --no-render >out 2>&1
is "ppagg over every iteration: exit 1" 1 $?
is "one line: iteration 1 has no ops" \
	"ppagg: warning: what-if: not computed: the ops of 3 iterations do not fill the 2 x 2 grid (dp x stage) in each: iteration 1 has no ops" \
	"$(grep "warning: what-if" out)"
ppagg --db pptrace.db --iterations 5 7 --no-render -q
is "ppagg over the imported steps: exit 0" 0 $?
is "... analyses them" "2|5|7|worker|1" \
	"$(sql pptrace.db "SELECT iterations, first_iteration, last_iteration, verdict, m_w_ranks FROM whatif")"
ppagg --db pptrace.db --iterations 1 --pp 2 --no-render >out 2>&1
is "ppagg over the Kineto iteration: exit 0" 0 $?
ok_if "... says it has no ops" grep -q "what-if: no ops in these iterations" out
is "... and the what-if views are empty" 0 "$(sql pptrace.db "SELECT count(*) FROM whatif")"
is "ppagg's topology places the Kineto ranks" "0|0|0
1|0|1" "$(sql pptrace.db "SELECT rank, dp_rank, stage FROM agg_topology ORDER BY rank")"
done_testing
