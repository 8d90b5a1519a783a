#!/bin/bash
# ppbatch --format primus: the hand-made Primus dumps of tests/fixtures/primus
# (old format; VPP 2 in Megatron's order; VPP 2 labelled, with weight-gradient
# calls) into the database: steps per rank and iteration, the readings, the
# import's sizes (so that ppagg --db works alone), a bad dump refused whole
# and a re-import replacing the earlier one.
source "$PP_ROOT/tests/lib.sh"
F="$PP_ROOT/tests/fixtures/primus"

ppbatch --format primus --input "$F/pp2-old" --db old.db >o1.txt 2>e1.txt
is "the old format: exit 0" 0 $?
is "... its summary" "primus: 2 stages x 3 iterations imported (pp 2, vpp 1, 4 micro-batches), into old.db" \
	"$(cat o1.txt)"
is "... one trace per stage and iteration, 8 steps each" "1|0|8
1|2|8
2|0|8
2|2|8
3|0|8
3|2|8" "$(sql old.db 'SELECT iteration, rank, count(*) FROM steps GROUP BY iteration, rank ORDER BY 1, 2')"
is "... the import's sizes" "primus|2|1|2|1|4|4|3" \
	"$(sql old.db 'SELECT format, pp_size, vpp_size, dp_size, tp_size, world_size, microbatches, iterations FROM imports')"
is "... a reading per stage and iteration (total, memory)" "1|0|0|45250000|35.0" \
	"$(sql old.db 'SELECT iteration, rank, stage, total_ns, memory_gib FROM readings ORDER BY 1, 2 LIMIT 1')"
is "... no weight-gradient calls" 0 "$(sql old.db 'SELECT count(*) FROM wgrad_steps')"

ppbatch --format primus --input "$F/pp2-vpp2-old" --db vpp.db >o2.txt 2>e2.txt
is "VPP 2 without labels: exit 0, Megatron's order said" \
	"0 primus: 2 stages x 3 iterations imported (pp 2, vpp 2, 4 micro-batches, calls in Megatron's order), into vpp.db" \
	"$? $(cat o2.txt)"
# Megatron's interleaved order for PP 2, VPP 2, 4 micro-batches: forwards
# (mb, chunk) (0,0) (1,0) (0,1) (1,1) (2,0) (3,0) (2,1) (3,1).
is "... the forwards' (chunk, micro-batch) on stage 0" "0 0,0 1,1 0,1 1,0 2,0 3,1 2,1 3" \
	"$(sql vpp.db "SELECT group_concat(chunk || ' ' || mbs, ',') FROM (SELECT s.chunk, s.mbs FROM step_t s JOIN traces t ON t.id = s.trace_id WHERE t.rank = 0 AND t.iteration = 1 AND s.phase = 1 ORDER BY s.seq)")"

ppbatch --format primus --input "$F/pp2-vpp2-new-wgrad" --db wg.db >o3.txt 2>e3.txt
is "the new format with wgrad arrays: exit 0" 0 $?
ok_if "... weight-gradient calls said" grep -q "weight-gradient calls" o3.txt
is "... 8 weight-gradient calls per stage and iteration" "48" "$(sql wg.db 'SELECT count(*) FROM wgrad_steps')"

# ppagg --db alone: the import's sizes give the pipeline (no --pp).
ppagg --db old.db --no-render --out agg-old 2>agg.err
is "ppagg --db on the import alone: exit 0" 0 $?
ok_if "... the topology from the import" grep -q \
	"topology from import: the primus import (pp 2, vpp 1; one pipeline: the ranks its dump holds)" agg.err
is "... one pipeline per iteration" 3 "$(sql old.db 'SELECT count(*) FROM pipelines')"
is "... the stages of ranks 0 and 2" "0|0|2
2|1|2" "$(sql old.db 'SELECT rank, stage, pp_size FROM agg_topology ORDER BY rank')"
ppagg --db vpp.db --no-render --out agg-vpp 2>aggv.err
is "... the VPP 2 import: vpp 2 from the import, no override warning" "" "$(grep 'overridden' aggv.err)"
is "... vpp 2 stored" "2" "$(sql vpp.db 'SELECT DISTINCT vpp FROM agg_topology')"

# A bad dump: exit 3, the file and what is wrong, nothing stored.
cp -r "$F/pp2-old" bad && chmod -R u+w bad
python3 - <<'PY'
import json
d = json.load(open('bad/pp_rank_1.json'))
d['2']['fwd_end'][1] = -1
json.dump(d, open('bad/pp_rank_1.json', 'w'))
PY
ppbatch --format primus --input bad --db bad.db 2>bad.err
is "a bad dump: exit 3" 3 $?
is "... the file, the iteration and the call" \
	"ppbatch: error: bad/pp_rank_1.json: iteration 2: call 1 ends (fwd_end -1) before it starts (fwd_start 4)" \
	"$(head -n 1 bad.err)"
ok_if "... no database created" test ! -e bad.db
cp old.db keep.db
ppbatch --format primus --input bad --db keep.db 2>/dev/null
is "... into a database: the earlier rows kept" "48|6" \
	"$(sql keep.db 'SELECT (SELECT count(*) FROM steps), (SELECT count(*) FROM readings)')"

# A re-import of the same dump replaces it.
ppbatch --format primus --input "$F/pp2-old" --db old.db >o4.txt 2>&1
ok_if "a re-import says what it replaced" grep -q "6 traces of the earlier import replaced" o4.txt
is "... the same rows, once" "48|6|1" \
	"$(sql old.db 'SELECT (SELECT count(*) FROM steps), (SELECT count(*) FROM readings), (SELECT count(*) FROM imports)')"
done_testing
