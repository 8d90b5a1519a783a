#!/bin/bash
# The schedule advisor on the shipped Primus dump (PP 8, 16 micro-batches,
# 20 iterations, 64 layers): ppbatch --format primus --layers 64 then
# ppagg --db alone. The advice view's current row replays the measured step
# within 2 %, measured_step_ns is the median over iterations 2.. of the
# longest rank's total (recomputed here from the dump), the rows a user
# compares with another run exist at the same micro-batch count, per-stage
# memory is measured on the current row; the report's section, its CSVs and
# chart, and the page loading in headless Chromium.
source "$PP_ROOT/tests/lib.sh"
DUMP=$SHARED/data/primus/pp8
[ -r "$DUMP/config.json" ] || {
	skip "the Primus sample through ppbatch and ppagg" "no $DUMP (set PP_SHARED)"
	done_testing
	exit
}
ppbatch --format primus --input "$DUMP" --layers 64 --db p.db >imp.txt
is "import: exit 0" 0 $?
ppagg --db p.db --out rep --no-render 2>agg.err
is "ppagg --db alone: exit 0" 0 $?
ok_if "... says the calibration and the best option" grep -q \
	'^ppagg: advice: calibration -0.[0-9][0-9] % (replay 32[0-9][0-9].[0-9] ms against the measured 3246.5 ms); best: ' agg.err

want=$(python3 - "$DUMP" <<'PY'
import json, statistics, sys, os
d = sys.argv[1]
pp = json.load(open(os.path.join(d, 'config.json')))['pp_size']
ranks = [json.load(open(os.path.join(d, f'pp_rank_{s}.json'))) for s in range(pp)]
its = sorted(int(k) for k in ranks[0])[1:]
print(round(statistics.median(max(r[str(i)]['total'] for r in ranks) for i in its) * 1e6))
PY
)
is "measured_step_ns: median over iterations 2.. of the longest total" "$want" \
	"$(sql p.db "SELECT CAST(round(measured_step_ns) AS INTEGER) FROM advice WHERE schedule = 'current'")"
is "the current row within 2 %" 1 \
	"$(sql p.db "SELECT abs(delta) < 0.02 AND valid = 1 FROM advice WHERE schedule = 'current'")"
is "the other schedules at 16 micro-batches, valid" "1f1b_overlap|1
dualpipe_v|2
interleave|2
interleave|4
interleave|8
zb1p|1" "$(sql p.db "SELECT schedule, vpp FROM advice WHERE kind = 'schedule' AND microbatches = 16
	AND valid = 1 AND step_ns > 0 ORDER BY 1, 2")"
is "layers moved off the slowest stage (64 layers known)" "9,8,8,8,8,8,8,7" \
	"$(sql p.db "SELECT layers FROM advice WHERE kind = 'layers' ORDER BY row LIMIT 1")"
is "advice_memory: 8 stages per row, measured on the current row" "8|8" \
	"$(sql p.db "SELECT count(*), count(measured_gib) FROM advice_memory m JOIN advice a ON a.row = m.row
	WHERE a.schedule = 'current'")"
is "... the measured peak of stage 0 (highest reading)" 1 \
	"$(sql p.db "SELECT measured_gib > 100 FROM advice_memory WHERE row = 0 AND stage = 0")"

idx=rep/index.html
ok_if "the report's section" grep -q '<h2>What would another schedule give?</h2>' $idx
ok_if "... its calibration line" grep -q '<p class="calibration"><b>Calibration</b>: .*<b>-0.[0-9][0-9] %</b> (within 5 %' $idx
ok_if "... one table row per advice row" test "$(sql p.db 'SELECT count(*) FROM advice')" -eq \
	"$(sed -n '/<section id="advice">/,/<\/section>/p' $idx | grep -c '^<tr><td\|^<tr class')"
ok_if "... the best option on the summary line" grep -q 'advice: .* -1[0-9].[0-9] % (calibration -0.[0-9] %)' agg.err
is "advice.csv: the view's rows and a header" "$(($(sql p.db 'SELECT count(*) FROM advice') + 1))" \
	"$(wc -l <rep/advice/advice.csv)"
is "advice_memory.csv: the view's rows and a header" "$(($(sql p.db 'SELECT count(*) FROM advice_memory') + 1))" \
	"$(wc -l <rep/advice/advice_memory.csv)"
ok_if "the chart marks the current point" grep -qi 'current' rep/advice/step_memory.gp

if ! command -v gnuplot >/dev/null; then
	skip "the rendered section" "gnuplot is not installed"
	done_testing
	exit
fi
ppagg --db p.db --out rend --iterations 18 19 20 --rank-charts none -j 2 -q
is "rendered: exit 0" 0 $?
ok_if "rendered: the step/memory chart" test -s rend/advice/step_memory.png -a -s rend/advice/step_memory.svg
if ! command -v chromium >/dev/null; then
	skip "the report in headless chromium" "chromium is not installed"
	done_testing
	exit
fi
mkdir -p profile
chromium_dom "rend/index.html"
is "chromium loads the report" 0 $?
n=$(grep -c '<img ' rend/index.html)
is "chromium: every image loads ($n)" "data-images=\"$n/$n\"" "$(grep -o 'data-images="[^"]*"' dom.html)"
ok_if "chromium: the section is in the page" grep -q 'What would another schedule give?' dom.html
is "chromium: no console message" "" "$(grep 'CONSOLE' chrome.err)"
done_testing
