#!/bin/bash
# Hostile PP-timer dumps: a dump naming micro-batch 10^8 next to a rank with
# thousands of steps used to take (10^8 x steps) to list what is missing;
# now one pass: quick, every gap counted, the first 50 listed. Malformed
# dumps fail alone, the rest of the pipeline is stored.
source "$PP_ROOT/tests/lib.sh"

mkdir -p in/iteration_2
python3 - <<'PY'
import json
name = 'in/iteration_2/event_times_PP3_VPP2_TPxCPxDP_rank_0_pp_rank_{s}_rank_{s}.json'
json.dump({'forward-1-99999999-start': 1.0, 'forward-1-99999999-end': 2.0,
           'backward-1-99999999-start': 3.0, 'backward-1-99999999-end': 4.0},
          open(name.format(s=0), 'w'))
ev = {}
for mb in range(5000):
    for ph, t in (('forward', 0), ('backward', 0.5)):
        ev[f'{ph}-0-{mb}-start'] = mb + t
        ev[f'{ph}-0-{mb}-end'] = mb + t + 0.25
json.dump(ev, open(name.format(s=1), 'w'))
open(name.format(s=2), 'w').write('{"forward-0-0-start": 1, "forward-0-0-end": ')
PY
start=$(date +%s)
timeout 120 ppbatch --format pp-timer --input in --pp-size 3 --vpp-size 2 >out.txt 2>err.txt
is "exit 1 (partial), no hang" 1 $?
echo "# took $(($(date +%s) - start)) s"
ok_if "the truncated dump fails alone, with line and byte" grep -q "pp_rank_2_rank_2.json:1: byte 44: found end of input, expected the rest of the value" err.txt
# stage 0 lacks chunk 0 (5000 x 2) and chunk 1 micro-batches 0..99999998 (x 2)
ok_if "stage 0: every gap counted" grep -q "rank_0.json: 200009998 missing events (stage 0" err.txt
# stage 1 lacks chunk 1 micro-batches 0..99999999 (x 2)
ok_if "stage 1: every gap counted" grep -q "rank_1.json: 200000000 missing events (stage 1" err.txt
is "ranks stored: two partial, one failed" "2|0|partial
2|1|partial
2|2|failed" "$(sql in/pptrace.db 'SELECT iteration, rank, status FROM ranks ORDER BY rank')"
is "complete steps stored" "0|2
1|10000" "$(sql in/pptrace.db 'SELECT rank, count(*) FROM steps GROUP BY rank ORDER BY rank')"
w=$(sql in/pptrace.db "SELECT warnings FROM traces WHERE rank = 0")
is "warnings list 50 gaps" 50 "$(grep -c 'never recorded$' <<<"$w")"
is "and count the rest" "... 200009948 more missing events" "$(tail -1 <<<"$w")"
done_testing
