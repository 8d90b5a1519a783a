#!/bin/bash
# The report's stragglers table names the group a straggler was compared
# with as "DP group 3 (ranks 5, 7)", not "dp 3": on the page "dp N"
# everywhere else (the what-if sentence, its workers, the Perfetto tracks)
# is the model replica, and on tp 2 x pp 2 x dp 2 with rank 5 slow "dp 3"
# would stand next to "dp 0 / stage 1 (rank 5 ...)", with only replicas 0
# and 1.
source "$PP_ROOT/tests/lib.sh"
"$PP_FAST_BIN/ppgen" --out j --tp 2 --pp 2 --dp 2 --straggler 5:1.5 --layers 1 \
	--kernels-per-layer 2 -q && "$PP_FAST_BIN/ppbatch" --input j -q &&
	ppagg --base-folder j --no-render -q
is "generated, stored and aggregated" 0 $?
is "the stragglers view: rank 5 in DP group 3 (0-based)" "5|dp|3" \
	"$(sql j/pptrace.db "SELECT rank, group_kind, \"group\" FROM stragglers")"
idx=j/pptrace/index.html
row=$(sed -n '/<h3>Stragglers<\/h3>/,/<\/table>/p' $idx |
	grep -o '<tr><td><a href="iteration_15.html#r5">5</a></td><td>[^<]*</td>')
is "the report's row names the DP group and its ranks" \
	'<tr><td><a href="iteration_15.html#r5">5</a></td><td>DP group 3 (ranks 5, 7)</td>' "$row"
ok_if "... under the heading 'compared with'" grep -q '<th>rank</th><th>compared with</th>' $idx
ok_if "... and no bare 'dp 3' cell" sh -c "! grep -q '<td>dp 3</td>' $idx"
done_testing
