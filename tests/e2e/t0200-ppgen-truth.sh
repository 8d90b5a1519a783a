#!/bin/bash
# ppgen: the trace tree's shape, and its truth recomputed independently from
# the written trace text (tests/tools/truthcheck.py) on several layouts.
source "$PP_ROOT/tests/lib.sh"
TC="python3 $PP_ROOT/tests/tools/truthcheck.py"

ok_if "tp2 pp4 dp2, two iterations" ppgen --out c16 --tp 2 --pp 4 --dp 2 --microbatches 8 --layers 2 \
	--iterations 15,16 --quiet
is "one trace per rank and iteration" 32 "$(ls c16/iteration_15 c16/iteration_16 | grep -c 'rank_.*_iter_1[56].pt.trace.json$')"
is "file names" "rank_0007_iter_16.pt.trace.json" "$(ls c16/iteration_16 | sed -n 8p)"
is "topology file" "TP Size: 2" "$(head -1 c16/unique_parallel_groups_*.txt)"
is "pp groups in the topology" "Group 1: [0, 4, 8, 12]" "$(grep -A2 'PIPELINE PARALLEL' c16/unique_parallel_groups_*.txt | tail -1)"
is "model replicas numbered from 0" "Group 1: [2, 3, 6, 7, 10, 11, 14, 15]" "$(tail -1 c16/unique_parallel_groups_*.txt)"
is "truth files" "category_stats.csv collectives.csv ops.csv optrace-meta.yaml optrace.csv p2p.csv p2p_kernels.csv pp_groups.csv ranks.csv steps.csv stragglers.csv topology.txt" \
	"$(ls c16/.truth | tr '\n' ' ' | sed 's/ $//')"
is "ranks.csv header" "iteration,rank,mode,window_start_ns,window_end_ns,gpu_busy_ns,idle_ns,bubble_ns,comp_busy_ns,comm_busy_ns,overlap_ns,coverage" \
	"$(head -1 c16/.truth/ranks.csv)"
is "ranks.csv rows" 32 "$(tail -n +2 c16/.truth/ranks.csv | wc -l)"
is "8 fwd steps per rank" 8 "$(grep -c '^15,5,fwd,' c16/.truth/steps.csv)"
is "pp_groups rows" 32 "$(tail -n +2 c16/.truth/pp_groups.csv | wc -l)"
ok_if "truth of tp2 pp4 dp2 matches the trace text" $TC c16
ok_if "receive kernels spin: bubble > 10 x idle on every rank" \
	awk -F, 'NR>1 && !($8 > 10 * $7) {bad=1} END {exit bad}' c16/.truth/ranks.csv
ok_if "coverage above 95 %" awk -F, 'NR>1 && $12 < 0.95 {bad=1} END {exit bad}' c16/.truth/ranks.csv

ok_if "vpp 2" ppgen --out v2 --tp 2 --pp 4 --vpp 2 --microbatches 8 --layers 2 --iterations 3 --quiet
ok_if "truth and causality of vpp 2 match" $TC v2 --vpp 2
is "vpp: 16 fwd steps per rank" 16 "$(grep -c '^3,0,fwd,' v2/.truth/steps.csv)"
ok_if "vpp 3, recompute, dp 2" ppgen --out v3 --pp 4 --vpp 3 --dp 2 --microbatches 4 --recompute --iterations 3 --quiet
ok_if "truth and causality of vpp 3 match" $TC v3 --vpp 3
# forwards of rank $2 of iteration 3 of tree $1 that start before its first backward
fwd_first() {
	awk -F, -v r="$2" '$1 == 3 && $2 == r && $3 == "fwd" { f[++n] = $5 }
		$1 == 3 && $2 == r && $3 == "bwd" && (b == "" || $5 < b) { b = $5 }
		END { for (i = 1; i <= n; i++) c += f[i] < b; print c + 0 }' "$1/.truth/steps.csv"
}
for w in legacy core; do
	ok_if "vpp 2, m = pp, --warmup $w" ppgen --out w$w --pp 4 --vpp 2 --dp 2 --microbatches 4 \
		--iterations 3 --warmup $w --quiet
	ok_if "truth and causality of the $w warm-up match" $TC w$w --vpp 2
done
is "legacy: the last stage runs all 8 forwards first" 8 "$(fwd_first wlegacy 6)"
is "core: the last stage runs 4 warm-up forwards and one of 1F1B first" 5 "$(fwd_first wcore 6)"
is "core: the first stage runs all 8 forwards first" 8 "$(fwd_first wcore 0)"
printf '[gen]\nwarmup = core\n' >core.ini
ok_if "[gen] warmup = core" ppgen --out wcfg --config core.ini --pp 4 --vpp 2 --dp 2 \
	--microbatches 4 --iterations 3 --quiet
