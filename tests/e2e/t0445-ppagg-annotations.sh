#!/bin/bash
# ppagg's table of user annotations (docs/ppagg.md "User annotations"): per
# stage on a ppgen Megatron job given 25 annotations (the top 20 shown,
# last, after the what-if and the advisor), per rank on the real 8-rank generic job
# (param/dlrm_kineto: first among the sections, the summary line's
# headline), the CSV equal to the annotations view's sums, the section read
# by headless Chromium, and an earlier run's CSV removed when the traces
# have no annotation left.
source "$PP_ROOT/tests/lib.sh"

# annotate DIR: on the thread of each trace's ProfilerStep, its kernel
# launches cut into 25 runs, each under one of region_00 .. region_24, and
# "inner" nested in region_24 around its first launch.
annotate() {
	python3 - "$1" <<'PY'
import glob, json, sys
for f in glob.glob(sys.argv[1] + "/iteration_*/*.json"):
    d = json.load(open(f))
    ev = d["traceEvents"]
    st = next(e for e in ev if e.get("name", "").startswith("ProfilerStep#"))
    ls = sorted((e for e in ev if e.get("cat") == "cuda_runtime" and e["tid"] == st["tid"]
                 and "Launch" in e["name"]), key=lambda e: e["ts"])
    per = len(ls) // 25
    for i in range(25):
        run = ls[i * per:(i + 1) * per] if i < 24 else ls[24 * per:]
        a, b = run[0]["ts"] - 0.5, run[-1]["ts"] + run[-1]["dur"] + 0.5
        ev.append(dict(st, name="region_%02d" % i, ts=a, dur=b - a, args={}))
    ev.append(dict(st, name="inner", ts=run[0]["ts"] - 0.25, dur=run[0]["dur"] + 0.5, args={}))
    json.dump(d, open(f, "w"))
PY
}
# check_csv DB CSV GROUPSQL: the CSV's sums per (group, name) against the
# view's, each group the value of GROUPSQL for the view's row (a).
check_csv() {
	sql "$1" "SELECT $3, name, count(*), sum(calls), sum(kernels), sum(gpu_ns), sum(comp_ns),
		sum(comm_ns), sum(overlap_ns) FROM annotations a GROUP BY 1, 2 ORDER BY 1, 2" >want &&
	python3 - "$2" <<'PY' | sort -t'|' -k1,1n -k2,2 >got
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print("|".join([r["group"], r["name"], r["ranks"], r["calls"], r["kernels"], r["gpu_ns"],
                    r["comp_ns"], r["comm_ns"], r["overlap_ns"]]))
PY
	sort -t'|' -k1,1n -k2,2 want >want.s
	is "the CSV's rows are the view's sums ($(wc -l <want.s) rows)" "$(cat want.s)" "$(cat got)"
}
# sections HTML: the ids of index.html's sections, in their order.
sections() {
	grep -o '<section id="[a-z]*"' "$1" | sed 's/.*id="//; s/"//' | grep -v '^iter$' | tr '\n' ' '
}

ppgen --out gen --pp 2 --dp 2 -m 4 --quiet && ppbatch --input gen -q
is "ppgen job: stored" 0 $?
ppagg --base-folder gen --no-render 2>err
is "no annotations: ppagg exit 0" 0 $?
ok_if "the section says there are none" grep -q "No GPU time under a user annotation" gen/pptrace/index.html
ok_if "no CSV" test ! -e gen/pptrace/annotations
cp -r gen/iteration_15 plain
annotate gen && ppbatch --input gen -q --force
ppagg --base-folder gen --no-render 2>err
is "annotated: ppagg exit 0" 0 $?
ok_if "stderr counts the names" grep -q "^ppagg: annotations: 26 names with GPU time$" err
is "Megatron mode: the annotations last, after the what-if, the why and the advisor" "whatif why advice annotations " \
	"$(sections gen/pptrace/index.html)"
ok_if "no headline in Megatron mode" sh -c '! grep -q "top annotation" err'
is "every rank's 26 names" "4|26" "$(sql gen/pptrace.db "SELECT count(DISTINCT rank), count(DISTINCT name) FROM annotations")"
# The stage of a rank: its position in its PP group (pp_groups.csv).
sql gen/pptrace.db "CREATE TABLE stage_of(rank, stage)" &&
	tail -n +2 gen/pptrace/iteration_15/pp_groups.csv | cut -d, -f3,4 |
	awk -F, '{print "INSERT INTO stage_of VALUES(" $2 "," $1 ");"}' | sql gen/pptrace.db ||
	ok_if "the stage of each rank stored" false
