#!/bin/bash
# ppagg on a synthetic database (tests/e2e/mkaggdb.py: real schema, a
# simulated 1F1B schedule, independent truth): pp_groups equal the truth,
# the injected straggler and nothing else is flagged, a second run gives the
# same database rows and the same files, failed / missing ranks and a missing
# topology give clear messages and partial results, the report is escaped.
source "$PP_ROOT/tests/lib.sh"
MK="python3 $PP_ROOT/tests/e2e/mkaggdb.py"
q() { sql -csv -header "$1" "$2"; }
PPQ="SELECT iteration,pp_group,stage,rank,group_window_start_ns,group_window_end_ns,group_idle_ns,group_bubble_ns FROM pp_groups WHERE complete ORDER BY iteration,pp_group,stage"

# 1. tp2 pp4 dp2, two iterations, rank 5 30 % slower, rank 3 failed.
mkdir -p run
ok_if "synthetic database" $MK --db run/pptrace.db --truth run/.truth --tp 2 --pp 4 --dp 2 \
	--mb 8 --iterations 15,16 --straggler 5:1.3 --fail 3 \
	--topology run/unique_parallel_groups_20250101.txt
ppagg --base-folder run --no-render >out1 2>err1
is "exit 1: a rank failed" 1 $?
ok_if "failed rank named with its error" grep -q "rank 3 failed: truncated <trace>" err1
ok_if "incomplete PP group named with the missing rank" \
	grep -q "PP group 3 incomplete, not drawn and no pipeline row; rank not analysed: 3 (failed)$" err1
ok_if "topology source said" grep -q "topology from file: run/unique_parallel_groups_20250101.txt" err1
# The truth lists complete groups only.
is "pp_groups equal the truth" "$(cat run/.truth/pp_groups.csv)" "$(q run/pptrace.db "$PPQ")"
is "incomplete group kept with complete = 0" "3,0,NULL" \
	"$(sql -csv run/pptrace.db "SELECT pp_group, complete, coalesce(group_idle_ns, 'NULL') FROM pp_groups WHERE iteration = 15 AND rank = 3")"
is "stragglers equal the truth" "$(cat run/.truth/stragglers.csv)" \
	"$(q run/pptrace.db "SELECT iteration, rank FROM stragglers ORDER BY iteration, rank")"
is "straggler row" "15,5,dp,3,fwd_bwd_compute,23400000,18000000,0.300000" \
	"$(sql -csv run/pptrace.db "SELECT iteration, rank, group_kind, \"group\", metric, value_ns, median_ns, printf('%.6f', excess) FROM stragglers WHERE iteration = 15")"
is "one pipeline per complete group, ideal from the simulator" \
	"15,0,37760000,28875000,8885000,0.350900" \
	"$(sql -csv run/pptrace.db "SELECT iteration, pp_group, measured_ns, ideal_ns, gap_ns, printf('%.6f', bubble_ratio) FROM pipelines WHERE iteration = 15 AND pp_group = 0")"
is "3 pipelines per iteration" "3" \
	"$(sql run/pptrace.db "SELECT count(*) FROM pipelines WHERE iteration = 16")"
ok_if "per-iteration CSVs" test -s run/pptrace/iteration_15/pp_groups.csv -a \
	-s run/pptrace/iteration_15/stragglers.csv -a -s run/pptrace/iterations.csv
ok_if "rank scripts and CSVs" test -s run/pptrace/iteration_16/rank_5/timeline.gp -a \
	-s run/pptrace/iteration_16/rank_5/overlap.gp -a -s run/pptrace/iteration_16/rank_5/steps.csv \
	-a -s run/pptrace/iteration_16/rank_5/categories.csv
ok_if "complete groups drawn" test -s run/pptrace/iteration_15/pp_group_0/timeline.gp -a \
	-s run/pptrace/iteration_15/model_group_0/timeline.gp