ok_if "... the same steps as --warmup core" cmp wcore/.truth/steps.csv wcfg/.truth/steps.csv
printf '[gen]\nwarmup = new\n' >bad.ini
ppgen --out wbad --config bad.ini 2>bad.err
is "bad [gen] warmup: exit 2" 2 "$?"
ok_if "... file, key and value named" \
	grep -q "bad.ini: config key gen.warmup: expected legacy or core, got 'new'" bad.err
# A descending range is refused with a message that shows what ranges look
# like (before: "expected numbers such as 15,16", though 10-12 works).
ppgen --out wbad --iterations 12-10 2>bad.err
is "--iterations 12-10: exit 2" 2 "$?"
ok_if "... the message shows a rising range" \
	grep -qF "invalid value '12-10' for --iterations: expected numbers >= 0 such as 15,16 or a rising range such as 10-12" bad.err
ok_if "recompute, gzip" ppgen --out rc --pp 4 --dp 2 --recompute --microbatches 6 --iterations 3 --gzip --quiet
ok_if "truth of recompute matches" $TC rc
ok_if "recompute rows present" grep -q ',bwd_computation_recompute,' rc/.truth/category_stats.csv
is "gzip magic" "1f8b" "$(head -c 2 rc/iteration_3/rank_0000_iter_3.pt.trace.json.gz | od -An -tx1 | tr -d ' \n')"
ok_if "straggler, relative time" ppgen --out st --tp 2 --pp 2 --dp 2 --straggler 5:1.5 --microbatches 4 \
	--iterations 7,8 --time-format relative --quiet
ok_if "truth of straggler run matches (incl. the 10 % rule)" $TC st
is "stragglers.csv" "7,5 8,5" "$(tail -n +2 st/.truth/stragglers.csv | tr '\n' ' ' | sed 's/ $//')"
ok_if "relative traces carry baseTimeNanoseconds" grep -q '"baseTimeNanoseconds": ' st/iteration_7/rank_0000_iter_7.pt.trace.json
ok_if "cp 2, ep 2" ppgen --out ce --tp 2 --cp 2 --ep 2 --pp 2 --microbatches 4 --layers 2 --iterations 1 --quiet
ok_if "truth of cp/ep matches" $TC ce
ok_if "--ranks writes a subset" ppgen --out sub --tp 2 --pp 4 --dp 2 --microbatches 4 --layers 2 --ranks 0-3,8 --quiet
is "subset files" 5 "$(ls sub/iteration_15 | wc -l)"
ok_if "subset truth matches" $TC sub

ok_if "same seed, same bytes" ppgen --out again --tp 2 --pp 4 --dp 2 --microbatches 8 --layers 2 --iterations 15,16 --quiet
ok_if "deterministic traces (traceName aside)" cmp <(grep -v traceName c16/iteration_16/rank_0009_iter_16.pt.trace.json) \
	<(grep -v traceName again/iteration_16/rank_0009_iter_16.pt.trace.json)
ok_if "deterministic truth" diff -r c16/.truth again/.truth
ok_if "rerun with --gzip into the same folder" ppgen --out again --tp 2 --pp 4 --dp 2 --microbatches 8 --iterations 15 --gzip --quiet
is "the rerun replaced the plain traces" "16 16" "$(ls again/iteration_15 | wc -l) $(ls again/iteration_15 | grep -c 'json.gz$')"
ok_if "an output folder whose name holds a quote and a backslash" ppgen --out 'q"d\x' --quiet
ok_if "... its traces' traceName is that path, escaped (valid JSON)" python3 -c \
	'import json, sys; assert json.load(open(sys.argv[1]))["traceName"].startswith(sys.argv[2])' \
	'q"d\x/iteration_15/rank_0000_iter_15.pt.trace.json' 'q"d\x/'
ppgen --help >help.txt; is "--help exits 0" 0 $?
ok_if "--help shows the synopsis" grep -q 'ppgen --out <dir>' help.txt
ppgen --tp 2 2>err.txt; is "missing --out is a usage error" 2 $?
ppgen --out x --nasty nope 2>err.txt; is "unknown nasty option is a usage error" 2 $?
ppgen --out x --pp 3 --vpp 2 --microbatches 4 2>err.txt; is "vpp needs microbatches % pp == 0" 2 $?
ppgen --out x --pp 1 --vpp 2 --microbatches 4 2>err.txt; is "vpp needs pp > 1" 2 $?
ok_if "... and says so" grep -q "error: --vpp 2 needs --pp > 1" err.txt
ppgen --out x --tp 2 --straggler 9:2 2>err.txt; is "straggler outside the world" 2 $?
done_testing
