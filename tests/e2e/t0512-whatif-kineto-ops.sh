#!/bin/bash
# The what-if op table derived from Kineto traces (docs/contracts.md §4.1,
# docs/whatif.md §9.1): ppgen -> ppbatch -> ppagg, and the `ops` view equals
# ppgen's .truth/ops.csv exactly — every rank, each in its own clock, the
# chunk and micro-batch labels ppagg gives from the topology and the VPP it
# reads off the schedule. Layouts: VPP 1, 2 and 3, TP, CP, DP 1-2, both
# --grad-reduce and both --param-gather variants, both --warmup rules,
# recompute, shifted host clocks, no pipeline at all; an agg.vpp that the
# schedule contradicts.
source "$PP_ROOT/tests/lib.sh"
ops_view() {
	sql -csv -header "$1/pptrace.db" "SELECT iteration, rank, dp_rank, stage, optype, seq_id,
		mc, gmc, mb_id, start_ns, end_ns FROM ops ORDER BY iteration, rank, optype, seq_id"
}
check() { # check NAME VPP [ppgen options]
	local name=$1 vpp=$2
	shift 2
	"$PP_FAST_BIN/ppgen" --out "$name" --layers 1 -q "$@"
	is "$name: ppgen exit 0" 0 $?
	ppbatch --input "$name" -q
	is "$name: ppbatch exit 0" 0 $?
	is "$name: before ppagg the ops have no worker and no step labels" "0|0" \
		"$(sql "$name/pptrace.db" "SELECT count(dp_rank), count(gmc) FROM ops
			WHERE optype = 'forward-compute'")"
	ppagg --base-folder "$name" --no-render -q 2>"$name.err"
	is "$name: ppagg exit 0" 0 $?
	ops_view "$name" >"$name.ops.csv"
	ok_if "$name: the ops view is .truth/ops.csv" \
		diff "$name.ops.csv" "$name/.truth/ops.csv"
	is "$name: ppagg labelled with VPP $vpp" "$vpp" \
		"$(sql "$name/pptrace.db" "SELECT vpp FROM whatif")"
}
check vpp1 1 --tp 2 --pp 4 --dp 2 -m 8 --iterations 3,4 --recompute
check vpp2 2 --tp 2 --pp 4 --vpp 2 --dp 2 -m 8 --grad-reduce finish --param-gather forward
check vpp3 3 --pp 2 --vpp 3 --tp 2 --cp 2 --dp 2 -m 4 --param-gather forward \
	--gpus-per-host 2 --clock-skew-max 500
check pp1 1 --pp 1 --tp 2 --dp 2 -m 3 --iterations 5,6
check dp1 2 --pp 4 --vpp 2 -m 4 --grad-reduce finish
# m = pp with VPP: Megatron-LM up to 2023 runs every forward first (dp1
# above), current Megatron core clamps the warm-up, so its later stages
# start 1F1B early; both are read, and a note says which one the job is.
check core 2 --pp 4 --vpp 2 --dp 2 -m 4 --warmup core
check core3 3 --pp 2 --vpp 3 --tp 2 -m 2 --warmup core
for t in dp1:"Megatron-LM up to 2023" core:"current Megatron core" core3:"current Megatron core"; do
	is "${t%%:*}: the note names ${t#*:}" 1 \
		"$(sql "${t%%:*}/pptrace.db" "SELECT instr(notes, '${t#*:}') > 0 FROM whatif")"
done
is "vpp2 (m = 2 pp, the rules agree): no note on the rule" 0 \
	"$(sql vpp2/pptrace.db "SELECT coalesce(instr(notes, 'Megatron'), 0) FROM whatif")"
printf '[agg]\nvpp = 2\n' >vpp2.ini
ppagg --base-folder vpp1 --config vpp2.ini --no-render 2>vpp1.err >/dev/null
is "agg.vpp = 2 on a 1F1B job: exit 0" 0 $?
is "... the schedule's VPP labels the ops" "1|1" \
	"$(sql vpp1/pptrace.db "SELECT vpp, (SELECT group_concat(DISTINCT vpp) FROM agg_topology)
		FROM whatif")"
ok_if "... and a warning says so" grep -q "warning: vpp: agg.vpp = 2 overridden by the schedule's vpp 1" vpp1.err
ops_view vpp1 >vpp1.again.csv
ok_if "... and the ops view is still .truth/ops.csv" diff vpp1.again.csv vpp1/.truth/ops.csv
is "a cell of TP 2 x CP 2 ranks: its lowest is the worker" "4|lowest rank of each (dp_rank, stage) cell" \
	"$(sql vpp3/pptrace.db "SELECT ranks_per_cell, cell_ops FROM whatif")"
is "... no rank of this even job stands out in its cell" "4|0" \
	"$(sql vpp3/pptrace.db "SELECT count(*), count(slow_rank) FROM whatif_workers")"
is "... the workers are those ranks" "0 4 8 12" \
	"$(sql vpp3/pptrace.db "SELECT group_concat(rank, ' ') FROM
		(SELECT rank FROM whatif_workers ORDER BY rank)")"
done_testing