ok_if "incomplete groups not drawn" test ! -e run/pptrace/iteration_15/pp_group_3 -a \
	! -e run/pptrace/iteration_15/model_group_1
ok_if "error text escaped in the report" \
	grep -q "truncated &lt;trace&gt; &amp; &#39;bad&#39; &quot;json&quot;" run/pptrace/index.html
ok_if "hover text on every block" grep -q 'labels hypertext' run/pptrace/iteration_15/pp_group_0/timeline.gp
ok_if "comparison of iterations" grep -q '^16,15,1,42810000,' run/pptrace/iterations.csv

# 2. Idempotent: same rows, same files.
dump() { sql run/pptrace.db "SELECT * FROM pp_groups; SELECT * FROM pipelines; SELECT * FROM stragglers"; }
dump >rows1
(cd run/pptrace && find . -type f | sort | xargs md5sum) >files1
ppagg --base-folder run --no-render >/dev/null 2>&1
dump >rows2
(cd run/pptrace && find . -type f | sort | xargs md5sum) >files2
ok_if "second run: same rows" cmp rows1 rows2
ok_if "second run: same files" cmp files1 files2

# 3. One iteration by folder, --input form, missing rank, threshold from config.
mkdir -p one
$MK --db one/pptrace.db --truth one/.truth --tp 1 --pp 2 --dp 3 --mb 4 --iterations 7 \
	--straggler 4:1.15 --drop 2 --topology one/unique_parallel_groups_1.txt >/dev/null
ppagg --input one/iteration_7 --no-render >out3 2>err3
is "missing rank: exit 1" 1 $?
ok_if "missing rank named" grep -q "PP group 2 incomplete, not drawn and no pipeline row; rank not analysed: 2 (missing)$" err3
is "truth of the complete groups" "$(cat one/.truth/pp_groups.csv)" "$(q one/pptrace.db "$PPQ")"
is "15 % straggler flagged at 10 %" "7,4" "$(sql -csv one/pptrace.db "SELECT iteration, rank FROM stragglers")"
printf '[agg]\nstraggler_threshold = 0.2\n' >agg.ini
ppagg --base-folder one --iterations iteration_7 --config agg.ini --no-render -q 2>/dev/null
is "not flagged at 20 %" "0" "$(sql one/pptrace.db "SELECT count(*) FROM stragglers")"
ppagg --base-folder one --iterations 99 --no-render -q 2>err4
is "unknown iteration is fatal" 3 $?
ok_if "unknown iteration named" grep -q "no iteration '99' in the database" err4

# 4. No topology at all: warned, rank outputs still written, exit 0.
mkdir -p bare
$MK --db bare/pptrace.db --tp 1 --pp 2 --dp 1 --mb 2 --iterations 1 >/dev/null
ppagg --base-folder bare --no-render >out5 2>err5
is "no topology: exit 0" 0 $?
ok_if "no topology: said so" grep -q "no topology" err5
ok_if "no topology: rank charts" test -s bare/pptrace/iteration_1/rank_1/timeline.gp
is "no topology: no rows" 0 "$(sql bare/pptrace.db "SELECT count(*) FROM pp_groups")"
# ... inferred from the process groups of the kernels, or given as sizes.
$MK --db bare/pptrace.db --tp 2 --pp 2 --dp 1 --mb 2 --iterations 1 --pg >/dev/null
ppagg --base-folder bare --no-render >/dev/null 2>err6
ok_if "inferred from process groups" grep -q "topology from inferred" err6
is "inferred PP groups" "0:0:0 0:1:2 1:0:1 1:1:3" \
	"$(sql bare/pptrace.db "SELECT group_concat(pp_group || ':' || stage || ':' || rank, ' ') FROM (SELECT * FROM pp_groups ORDER BY pp_group, stage)")"
ppagg --base-folder bare --tp 1 --pp 4 --no-render >/dev/null 2>err7
ok_if "sizes beat inference" grep -q "topology from sizes" err7