check_csv gen/pptrace.db gen/pptrace/annotations/annotations.csv \
	"(SELECT stage FROM stage_of s WHERE s.rank = a.rank)"
is "per stage: two tables of the top 20" "2 2" \
	"$(grep -c '<caption>stage [01] (2 ranks): [0-9.]* ms in annotations, 26 names, the 20 with the most GPU time</caption>' gen/pptrace/index.html) \
$(grep -o '<table class="annotations">' gen/pptrace/index.html | wc -l)"
# The tables' rows: each stage's 20 names of most GPU time, from the view.
for stage in 0 1; do
	sql gen/pptrace.db "SELECT name FROM annotations a JOIN stage_of s ON s.rank = a.rank
		WHERE s.stage = $stage GROUP BY name ORDER BY sum(gpu_ns) DESC, name LIMIT 20" >want.$stage
done
python3 - gen/pptrace/index.html >got <<'PY'
import re, sys
h = open(sys.argv[1]).read()
for t in re.findall(r'<table class="annotations">(.*?)</table>', h, re.S):
    print("stage " + re.search(r"<caption>stage (\d)", t).group(1))
    print("\n".join(re.findall(r"<tr><td>([^<]*)</td>", t)))
PY
is "each stage's table: its top 20 by GPU time, in order" \
	"$(printf 'stage 0\n%s\nstage 1\n%s' "$(cat want.0)" "$(cat want.1)")" "$(cat got)"
top=$(head -1 want.0)

# Back to the traces without annotations: the earlier CSV goes.
rm -r gen/iteration_15 && mv plain gen/iteration_15 && ppbatch --input gen -q --force &&
	ppagg --base-folder gen --no-render -q
is "no annotation left: exit 0" 0 $?
ok_if "the earlier CSV is removed" test ! -e gen/pptrace/annotations

# A generic trace of one rank (the shape of DeepSeek's profile).
mkdir -p ds/iteration_1 && cp "$PP_ROOT/tests/fixtures/deepseek-shape/rank_0.pt.trace.json" ds/iteration_1/
ppbatch --input ds -q && ppagg --base-folder ds --no-render 2>err
is "deepseek shape: exit 0" 0 $?
check_csv ds/pptrace.db ds/pptrace/annotations/annotations.csv "rank"
is "generic mode: the annotations first" "annotations whatif why " "$(sections ds/pptrace/index.html)"
ok_if "the headline names the heaviest" grep -q "; top annotation 1F1B [0-9.]* % of the step; report:" err

REAL=$SHARED/data/real/param/dlrm_kineto
if [ -d "$REAL" ]; then
	link_iteration dlrm 12 "$REAL"/worker*.pt.trace.json.gz
	ppbatch --input dlrm -q && ppagg --base-folder dlrm --no-render 2>err
	is "the real 8-rank job: exit 0" 0 $?
	check_csv dlrm/pptrace.db dlrm/pptrace/annotations/annotations.csv "rank"
	is "generic, no topology: one table per rank" 8 \
		"$(grep -c '<caption>rank [0-7]: ' dlrm/pptrace/index.html)"
	ok_if "the headline: rank 0's all-to-all" \
		grep -q "; top annotation ## alltoall_fwd_single ## [0-9.]* % of the step;" err
else
	skip "the real 8-rank job" "no folder $REAL (set PP_SHARED)"
fi

if ! command -v chromium >/dev/null; then
	skip "headless chromium check" "chromium is not installed"
	done_testing
	exit
fi
# The pages as a browser reads them: the tables' first rows, no console message.
annotate gen && ppbatch --input gen -q --force && ppagg --base-folder gen --no-render -q
mkdir -p profile
for run in gen:$top ds:1F1B; do
	want=${run#*:} run=${run%:*}
	chromium_dom "$run/pptrace/index.html"
	is "chromium loads $run's index.html" 0 $?
	first=$(python3 -c '
import sys, html.parser
class P(html.parser.HTMLParser):
    sec = cell = False; rows = []; out = None
    def handle_starttag(s, t, a):
        if t == "section": s.sec = dict(a).get("id") == "annotations"
        if s.sec and t == "td": s.cell = True
    def handle_endtag(s, t):
        s.cell = False
    def handle_data(s, d):
        if s.cell and s.out is None: s.out = d
p = P(); p.feed(open("dom.html").read()); print(p.out)')
	is "$run: the table's first row is $want" "$want" "$first"
	is "$run: no console message" "" "$(grep 'CONSOLE' chrome.err)"
done
done_testing
