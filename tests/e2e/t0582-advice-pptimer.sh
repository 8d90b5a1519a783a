#!/bin/bash
# The advisor on a PP-timer import (ppbatch --format pp-timer; the dump made
# from ppsim's own JSON by tests/e2e/pptimer-dump.py, PP 4, 8 micro-batches,
# two data-parallel replicas):
# ppagg --db works alone (the import's sizes give the pipeline) and the
# advice view replays the dump's step; a job without a pipeline gets no rows,
# no section and one note; [advise] keys are checked.
source "$PP_ROOT/tests/lib.sh"
ppsim --devices 4 --microbatches 8 --forward 1.5 --backward 3 --json --no-visualization >pl.json
for it in 1 2 3; do
	python3 "$PP_ROOT/tests/e2e/pptimer-dump.py" pl.json dump/iteration_$it 4 1 --dp 2
done
ppbatch --format pp-timer --input dump --pp-size 4 --vpp-size 1 --layers 16 --db t.db >imp.txt 2>&1
is "pp-timer import: exit 0" 0 $?
is "... its sizes recorded" "pp-timer|4|1|16" "$(sql t.db 'SELECT format, pp_size, vpp_size, num_layers FROM imports')"
ppagg --db t.db --no-render --out rep 2>agg.err
is "ppagg --db alone: exit 0" 0 $?
ok_if "... the topology from the import" grep -q "topology from import: the pp-timer import (pp 4, vpp 1" agg.err
is "... one pipeline per iteration (not 0)" 3 "$(sql t.db 'SELECT count(*) FROM pipelines')"
is "... the advice view: the current row replays the step within 2 %" "current|1|8|1" \
	"$(sql t.db "SELECT schedule, vpp, microbatches, abs(delta) < 0.02 FROM advice WHERE row = 0")"
is "... the step measured from the dump's total (median of iterations 2..)" "$(python3 -c "import json; print(round(json.load(open('pl.json'))['makespan'] * 1e6))")" \
	"$(sql t.db "SELECT CAST(round(measured_step_ns) AS INTEGER) FROM advice WHERE row = 0")"
is "... the source named" "pp-timer|2|2|3" \
	"$(sql t.db 'SELECT source, iterations, first_iteration, last_iteration FROM advice_summary')"
ok_if "... interleaving offered (16 layers: 4 a stage)" test "$(sql t.db "SELECT count(*) FROM advice WHERE schedule = 'interleave' AND valid = 1")" -ge 1
ok_if "... the section in the report" grep -q 'What would another schedule give?' rep/index.html

# --pp 8 given: it wins over the import's sizes (flags come first).
ppagg --db t.db --pp 8 --no-render -q --out rep8 2>/dev/null
is "--pp given wins over the import's" 8 "$(sql t.db 'SELECT DISTINCT pp_size FROM agg_topology')"

# A job without a pipeline: PP 1 given.
ppagg --db t.db --pp 1 --no-render --out rep1 2>agg1.err
is "PP 1: exit 0" 0 $?
is "... one note on stderr" 1 "$(grep -c '^ppagg: advice: note: no pipeline (PP 1): nothing to schedule$' agg1.err)"
is "... no rows" "0|0" "$(sql t.db 'SELECT (SELECT count(*) FROM advice), (SELECT count(*) FROM advice_memory)')"
ok_if "... no section, no advice folder" sh -c '! grep -q "What would another schedule give" rep1/index.html && test ! -e rep1/advice'

# [advise]: an unknown key is warned, a bad value refused (exit 2).
printf '[advise]\nzb_w_share = 0.3\nlayerz = 4\n' >w.ini
ppagg --db t.db --config w.ini --no-render -q --out repw 2>w.err
is "an unknown [advise] key: exit 0" 0 $?
ok_if "... warned" grep -q "advise.layerz" w.err
printf '[advise]\nlayers = many\n' >bad.ini
ppagg --db t.db --config bad.ini --no-render -q --out repb 2>bad.err
is "a bad [advise] value: exit 2" 2 $?
ok_if "... the key named" grep -q "advise.layers" bad.err
done_testing