# 5. Usage errors.
ppagg --no-render 2>/dev/null
is "no input: usage" 2 $?
ppagg --base-folder run --time-alignment sideways 2>/dev/null
is "bad alignment: usage" 2 $?
ppagg --base-folder nowhere 2>err8
is "no database: fatal" 3 $?
ok_if "no database: said so" grep -q "cannot open database 'nowhere/pptrace.db'" err8
# Config keys are checked as their flags are: a malformed value is an
# error, not ignored, and agg.tp = 0 is refused.
for kv in "tp = x:agg.tp = 'x': expected a positive number" \
	"tp = 0:agg.tp = '0': expected a positive number" \
	"pp = 2.5:agg.pp = '2.5': expected a positive number" \
	"processes = 0:agg.processes = '0': expected a number from 1 to 4096" \
	"vpp = -1:agg.vpp = '-1': expected a positive number" \
	"straggler_threshold = -0.1:agg.straggler_threshold = -0.1: expected a number >= 0"; do
	printf '[agg]\n%s\n' "${kv%%:*}" >bad.ini
	ppagg --base-folder run --config bad.ini --no-render 2>err.txt
	is "config ${kv%%:*}: usage error" 2 $?
	is "config ${kv%%:*}: says which file, key and why" "ppagg: error: bad.ini: ${kv#*:}" "$(cat err.txt)"
done
ppagg --base-folder run --tp x 2>err.txt
is "the flag --tp x: the same reason" 2 $?
ok_if "the flag --tp x: says it" grep -q "invalid value 'x' for --tp: expected a positive number" err.txt

# 6. The topology file as real runs write it (banner, time stamp, global
# batch size, "Total groups" after each section, model replicas, a
# STATISTICS block): understood without a warning (none of those lines is
# "unrecognised"), the counts and the global batch size checked.
# real_topology GBS ERRORS: run/'s file in that form.
real_topology() {
	python3 - "$1" "$2" run/unique_parallel_groups_20250101.txt <<'PY'
import re, sys
gbs, errors, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
out = ["=" * 60, "MEGATRON PARALLEL CONFIGURATION", "=" * 60, "Timestamp: 2025-01-01 00:00:00"]
n, section, world = 0, None, 0
for line in open(path).read().splitlines():
    if line.endswith("GROUPS") or line.startswith("FULL MODEL"):
        if section and n:
            out.append("Total groups: %d" % n)
        section, n = line, 0
    if re.match(r"Group \d+:", line):
        n += 1
    if line.startswith("World Size:"):
        world = int(line.split(":")[1])
        out.append(line)
        out.append("Global Batch Size: %s" % gbs)
        continue
    out.append(line)
out.append("Total model replicas (DP): %d" % n)
out += ["", "=" * 60, "STATISTICS", "=" * 60, "Total Ranks: %d" % world,
        "Valid Ranks: %d" % (world - errors), "Error Ranks: %d" % errors]
print("\n".join(out))
PY
}
mkdir -p real
cp run/pptrace.db real/
real_topology 32 0 >real/unique_parallel_groups_20250101.txt
ppagg --base-folder real --no-render >/dev/null 2>err9
is "real topology file: no topology warning" "" "$(grep "topology:" err9)"
ok_if "real topology file: the global batch size is read" \
	grep -q "2 model replicas, global batch size 32)" err9
is "real topology file: same pp_groups" "$(cat run/.truth/pp_groups.csv)" "$(q real/pptrace.db "$PPQ")"
real_topology 36 1 >real/unique_parallel_groups_20250101.txt
ppagg --base-folder real --no-render >/dev/null 2>err10
ok_if "a global batch size the micro-batches do not divide is said" \
	grep -q "iteration 15: 8 micro-batches per pipeline (forward steps) do not divide the topology file's global batch size 36 over dp 2" err10
ok_if "error ranks the writer counted are said" \
	grep -q "topology: .*: the job that wrote it counted 1 error rank" err10
done_testing
