#!/bin/bash
# ppsim: pipeline.py's JSON config, PP-Schedule-Visualization's op_times, the [sim] INI section,
# command line over config.
source "$PP_ROOT/tests/lib.sh"

cat >sample_config.json <<'JSON'
{
    "num_stages": 6,
    "num_batches": 12,
    "forward_times": [0.8, 1.0, 1.2, 1.0, 0.9, 1.1],
    "backward_times": [1.6, 2.0, 2.4, 2.0, 1.8, 2.2],
    "output_file": "pipeline_1f1b_custom.png"
}
JSON
# expected from the reference simulator (same model at p2p 0)
ppsim -c sample_config.json --json >c1.json
is "pipeline.py JSON config (reference: 55.8)" "55.8" "$(python3 -c "import json; print(round(json.load(open('c1.json'))['makespan'],9))")"
if command -v gnuplot >/dev/null; then
	ok_if "output_file names the chart (suffix dropped)" test -s pipeline_1f1b_custom.png -a -s pipeline_1f1b_custom.gp
else
	ok_if "output_file names the chart script" test -s pipeline_1f1b_custom.gp
fi

cat >zb.json <<'JSON'
{"strategy": "zb1p", "num_devices": 4, "num_stages": 4, "num_batches": 8,
 "p2p_latency": 0, "op_times": {"forward": 1.0, "backward_D": {"0": 1.5, "1": 1.5, "2": 1.5, "3": 1.5},
 "backward_W": [0.5, 0.5, 0.5, 0.5]}, "comment": "ignored"}
JSON
ppsim --config zb.json --no-visualization >c2.txt 2>c2.err
is "PP-Schedule-Visualization op_times (scalar, stage map, list)" "makespan: 30" "$(grep '^makespan' c2.txt)"
ok_if "unknown JSON keys are warned about" grep -q "ignoring unknown key 'comment'" c2.err

cat >pp.ini <<'INI'
[sim]
strategy = interleave
devices = 4
stages = 8
microbatches = 8
forward = 1
backward = 2
visualization = false
INI
ppsim --config pp.ini >c3.txt
is "INI [sim] section" "makespan: 57" "$(grep '^makespan' c3.txt)"
ppsim --config pp.ini --microbatches 16 >c4.txt
is "command line overrides the config" "makespan: 105" "$(grep '^makespan' c4.txt)"
ok_if "no chart with visualization = false" test ! -e ppsim-interleave.gp
# m = p with uneven stages: the legacy warm-up (every forward first) runs
# longer than the core one; the INI key, the option and the JSON agree.
printf '[sim]\nstrategy = interleave\ndevices = 3\nstages = 6\nmicrobatches = 3\nforward = 1,1.3,0.9,1,1.3,0.9\nbackward = 2,2.5,2,2,2.5,2\nvisualization = false\n' >w.ini
ppsim --config w.ini >w1.txt
printf 'warmup = legacy\n' >>w.ini
ppsim --config w.ini >w2.txt
ppsim --config w.ini --warmup core --json >w3.json
is "warm-up rules: core, legacy (INI), core again (option over INI)" \
	"makespan: 26.9|makespan: 28.7|26.9 core" \
	"$(grep '^makespan' w1.txt)|$(grep '^makespan' w2.txt)|$(python3 -c "import json; d = json.load(open('w3.json')); print(round(d['makespan'], 9), d['warmup'])")"
ok_if "the table names the legacy warm-up" grep -q "megatron model, legacy warm-up$" w2.txt

cat >sample_config.yaml <<'YAML'
# Pipeline Parallelism Configuration (pipeline.py's YAML sample)
num_stages: 5
num_batches: 8
forward_times:
  - 0.9
  - 1.1
  - 1.0
  - 0.8
  - 1.2
backward_times: [1.8, 2.2, 2.0, 1.6, 2.4]
output_file: "pipeline_1f1b_yaml.png"
YAML
ppsim -c sample_config.yaml --no-visualization >y.txt
is "pipeline.py YAML config (reference: 40.199999999999996)" "makespan: 40.199999999999996" "$(grep '^makespan' y.txt)"

printf '{"num_stages": 4, "num_batches": 8, "forward_times": [1, 2]}\n' >bad.json
ppsim -c bad.json --no-visualization >/dev/null 2>bad.err
is "list length mismatch exits 2" 2 "$?"
ok_if "and says why" grep -q "forward times: 2 values for 4 stages" bad.err
printf '{"num_stages": 4,, }\n' >broken.json
ppsim -c broken.json --no-visualization >/dev/null 2>broken.err
is "malformed JSON exits 2" 2 "$?"
ok_if "with file and line" grep -q "broken.json:1:" broken.err
printf '[sim]\nforward = abc\n' >bad.ini
ppsim -c bad.ini --no-visualization >/dev/null 2>badini.err
is "a bad [sim] value exits 2" 2 "$?"
ok_if "and names the file, the key and why" grep -q "^ppsim: error: bad.ini: config \[sim\] forward: invalid forward time 'abc'" badini.err
done_testing
