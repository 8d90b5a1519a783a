#!/bin/bash
# ppagg against ppgen's truth. (a) The truth's per-rank numbers loaded as a
# perfect ppbatch analysis (tests/e2e/truthdb.py): pp_groups and stragglers
# must equal ppgen's independent pp_groups.csv / stragglers.csv, for several
# layouts (tp/cp/vpp/recompute, stragglers of 15-30 %). (b) The real chain
# ppgen -> ppbatch -> ppagg when ppbatch can analyse the tree.
source "$PP_ROOT/tests/lib.sh"
GEN="$PP_FAST_BIN/ppgen"
PPQ="SELECT iteration,pp_group,stage,rank,group_window_start_ns,group_window_end_ns,group_idle_ns,group_bubble_ns FROM pp_groups WHERE complete ORDER BY iteration,pp_group,stage"
SQ="SELECT iteration, rank FROM stragglers ORDER BY iteration, rank"
check() { # name dir
	is "$1: pp_groups equal the truth" "$(cat "$2/.truth/pp_groups.csv")" \
		"$(sql -csv -header "$2/pptrace.db" "$PPQ")"
	is "$1: stragglers equal the truth" "$(cat "$2/.truth/stragglers.csv")" \
		"$(sql -csv -header "$2/pptrace.db" "$SQ")"
}
if [ ! -x "$GEN" ]; then
	skip "ppgen trees" "ppgen is not built"
	done_testing
	exit
fi
n=0
for cfg in "--tp 2 --pp 4 --dp 2 -m 8 --straggler 5:1.3" \
	"--pp 4 --vpp 2 --dp 4 -m 8 --straggler 6:1.25" \
	"--tp 2 --pp 2 --cp 2 --dp 2 -m 4 --straggler 9:1.2 --recompute" \
	"--pp 8 --dp 2 -m 16 --straggler 3:1.15 --seed 7"; do
	n=$((n + 1))
	"$GEN" --out g$n $cfg --iterations 3,4 -q &&
		python3 "$PP_ROOT/tests/e2e/truthdb.py" g$n/.truth g$n/pptrace.db
	vpp=$(echo "$cfg" | sed -n 's/.*--vpp \([0-9]*\).*/\1/p') # agg.vpp is the job's
	printf '[agg]\nvpp = %s\n' "${vpp:-1}" >agg$n.ini
	ppagg --base-folder g$n --config agg$n.ini --no-render -q 2>err$n
	is "ppgen $cfg: exit 0" 0 $?
	is "ppgen $cfg: topology file fully understood, agg.vpp fits" "" "$(grep warning err$n)"
	check "ppgen $cfg" g$n
done

# (b) The whole chain, once ppbatch analyses trees.
"$GEN" --out real --tp 2 --pp 4 --dp 2 -m 8 --iterations 15 --straggler 5:1.3 -q
if ! "$PP_FAST_BIN/ppbatch" --input real --quiet >batch.out 2>&1; then
	skip "ppgen -> ppbatch -> ppagg" "ppbatch cannot analyse the tree here: $(head -c 100 batch.out)"
else
	ppagg --base-folder real -q --no-render
	is "chain: exit 0" 0 $?
	check "chain" real
fi
done_testing
