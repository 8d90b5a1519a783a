#!/bin/bash
# The what-if analysis in the report (docs/ppagg.md, "What if"), on the
# hand-made op trace tests/fixtures/whatif/pp2dp2.csv (PP 2 x DP 2, replica 1
# slow): the section at the top of index.html (S in one sentence naming the
# worker, S_t, the top workers, M_W / M_S, the verdict), the S_w heatmap
# (range 1-1.5, hover naming the worker), the measured-vs-ideal step chart,
# and whatif/timeline.json parsed as JSON and checked against the Chrome
# trace-event format's rules (tests/tools/check_trace_events.py). An even job
# (below the threshold) and an incomplete grid get one line each.
source "$PP_ROOT/tests/lib.sh"
FIX=$PP_ROOT/tests/fixtures/whatif
cp "$FIX/pp2dp2.csv" "$FIX/pp2dp2.yaml" .
ppbatch --format optrace --input pp2dp2.csv --meta pp2dp2.yaml --db h.db -q
is "import: exit 0" 0 $?
ppagg --db h.db --out rep --no-render -q
is "ppagg: exit 0" 0 $?
idx=rep/index.html
head=$(sed -n 's/.*<p class="headline">\(.*\)<\/p>.*/\1/p' $idx | sed 's/<[^>]*>//g')
ok_if "one sentence: S and the worker who explains it ($head)" sh -c "echo '$head' |
	grep -q '^Without stragglers this job would run 1.19× faster; one worker, rank 1 (dp 1, stage 0), explains 100 % of it.$'"
ok_if "the section comes before the iterations" test \
	"$(grep -n 'id="whatif"' $idx | cut -d: -f1)" -lt "$(grep -n 'id="compare"' $idx | cut -d: -f1)"
ok_if "the verdict" grep -q 'Verdict: <b>worker</b>' $idx
ok_if "M_W and M_S" grep -q 'M_W = 1.652.*M_S = -0.489' $idx
ok_if "the S_t table" grep -q '<td>backward-compute</td><td>' $idx
ok_if "the top workers, the M_W one marked" grep -q '<tr><td>1 (M_W)</td><td>1</td><td>0</td>' $idx
ok_if "links the Perfetto file" grep -q 'href="whatif/timeline.json"' $idx
ok_if "S_w heatmap: range 1 to 1.5" grep -q 'set cbrange \[1:1.5\]' rep/whatif/sw.gp
ok_if "S_w heatmap: hover names the worker" grep -q '"rank 1 (dp 1, stage 0)\\nS_w 1.276' rep/whatif/sw.gp
ok_if "step chart: measured and ideal rows per stage" \
	grep -q "'stage 0 measured' 0, 'stage 0 ideal' 1, 'stage 1 measured' 2, 'stage 1 ideal' 3" rep/whatif/step.gp
python3 "$PP_ROOT/tests/tools/check_trace_events.py" rep/whatif/timeline.json >chk.out 2>&1
is "timeline.json: valid JSON and trace events" 0 $?
ok_if "... one process per stage and scenario" \
	grep -q '^processes 4 (stage 0, ideal (simulated); stage 0, measured; stage 1, ideal (simulated); stage 1, measured), tracks ' chk.out
ok_if "... at least a track per worker and scenario" \
	test "$(sed -n 's/.*, tracks \([0-9]*\)$/\1/p' chk.out)" -ge 8
ok_if "... op names and micro-batch ids as args" grep -q '^complete events [1-9][0-9]*, every one with args microbatch, chunk, op$' chk.out
if command -v gnuplot >/dev/null; then
	ppagg --db h.db --out rend -j 2 -q
	ok_if "rendered: S_w heatmap SVG with hover" \
		grep -q "showHypertext(evt,'rank 1 (dp 1, stage 0)\\\\nS_w 1.276" rend/whatif/sw.svg
	ok_if "rendered: step chart" test -s rend/whatif/step.png -a -s rend/whatif/step.svg
	if command -v chromium >/dev/null; then
		mkdir -p profile
		chromium_dom "rend/index.html"
		n=$(grep -c '<img ' rend/index.html)
		is "chromium: every image of the report loads ($n)" "data-images=\"$n/$n\"" \
			"$(grep -o 'data-images="[^"]*"' dom.html)"
		is "chromium: no console message" "" "$(grep 'CONSOLE' chrome.err)"
	else
		skip "the report in headless chromium" "chromium is not installed"
	fi
else
	skip "rendered what-if charts" "gnuplot is not installed"
fi

# Nothing to say: one line each.
awk -F, -v OFS=, 'NR == 1 { print; next }
	$1 == 0 && $4 == 5 { r = $3; for (s = 5; s <= 6; s++) for (d = 0; d < 2; d++) {
		$1 = d; $3 = r + d; $4 = s; print } }' pp2dp2.csv >even.csv
ppbatch --format optrace --input even.csv --db even.db -q && ppagg --db even.db --out even --no-render -q
is "even job: one line, below the threshold" 1 \
	"$(grep -c 'What if: S = 1.000, below the 1.03 threshold: no straggler worth explaining' even/index.html)"
ok_if "... and no what-if files" test ! -e even/whatif
awk -F, -v OFS=, 'NR == 1 { print; next }
	$1 == 0 && $4 == 5 && $5 != "params-all-gather" && $5 != "grads-reduce-scatter" {
		$4 = 9; print }' pp2dp2.csv >step9.csv
ppbatch --format optrace --input step9.csv --db h.db -q
ppagg --db h.db --out inc --no-render -q 2>/dev/null
ok_if "incomplete grid: one line says what is missing" \
	grep -q '<p>No what-if analysis: the ops of 3 iterations do not fill the 2 x 2 grid' inc/index.html
done_testing
