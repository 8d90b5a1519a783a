#!/bin/bash
# The reference's AR sample (data/whatif of the shared folder) through the
# commands users run: `ppbatch --format optrace` then `ppagg --db`. Every
# number of result-AR.json, ms-AR.json and mw-AR.json that the views hold,
# and every number of docs/whatif.md's AR table, is read back from the views
# (whatif, whatif_optypes, whatif_workers, whatif_steps) and compared within
# docs/whatif.md §7's tolerances: 1e-6 relative on ratios, 2e-6 absolute on
# M values, 1e-5 s on step times. Then: the `ops` view is the op trace again
# (exported and imported, it gives the same analysis), and running both
# commands twice gives the same content.
source "$PP_ROOT/tests/lib.sh"
AR=$SHARED/data/whatif
[ -r "$AR/trace-AR.csv.gz" ] || {
	skip "the AR sample through ppbatch and ppagg" "no $AR/trace-AR.csv.gz (set PP_SHARED)"
	done_testing
	exit
}

ppbatch --format optrace --input "$AR/trace-AR.csv.gz" --meta "$AR/meta-AR.yaml" \
	--schema "$AR/trace-AR.schema.json" --db ar.db >out 2>err
is "ppbatch --format optrace: exit 0" 0 $?
is "it says what it stored" \
	"optrace: $AR/trace-AR.csv.gz: 44 steps x 16 workers (DP 4 x PP 4), 117216 ops in 704 traces into ar.db" \
	"$(cat out)"
is "nothing on stderr" "" "$(cat err)"
is "the ops view holds every row of the file" 117216 "$(sql ar.db "SELECT count(*) FROM ops")"
is "one ranks row per (step, rank), mode optrace" "704|optrace|0" \
	"$(sql ar.db "SELECT count(*), min(mode), count(bytes) FROM ranks")"

ppagg --db ar.db --out report --no-render >out 2>err
is "ppagg --db: exit 0" 0 $?
ok_if "its summary line has the headline" grep -q "; what-if: S 1.973, verdict worker, M_W 1.002 (1 worker), M_S -0.001; top workers: rank 0 (dp 0, stage 0) 1.973, rank 8 (dp 2, stage 0) 1.011, rank 12 (dp 3, stage 0) 1.011 (117216 ops in [0-9.]* s)\(; advice: [^;]*\)\?; report: report/index.html" err
ok_if "the topology comes from the op trace" grep -q "topology from op trace: .*pp 4, dp 4" err

# The views, as CSV, for the comparison.
sql -csv -header ar.db "SELECT * FROM whatif" >whatif.csv
sql -csv -header ar.db "SELECT * FROM whatif_optypes" >optypes.csv
sql -csv -header ar.db "SELECT * FROM whatif_workers" >workers.csv
sql -csv -header ar.db "SELECT * FROM whatif_steps" >steps.csv
python3 - "$AR" >compare.out 2>&1 <<'EOF'
import csv, json, math, sys
ar = sys.argv[1]
res = json.load(open(ar + "/result-AR.json"))
ms = json.load(open(ar + "/ms-AR.json"))
mw = json.load(open(ar + "/mw-AR.json"))
rows = lambda f: list(csv.DictReader(open(f)))
w, = rows("whatif.csv")
bad, n = [], 0
def rel(what, got, want, tol=1e-6):
    global n; n += 1
    if not abs(float(got) - want) <= tol * abs(want):
        bad.append(f"{what}: {got}, reference {want}")
def ab(what, got, want, tol):
    global n; n += 1
    if not abs(float(got) - want) <= tol:
        bad.append(f"{what}: {got}, reference {want} (tolerance {tol})")
def same(what, got, want):
    global n; n += 1
    if str(got) != str(want):
        bad.append(f"{what}: {got!r}, expected {want!r}")
steps = sorted(res["step_t_base"], key=int)
mean = lambda d: sum(d[k] for k in steps) / len(steps)
same("iterations", w["iterations"], 44)
same("first_iteration", w["first_iteration"], steps[0])
same("last_iteration", w["last_iteration"], steps[-1])
ab("t_base_ns", float(w["t_base_ns"]) / 1e9, mean(res["step_t_base"]), 1e-5)
ab("t_ns", float(w["t_ns"]) / 1e9, mw["tori"], 1e-5)
ab("t_ideal_ns", float(w["t_ideal_ns"]) / 1e9, mw["tideal"], 1e-5)
rel("slowdown", w["slowdown"], res["blocking_slowdown"])
rel("launch_slowdown", w["launch_slowdown"], res["launch_slowdown"])
ab("m_w", w["m_w"], mw["Mw"], 2e-6)
ab("m_w_add", w["m_w_add"], mw["add"], 2e-6)
ab("m_s", w["m_s"], ms["Ms"], 2e-6)
ab("m_s_add", w["m_s_add"], ms["add"], 2e-6)
same("m_w_ranks", w["m_w_ranks"], "0")
same("verdict", w["verdict"], "worker")
st = {r["iteration"]: r for r in rows("steps.csv")}
same("whatif_steps iterations", sorted(st, key=int), steps)
for k in steps:
    ab(f"step {k} t_ns", float(st[k]["t_ns"]) / 1e9, res["step_t_nodelay"][k], 1e-5)
    ab(f"step {k} t_ideal_ns", float(st[k]["t_ideal_ns"]) / 1e9, res["step_t_noblk"][k], 1e-5)
    rel(f"step {k} slowdown", st[k]["slowdown"], res["blocking_step_slowdown"][k])
