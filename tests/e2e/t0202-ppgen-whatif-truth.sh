#!/bin/bash
# ppgen's what-if truth (docs/contracts.md §4): ops.csv, optrace.csv,
# optrace-meta.yaml and clock_offsets.csv are there, sorted and consistent
# with each other and with the trace text (tests/tools/truthcheck.py derives
# the op table from the traces by the mapping rules); the traces hold
# Megatron's p2p calls, the embedding and grad-norm all-reduces; host clock
# offsets move every time a host's ranks write and nothing else;
# --slow-stage, --grad-reduce, --param-gather, their config keys and errors.
source "$PP_ROOT/tests/lib.sh"
TC="python3 $PP_ROOT/tests/tools/truthcheck.py"

ok_if "tp2 pp4 dp2" ppgen --out a --tp 2 --pp 4 --dp 2 -m 8 --layers 2 --iterations 3,4 -q
is "ops.csv header" "iteration,rank,dp_rank,stage,optype,seq_id,mc,gmc,mb_id,start_ns,end_ns" \
	"$(head -1 a/.truth/ops.csv)"
is "optrace.csv header" "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc" \
	"$(head -1 a/.truth/optrace.csv)"
is "optrace-meta.yaml" "trial_name: ppgen run_id: 0 dp_size: 2 dsp_size: 1 pp_size: 4 tp_size: 2 vpp_size: 1 world_size: 16" \
	"$(tr '\n' ' ' <a/.truth/optrace-meta.yaml | sed 's/ $//')"
ok_if "no clock_offsets.csv without shifted clocks" test ! -e a/.truth/clock_offsets.csv
ok_if "truth of tp2 pp4 dp2 (ops and optrace included) matches the trace text" $TC a

# Sorted, every rank present, optrace = the representatives' rows in seconds.
cat >consistent.py <<'PY'
import csv, sys
ops = list(csv.reader(open(sys.argv[1] + "/ops.csv")))[1:]
opt = list(csv.reader(open(sys.argv[1] + "/optrace.csv")))[1:]
world = int(sys.argv[2])
key = lambda r: (int(r[0]), int(r[1]), r[4], int(r[5]))
assert [key(r) for r in ops] == sorted(key(r) for r in ops), "ops.csv not sorted"
okey = lambda r: (int(r[3]), int(r[2]), r[4], int(r[7]))
assert [okey(r) for r in opt] == sorted(okey(r) for r in opt), "optrace.csv not sorted"
its = sorted({int(r[0]) for r in ops})
assert {(int(r[0]), int(r[1])) for r in ops} == {(i, k) for i in its for k in range(world)}
cell = {}
for r in ops:
    c = (int(r[2]), int(r[3]))
    cell[c] = min(cell.get(c, world), int(r[1]))
reps = set(cell.values())
want = []
for it in its:
    mine = [r for r in ops if int(r[0]) == it and int(r[1]) in reps]
    t0 = min(int(r[9]) for r in mine)
    sec = lambda ns: "%d.%09d" % (ns // 10**9, ns % 10**9)
    want += [[r[2], r[3], r[1], r[0], r[4], sec(int(r[9]) - t0), sec(int(r[10]) - int(r[9])),
              r[5], r[6], r[8], r[7]] for r in mine]
assert want == opt, "optrace.csv is not the representatives' ops in seconds"
assert all(int(r[10]) >= int(r[9]) for r in ops)
print("ok", len(ops), len(opt))
PY
ok_if "ops.csv sorted, every rank; optrace.csv = representatives' rows in seconds" \
	python3 consistent.py a/.truth 16
# Rank 5 is on stage 1: 2 warm-up forwards, then 6 send_forward_recv_backward
# per iteration, each a forward-send and a backward-recv with its interval.
is "combined calls: one row per direction, same interval" 12 \
	"$(awk -F, '$2 == 5 && ($5 == "forward-send" || $5 == "backward-recv") {print $1, $10, $11}' a/.truth/ops.csv |
		sort | uniq -c | awk '$1 == 2' | wc -l)"
