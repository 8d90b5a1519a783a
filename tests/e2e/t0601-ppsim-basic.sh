#!/bin/bash
# ppsim: closed forms, every strategy, JSON output, pipeline.py's spellings.
source "$PP_ROOT/tests/lib.sh"

jq_py() { python3 -c "import json,sys; d=json.load(open('$1')); print($2)"; }

ppsim --devices 4 --microbatches 8 --no-visualization >t1.txt
is "1F1B makespan (m+p-1)(F+B)" "makespan: 33" "$(grep '^makespan' t1.txt)"
is "1F1B bubble (p-1)/(m+p-1) on every device" 4 "$(grep -c ' 27.27%$' t1.txt)"
ok_if "reference-style rate is labelled" grep -q 'reference-style bubble rate, (makespan - ideal) / ideal: 0.375 (ideal 24)' t1.txt

ppsim --devices 4 --microbatches 8 --forward 1.5 --backward 2.25 --json --no-visualization >t1.json
is "JSON makespan" 41.25 "$(jq_py t1.json "d['makespan']")"
is "JSON keys" "makespan reference_bubble_rate devices ops" \
	"$(jq_py t1.json "' '.join(k for k in ['makespan','reference_bubble_rate','devices','ops'] if k in d)")"
is "JSON devices" "[0, 30, 11.25]" "$(jq_py t1.json "[d['devices'][0][k] for k in ('device','busy','idle')]")"
is "JSON ops: 2 per (mb, stage)" 64 "$(jq_py t1.json "len(d['ops'])")"
is "JSON op fields" "device stage batch type start end" "$(jq_py t1.json "' '.join(d['ops'][0].keys())")"
is "JSON bubble = idle/makespan" ok "$(jq_py t1.json "'ok' if all(abs(x['bubble']-x['idle']/d['makespan'])<1e-15 for x in d['devices']) else 'bad'")"

ppsim --strategy interleave --devices 4 --stages 12 --microbatches 8 --json --no-visualization >il.json
is "interleaved bubble (p-1)/(v*m+p-1)" ok \
	"$(jq_py il.json "'ok' if all(abs(x['bubble']-3/(3*8+3))<1e-12 for x in d['devices']) else d['devices']")"

ppsim --strategy zb1p --devices 4 --microbatches 8 --backward-d 1.5 --backward-w 0.5 --json --no-visualization >zb.json
is "ZB-1P makespan m(F+D+W)+(p-1)(F+D-W)" 30 "$(jq_py zb.json "d['makespan']")"

for s in 1f1b interleave zb1p 1f1b_overlap 1f1b_interleave_overlap dualpipe dualpipe_v; do
	case $s in
	interleave|1f1b_interleave_overlap) args="--devices 4 --stages 8" ;;
	dualpipe_v) args="--devices 4" ;;
	*) args="--devices 4" ;;
	esac
	ok_if "strategy $s runs (both models)" sh -c \
		"ppsim --strategy $s $args --microbatches 8 --no-visualization >/dev/null &&
		 ppsim --strategy $s $args --microbatches 8 --model reference --no-visualization >/dev/null"
done

ppsim --strategy 1f1b_overlap --devices 4 --microbatches 10 --overlapped 2.5 --json --no-visualization >ov.json
is "overlapped pairs: two ops with equal start and end" ok "$(jq_py ov.json "
'ok' if sum(1 for a,b in zip(d['ops'],d['ops'][1:]) if a['type']=='F' and b['type']=='B' and a['start']==b['start'] and a['end']==b['end'] and a['end']-a['start']==2.5)==3+5+7+9 else 'bad'")"

# the megatron model equals the reference when L = 0; differs with latency
a=$(ppsim --strategy dualpipe_v --devices 4 --microbatches 10 --json --no-visualization | python3 -c "import json,sys; print(json.load(sys.stdin)['makespan'])")
b=$(ppsim --strategy dualpipe_v --devices 4 --microbatches 10 --model reference --json --no-visualization | python3 -c "import json,sys; print(json.load(sys.stdin)['makespan'])")
is "megatron = reference at L=0 (dualpipe_v)" "$a" "$b"
a=$(ppsim --strategy zb1p --devices 4 --microbatches 8 --p2p 0.5 --json --no-visualization | python3 -c "import json,sys; print(json.load(sys.stdin)['makespan'])")
b=$(ppsim --strategy zb1p --devices 4 --microbatches 8 --p2p 0.5 --model reference --json --no-visualization | python3 -c "import json,sys; print(json.load(sys.stdin)['makespan'])")
is "zb1p p2p 0.5: megatron (no latency into W)" 33 "$a"
is "zb1p p2p 0.5: reference (W waits L after D)" 35.5 "$b"

# pipeline.py's spellings: space-separated lists, -bw, -s/-b
ppsim --num-stages 4 --num-batches 8 --forward-times 1 1 1 1 -bw 2 2 2 2 --p2p-time 0 --no-visualization >s3.txt
is "pipeline.py flags" "makespan: 33" "$(grep '^makespan' s3.txt)"
ppsim -s 4 -b 8 -f 1,2,1,1 --no-visualization >s4.txt
is "per-stage forward list" "makespan: 39" "$(grep '^makespan' s4.txt)"
done_testing