ot = {r["optype"]: r["slowdown"] for r in rows("optypes.csv")}
same("whatif_optypes groups", sorted(ot), sorted(res["blocking_decompose_by_optype"]))
for g, v in res["blocking_decompose_by_optype"].items():
    rel(f"S_t {g}", ot.get(g, "nan"), v)
wk = rows("workers.csv")
same("whatif_workers rows", len(wk), 16)
for r in wk:
    sdp = res["blocking_decompose_by_dp_rank"][r["dp_rank"]]
    spp = res["blocking_decompose_by_stage"][r["stage"]]
    rel(f"rank {r['rank']} s_dp", r["s_dp"], sdp)
    rel(f"rank {r['rank']} s_pp", r["s_pp"], spp)
    rel(f"rank {r['rank']} slowdown", r["slowdown"], min(sdp, spp))
    same(f"rank {r['rank']} clock_offset_ns", r["clock_offset_ns"], "")
# docs/whatif.md's AR table, at the digits it prints (half a unit of the
# last digit, on top of the reference tolerances).
same("S_w top 5 (rank)", [r["rank"] for r in wk[:5]], ["0", "8", "12", "4", "48"])
table = [("mean base (s)", float(w["t_base_ns"]) / 1e9, 46.649176, 6),
         ("mean T (s)", float(w["t_ns"]) / 1e9, 46.336372, 6),
         ("mean T_ideal (s)", float(w["t_ideal_ns"]) / 1e9, 23.484700, 6),
         ("launch_slowdown", w["launch_slowdown"], 1.006751, 6),
         ("S", w["slowdown"], 1.973045099, 9),
         ("S_t backward-compute", ot["backward-compute"], 1.580506, 6),
         ("S_t forward-compute", ot["forward-compute"], 1.368886, 6),
         ("M_W rem", w["m_w"], 1.0017013, 7), ("M_W add", w["m_w_add"], 1.0063130, 7),
         ("M_S rem", w["m_s"], -0.0012120, 7), ("M_S add", w["m_s_add"], 0.0024346, 7)]
spp = {r["stage"]: r["s_pp"] for r in wk}
table += [(f"S_pp stage {s}", spp[s], v, 6) for s, v in
          (("0", 1.979189), ("3", 1.002369), ("1", 0.997113), ("2", 0.995604))]
for what, got, want, digits in table:
    ab(f"AR table: {what}", got, want, 0.5 * 10 ** -digits + 2e-6)
print(f"{n} values compared")
for b in bad:
    print("MISMATCH " + b)
EOF
is "the comparison ran" "" "$(grep -v "values compared\|MISMATCH" compare.out)"
is "every value within tolerance" "" "$(grep MISMATCH compare.out)"
# 14 whatif + 1 + 44 x 3 steps + 1 + 11 optypes + 1 + 16 x 4 workers + 1 + 15 table
is "all of them compared" "240 values compared" "$(grep "values compared" compare.out)"

# The ops view is the op trace: exported and imported again, the same S.
sql -csv -header ar.db "SELECT dp_rank, stage, rank, iteration AS step, optype,
	start_ns / 1e9 AS start_ts, (end_ns - start_ns) / 1e9 AS duration, seq_id, mc, mb_id, gmc
	FROM ops" >again.csv
ppbatch --format optrace --input again.csv --meta "$AR/meta-AR.yaml" \
	--schema "$AR/trace-AR.schema.json" --db again.db -q &&
	ppagg --db again.db --out again --no-render -q
is "the exported ops import and analyse" 0 $?
is "... to the same analysis" "$(sql ar.db "SELECT * FROM whatif")" \
	"$(sql again.db "SELECT * FROM whatif")"

# Both commands twice: the same content.
dump() {
	local v
	for v in ranks steps ops pp_groups pipelines stragglers whatif whatif_optypes \
		whatif_workers whatif_steps; do
		echo "== $v"
		sql "$1" "SELECT * FROM $v"
	done
}
dump ar.db >first
ppbatch --format optrace --input "$AR/trace-AR.csv.gz" --meta "$AR/meta-AR.yaml" \
	--schema "$AR/trace-AR.schema.json" --db ar.db >out 2>&1
is "importing again: exit 0" 0 $?
ok_if "... replaces the earlier import" grep -q "(replacing the 704 traces of its earlier import)" out
ppagg --db ar.db --out report --no-render -q
is "ppagg again: exit 0" 0 $?
ok_if "the views hold the same rows" cmp -s first <(dump ar.db)
is "one import recorded" 1 "$(sql ar.db "SELECT count(*) FROM op_source")"
done_testing
