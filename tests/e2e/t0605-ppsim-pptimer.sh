#!/bin/bash
# ppbatch --format pp-timer: Megatron PP-timer dumps into the database
# (dumps made from ppsim's own JSON, so the expected times are known).
source "$PP_ROOT/tests/lib.sh"

mkdir -p vpp/iteration_3 plain/run
ppsim --strategy interleave --devices 4 --stages 8 --microbatches 8 --forward 1.5 \
	--backward 3.25 --json --no-visualization >il.json
ppsim --devices 4 --microbatches 6 --json --no-visualization >pl.json
dump="python3 $PP_ROOT/tests/e2e/pptimer-dump.py"
$dump il.json vpp/iteration_3 4 2 --dp 2 --drop 2:backward-1-5-end && $dump pl.json plain/run 4 1 --dp 2 ||
	{ echo "Bail out! the dumps"; exit 1; }
echo '{}' >vpp/iteration_3/notes.json

ppbatch --format pp-timer --input vpp --pp-size 4 --vpp-size 2 >o1.txt 2>e1.txt
is "a missing event makes exit 1 (partial)" 1 "$?"
ok_if "non-matching file listed with a reason" grep -q "skipped .*notes.json: name is not event_times_PP" o1.txt
ok_if "TPxCPxDP rank 1 replicas listed" grep -q "TPxCPxDP rank 1: a replica of pipeline stage 2" o1.txt
ok_if "missing event reported" grep -q "backward of chunk 1 micro-batch 5: no end event" e1.txt
is "one trace per stage" "3|0|ok
3|1|ok
3|2|partial
3|3|ok" "$(sql vpp/pptrace.db 'SELECT iteration, rank, status FROM ranks ORDER BY rank')"
is "steps per rank (2 x 8 mb x 2 chunks; one dropped)" "0|32
1|32
2|31
3|32" "$(sql vpp/pptrace.db 'SELECT rank, count(*) FROM steps GROUP BY rank ORDER BY rank')"
# device 1's first forward: simulated start 1.5 (after stage 0), + 0.125 ms
is "GPU times in ns, seq in time order" "fwd|0|1625000|3125000|1500000|0" \
	"$(sql vpp/pptrace.db "SELECT phase, seq, start_ns, end_ns, wall_ns, kernels FROM steps WHERE rank = 1 AND phase = 'fwd' AND seq = 0")"
is "chunks and micro-batches labelled" "1|0
1|1" "$(sql vpp/pptrace.db "SELECT s.chunk, s.mbs FROM step_t s JOIN traces t ON t.id = s.trace_id WHERE t.rank = 0 AND s.phase = 1 AND s.seq IN (4, 5) ORDER BY s.seq")"
# Every step is computation in a named category: comp = busy, no comm, no
# overlap, coverage 1 (it was left at 0, which the report showed as 0.0 %).
is "ranks row of rank 3: window, busy, idle = bubble, comp, comm, overlap, coverage" \
	"4625000|80625000|76000000|0|0|76000000|0|0|1.0" \
	"$(sql vpp/pptrace.db 'SELECT window_start_ns, window_end_ns, gpu_busy_ns, idle_ns, bubble_ns,
		comp_busy_ns, comm_busy_ns, overlap_ns, coverage FROM ranks WHERE rank = 3')"

# ppagg keeps the labels the dump recorded (rank 2 lacks one backward step,
# so the labels after the gap are not the formula's), also without agg.vpp.
ppagg --input vpp/iteration_3 --pp 4 --out aggv --no-render --quiet 2>/dev/null
is "ppagg on the VPP import exits 0" 0 "$?"
is "steps.csv labels = the recorded ones (rank 2, bwd)" \
	"$(sql -csv vpp/pptrace.db "SELECT s.seq, s.chunk, s.mbs FROM step_t s JOIN traces t ON t.id = s.trace_id WHERE t.rank = 2 AND s.phase = 2 ORDER BY s.seq")" \
	"$(awk -F, '$1 == "bwd" { print $2 "," $14 "," $15 }' aggv/iteration_3/rank_2/steps.csv)"

ppbatch --format pp-timer --input plain --pp-size 4 --vpp-size 1 --db plain.db >o2.txt 2>e2.txt
is "VPPNone dumps import with --vpp-size 1" 0 "$?"
is "iteration 0 when the folder has no number" "0|4|48" \
	"$(sql plain.db 'SELECT iteration, count(DISTINCT rank), count(*) FROM steps GROUP BY iteration')"
is "no chunk label without VPP" "" "$(sql plain.db 'SELECT DISTINCT chunk FROM step_t')"
is "coverage of the plain import" "1.0" "$(sql plain.db 'SELECT DISTINCT coverage FROM ranks')"
ppbatch --format pp-timer --input plain --pp-size 4 --vpp-size 1 --db plain.db >/dev/null 2>&1
is "importing again replaces" 48 "$(sql plain.db 'SELECT count(*) FROM steps')"

# ppagg draws the imported pipeline: step blocks without kernels in the PP-group chart.
ppagg --input plain/run --db plain.db --pp 4 --out agg --no-render >oa.txt 2>ea.txt
is "ppagg on a PP-timer import exits 0" 0 "$?"
gp=$(find agg -path '*pp_group_0/timeline.gp' | head -n 1)
ok_if "PP-group timeline script written" test -n "$gp"
is "PP-group timeline has one block per step (4 ranks x 12 steps)" 48 \
	"$(awk '/^\$c[0-9]+ << EOD/{b=1; next} /^EOD/{b=0} b{n++} END{print n+0}' "$gp")"

ppbatch --format pp-timer --input plain --pp-size 8 --db x.db >o3.txt 2>e3.txt
is "wrong --pp-size: nothing imported, exit 3" 3 "$?"
ok_if "each file says why" grep -q "PP size 4 in the name, --pp-size is 8" o3.txt
ppbatch --format pp-timer --input plain --db x.db >/dev/null 2>e4.txt
is "--pp-size is required" 2 "$?"
done_testing