f0=a/iteration_3/rank_0000_iter_3.pt.trace.json
f4=a/iteration_3/rank_0004_iter_3.pt.trace.json
ok_if "first stage: recv_forward frames" grep -q 'p2p_communication.py(518): recv_forward' $f0
# 3 warm-up + 1 recv_forward, 4 send_backward_recv_forward, 4 send_backward
is "first stage: 12 pp steps without kernels (calls that return at once)" 12 \
	"$(grep -c '^3,0,pp,[0-9]*,[0-9]*,[0-9]*,,' a/.truth/steps.csv)"
ok_if "embedding all-reduce on the first stage" grep -q '"Process Group Description": "EMBEDDING_GROUP"' $f0
ok_if "no embedding all-reduce on a middle stage" bash -c "test -s $f4 && ! grep -q 'EMBEDDING_GROUP\", \"Process Group Ranks' $f4"
ok_if "grad-norm all-reduce over the world" grep -q '"Process Group Description": "default_pg", "Process Group Ranks": "\[0, 1, 2, ' $f4
is "every stage: one clip, one optimizer per iteration" "16 16" \
	"$(grep -c '^3,.*,optimizer-clip-main-grad,' a/.truth/ops.csv) $(grep -c '^3,.*,optimizer,' a/.truth/ops.csv)"
is "overlapped reduce-scatters: a separate-grads-all-reduce placeholder per rank" 16 \
	"$(awk -F, '$1 == 3 && $5 == "separate-grads-all-reduce" && $10 == $11' a/.truth/ops.csv | wc -l)"

ok_if "vpp 2: Megatron's interleaved calls" ppgen --out v --pp 4 --vpp 2 --dp 2 -m 8 --layers 1 -q
ok_if "vpp 2: the four-way call" grep -q 'send_forward_backward_recv_forward_backward' v/iteration_15/rank_0002_iter_15.pt.trace.json
ok_if "vpp 2: send_forward_recv_forward, send_backward_recv_backward" \
	grep -q 'send_backward_recv_backward' v/iteration_15/rank_0002_iter_15.pt.trace.json
ok_if "vpp 2: truth matches the trace text" $TC v --vpp 2
is "vpp 2: forward-compute chunks 0 and 1, gmc = mc * 4 + stage" "0:1 1:5" \
	"$(awk -F, '$2 == 2 && $5 == "forward-compute" {print $7 ":" $8}' v/.truth/ops.csv | sort -u | tr '\n' ' ' | sed 's/ $//')"
ok_if "vpp 2: consistent" python3 consistent.py v/.truth 8

# Host clocks: ranks 2k, 2k+1 on host k; only the times of shifted hosts move.
G="--pp 4 --dp 2 -m 4 --layers 1 --gpus-per-host 2 --iterations 3,4 -q"
ok_if "true clocks" ppgen --out t $G
ok_if "shifted clocks" ppgen --out s $G --clock-skew 1:250.5,3:-1200 --clock-skew-max 300
is "clock_offsets.csv: host 0 true, hosts 1 and 3 as given" "rank,offset_ns 0,0 1,0 2,250500 3,250500 6,-1200000 7,-1200000" \
	"$(grep -E '^(rank|[0-3]|6|7),' s/.truth/clock_offsets.csv | tr '\n' ' ' | sed 's/ $//')"
ok_if "host 2: a random offset within 300 us" awk -F, '$1 == 4 || $1 == 5 { if ($2 == 0 || $2 > 300000 || $2 < -300000) bad = 1 } END { exit bad }' s/.truth/clock_offsets.csv
ok_if "the op trace is in true time: optrace.csv unchanged" cmp t/.truth/optrace.csv s/.truth/optrace.csv
cat >shifted.py <<'PY'
import csv, sys
off = {int(r["rank"]): int(r["offset_ns"]) for r in csv.DictReader(open(sys.argv[2] + "/clock_offsets.csv"))}
for name, cols in (("ops.csv", ("start_ns", "end_ns")), ("ranks.csv", ("window_start_ns", "window_end_ns")),
                   ("steps.csv", ("cpu_start_ns", "cpu_end_ns", "start_ns", "end_ns"))):
    a = list(csv.DictReader(open(sys.argv[1] + "/" + name)))
    b = list(csv.DictReader(open(sys.argv[2] + "/" + name)))
    assert len(a) == len(b), name
    for x, y in zip(a, b):
        for k in x:
            if k in cols and x[k] != "":
                assert int(y[k]) - int(x[k]) == off[int(x["rank"])], (name, x, y)
            else:
                assert x[k] == y[k], (name, k, x, y)
