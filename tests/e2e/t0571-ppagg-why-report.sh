#!/bin/bash
# "Why the pipeline waits" in the report (docs/ppagg.md): on a ppgen job
# with a 1.8x straggler (rank 2, pp 4 x dp 2, four iterations) the section
# comes after the what-if's, says the critical path in a sentence per step
# (the straggler's computes its largest share), the wait vs transfer per
# stage pair as a table and a chart (why/hops, its hover text), the bubble
# split per stage, the ranks that arrive last far more often than chance per
# group kind beside the straggler flag and the what-if's worker; the summary
# line carries the path's headline; the report loads in headless Chromium
# with every image. An op-trace import has no kernels: one line says the
# pairs and instances are not analysed, the critical path of its what-if
# model is still there, and no why file of an earlier run stays.
source "$PP_ROOT/tests/lib.sh"
"$PP_FAST_BIN/ppgen" --out j --pp 4 --dp 2 -m 8 --layers 1 --iterations 1-4 --straggler 2:1.8 -q &&
	"$PP_FAST_BIN/ppbatch" --input j -q
is "generated and stored" 0 $?
render=--no-render
command -v gnuplot >/dev/null && render=
ppagg --base-folder j $render -j 2 2>err
is "ppagg: exit 0" 0 $?
idx=j/pptrace/index.html
ok_if "the section comes after the what-if's, before the iterations" test \
	"$(grep -n 'id="whatif"' $idx | cut -d: -f1)" -lt "$(grep -n 'id="why"' $idx | cut -d: -f1)" -a \
	"$(grep -n 'id="why"' $idx | cut -d: -f1)" -lt "$(grep -n 'id="compare"' $idx | cut -d: -f1)"
ok_if "the critical path in one sentence per step, the straggler's compute first" \
	grep -q '<li>Iteration 1 ([0-9.]* ms): [0-9.]* % of the step is backward-compute on stage 1 (rank 2); ' $idx
ok_if "... the ranks on it, rank 2 first" \
	grep -A2 'Ranks on the critical path' $idx | grep -q '^<tr><td>2</td><td>1</td>'
ok_if "wait vs transfer per stage pair: a row per pair" \
	grep -q '<tr><td>1 → 0</td><td>[0-9]*</td><td>[0-9.]*</td><td>[0-9.]*</td><td>[0-9.]* %</td></tr>' $idx
ok_if "... and its chart" grep -q 'href="why/hops.gp"' $idx
ok_if "the chart's script: stacked wait and transfer, stage pairs on the x axis" \
	grep -q "set xtics ('0→1' 0, " j/pptrace/why/hops.gp
ok_if "the bubble split per stage" \
	grep -q '<th>wait for previous</th><th>wait for next</th><th>transfer</th><th>no work</th>' $idx
ok_if "the straggler arrives last at its dp collectives, beside its straggler flag and what-if worker" \
	grep -q '>2</a></td><td>dp</td><td>[0-9]* / [0-9]* ([0-9]* %)</td><td>50 %</td><td>[0-9.]*</td><td>[0-9.]*</td><td>iterations 1, 2, 3, 4 (+[0-9]* %)</td><td>S_w [0-9.]* (M_W)</td></tr>' $idx
ok_if "the summary line carries the path's headline" \
	grep -q '; why: iteration [0-9]*: [0-9.]* % of the step is backward-compute on stage 1 (rank 2); report: ' err
ok_if "stderr: what the analysis found" \
	grep -q '^ppagg: why: 768 pipeline transfers in 480 p2p kernels, 92 collective instances of [0-9]* groups, the critical path of 4 steps; ' err
if [ -z "$render" ]; then
	ok_if "rendered: the chart, its SVG with hover text" test -s j/pptrace/why/hops.png
	ok_if "... hover: the pair, its kernels, wait and transfer per iteration" \
		grep -q 'stage 1, peer stage 0\\n[0-9]* p2p kernels in 4 iterations\\nper iteration: wait ' j/pptrace/why/hops.svg
	if command -v chromium >/dev/null; then
		mkdir -p profile
		chromium_dom "$idx"
		n=$(grep -c '<img ' $idx)
		is "chromium: every image of the report loads ($n)" "data-images=\"$n/$n\"" \
			"$(grep -o 'data-images="[^"]*"' dom.html)"
		ok_if "chromium: the section is in the page" grep -q '<h2>Why the pipeline waits</h2>' dom.html
		is "chromium: no console message" "" "$(grep 'CONSOLE' chrome.err)"
	else
		skip "the report in headless chromium" "chromium is not installed"
	fi
else
	skip "rendered why chart" "gnuplot is not installed"
fi

# An op-trace import: no kernels, the what-if model's critical path.
FIX=$PP_ROOT/tests/fixtures/whatif
cp "$FIX/pp2dp2.csv" "$FIX/pp2dp2.yaml" .
ppbatch --format optrace --input pp2dp2.csv --meta pp2dp2.yaml --db h.db -q
mkdir -p rep/why && touch rep/why/hops.gp rep/why/hops.png rep/why/ranks.json
ppagg --db h.db --out rep --no-render 2>imp.err
is "import: exit 0" 0 $?
is "import: one line says what is not analysed, and why" \
	"ppagg: why: not analysed: no aggregated Kineto trace has ops or communication kernels of a process group (op-trace and PP-timer imports store no kernels; traces ppbatch read in generic mode have no ops)" \
	"$(grep 'why: not' imp.err)"
ok_if "import: the report says so too" grep -q '<p>Pipeline sends, receives and collectives not analysed: no aggregated Kineto trace' rep/index.html
ok_if "import: the critical path of the what-if model" \
	grep -q '<li>Iteration 7 (192.500 ms): 62.3 % of the step is backward-compute on stage 0 (rank 1)' rep/index.html
is "import: the views hold the path and the why row says why the rest is missing" "2|34|0|not analysed" \
	"$(sql h.db "SELECT critical_path_steps, (SELECT count(*) FROM critical_path), p2p_kernels,
		substr(notes, 1, 12) FROM why")"
ok_if "import: an earlier run's why files are gone" test ! -e rep/why
done_testing