print("ok")
PY
ok_if "ops, ranks and steps: each rank's times move by its host's offset, nothing else" \
	python3 shifted.py t/.truth s/.truth
ok_if "shifted: truth and causality (in true time) match the trace text" $TC s
ok_if "a rerun with true clocks into the same folder" ppgen --out s $G
ok_if "... removes the earlier clock_offsets.csv" test ! -e s/.truth/clock_offsets.csv
ok_if "... and its truth matches" $TC s

# --slow-stage: every rank of the stage computes slower; no straggler listed.
ok_if "slow last stage" ppgen --out w --pp 4 --dp 2 -m 4 --layers 1 --slow-stage last:1.6 -q
is "slow stage: stragglers.csv has no rows" 1 "$(wc -l <w/.truth/stragglers.csv)"
ok_if "slow stage: last-stage backward computes take about 1.6x stage 1's" awk -F, '
	$5 == "backward-compute" { d[$4] += $11 - $10; n[$4]++ }
	END { r = (d[3] / n[3]) / (d[1] / n[1]); exit !(r > 1.45 && r < 1.75) }' w/.truth/ops.csv

# --grad-reduce finish --param-gather forward: no separate all-reduce, real
# all-gathers per chunk.
ok_if "finish/forward variants" ppgen --out fv --pp 2 --vpp 2 --dp 2 -m 4 --layers 1 \
	--grad-reduce finish --param-gather forward -q
is "no separate-grads-all-reduce" 0 "$(grep -c ',separate-grads-all-reduce,' fv/.truth/ops.csv)"
is "a reduce-scatter and an all-gather per chunk on rank 0" "grads-reduce-scatter:0 grads-reduce-scatter:1 params-all-gather:0 params-all-gather:1" \
	"$(awk -F, '$2 == 0 && ($5 == "params-all-gather" || $5 == "grads-reduce-scatter") {print $5 ":" $7}' fv/.truth/ops.csv | sort | tr '\n' ' ' | sed 's/ $//')"
ok_if "finish/forward: truth matches the trace text" $TC fv --vpp 2

# Config keys, and errors.
printf '[gen]\nslow_stage = last:1.2\nclock_skew = 1:100\ngpus_per_host = 4\ngrad_reduce = finish\n' >g.ini
ok_if "[gen] keys" ppgen --out c --config g.ini --pp 2 --dp 4 -m 2 --layers 1 -q
is "[gen] clock_skew and gpus_per_host" "4,100000" "$(grep '^4,' c/.truth/clock_offsets.csv)"
is "[gen] grad_reduce: one reduce-scatter per rank, no separate all-reduce" "8 0" \
	"$(grep -c ',grads-reduce-scatter,' c/.truth/ops.csv) $(grep -c ',separate-grads-all-reduce,' c/.truth/ops.csv)"
ok_if "a flag replaces the config's clock_skew" ppgen --out c --config g.ini --pp 2 --dp 4 -m 2 --layers 1 -q --clock-skew 1:7
is "flag clock_skew" "4,7000" "$(grep '^4,' c/.truth/clock_offsets.csv)"
printf '[gen]\nslow_stage = first:2\n' >bad.ini
ppgen --out x --config bad.ini 2>err.txt; is "bad [gen] slow_stage: exit 2" 2 $?
ok_if "bad [gen] slow_stage: file and key named" grep -q "bad.ini: config key gen.slow_stage: expected <stage>:<factor>" err.txt
ppgen --out x --pp 4 --slow-stage 4:2 2>err.txt; is "--slow-stage outside the pipeline: exit 2" 2 $?
ok_if "says which stage" grep -q "stage 4 is outside the 4 pipeline stages" err.txt
ppgen --out x --dp 8 --gpus-per-host 4 --clock-skew 2:5 2>err.txt; is "--clock-skew host outside: exit 2" 2 $?
ok_if "says which host" grep -q "host 2 is outside the 2 hosts of 8 ranks at 4 per host" err.txt
ppgen --out x --clock-skew 1:0.0001 2>err.txt; is "--clock-skew below a nanosecond: exit 2" 2 $?
ppgen --out x --grad-reduce sometimes 2>err.txt; is "--grad-reduce sometimes: exit 2" 2 $?
done_testing
