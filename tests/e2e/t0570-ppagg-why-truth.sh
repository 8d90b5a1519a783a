#!/bin/bash
# Why the pipeline waits, end to end (docs/why.md §7-8): ppgen trees of
# several shapes, stored by ppbatch, analysed by ppagg, whose why views are
# checked against ppgen's truth by tests/tools/whycheck.py with the
# tolerances of docs/why.md §8: wait + transfer = every p2p kernel's
# duration, the transfer within 2 µs for >= 95 % of the kernels and
# transfers, the last arriver right and the transfer after it within 2 µs
# for >= 99 % of the collective instances, each step's critical path
# covering it exactly, the clocks recovered, a slow rank last at >= 90 % of
# its data-parallel collectives and on the path, a slow last stage's
# computes most of the path. Shapes: two iterations; VPP 2; TP 2 with VPP 2;
# EP 2 (the all-to-all's SendRecv kernels are collectives, never pipeline
# transfers); CP 2; TP 2 x CP 2 with VPP 2 and shifted clocks; a straggler;
# a slow last stage; TP 2 with hosts' clocks shifted by up to 0.7 ms and a
# straggler; and a job with two ranks not written, whose pairs and
# instances are incomplete, never guessed, and said in one line on stderr.
source "$PP_ROOT/tests/lib.sh"

# shape NAME "CHECKS" PPGEN-ARGS...: generate, store, aggregate, check.
shape() {
	local name=$1 checks=$2
	shift 2
	"$PP_FAST_BIN/ppgen" --out "$name" -q "$@" && "$PP_FAST_BIN/ppbatch" --input "$name" -q || {
		ok_if "$name: generated and stored" false
		return
	}
	ppagg --base-folder "$name" --no-render -q 2>"$name.err"
	echo $? >"$name.rc"
	# shellcheck disable=SC2086 # the checks are words
	ok_if "$name: the why views hold ppgen's truth" \
		python3 "$PP_ROOT/tests/tools/whycheck.py" "$name/pptrace.db" "$name" $checks
	sed 's/^/# /' "$T/.out"
}

shape two_iterations "" --pp 4 --dp 2 -m 8 --layers 1 --iterations 3,4
shape vpp2 "" --pp 4 --vpp 2 --dp 2 -m 8 --layers 1
shape tp2_vpp2 "" --tp 2 --pp 2 --vpp 2 --dp 2 -m 4 --layers 1
shape ep2 "" --tp 2 --pp 2 --dp 2 --ep 2 -m 4 --layers 1
shape cp2 "" --cp 2 --pp 4 --dp 2 -m 8 --layers 1
shape tp2_cp2_vpp2_clocks "" --tp 2 --cp 2 --pp 2 --vpp 2 --dp 2 -m 4 --layers 1 \
	--gpus-per-host 4 --clock-skew-max 300
shape straggler "--slow-rank 2" --pp 4 --dp 2 -m 8 --layers 1 --iterations 1-4 --straggler 2:1.8
shape slow_last_stage "--slow-stage 3" --pp 4 --dp 2 -m 8 --layers 1 --slow-stage last:1.6
shape shifted_clocks "--slow-rank 4" --tp 2 --pp 4 --dp 2 -m 8 --layers 1 --iterations 1-4 \
	--gpus-per-host 2 --clock-skew-max 700 --straggler 4:1.5
for s in two_iterations vpp2 tp2_vpp2 ep2 cp2 tp2_cp2_vpp2_clocks straggler slow_last_stage \
	shifted_clocks; do
	is "$s: ppagg exits 0" 0 "$(cat $s.rc)"
done
is "ep2: every transfer's peer is in the rank's pipeline stage next to it" 0 \
	"$(sql ep2/pptrace.db "SELECT count(*) FROM p2p p JOIN agg_topology a ON a.rank = p.rank
		JOIN agg_topology b ON b.rank = p.peer_rank WHERE a.pp_group <> b.pp_group")"
is "ep2: the expert group's all-to-all instances are collectives of kind ep" 1 \
	"$(sql ep2/pptrace.db "SELECT count(*) > 0 FROM collectives WHERE kind = 'ep' AND status = 'ok'")"

shape missing_ranks "--no-path" --pp 4 --dp 2 -m 8 --layers 1 --ranks 0-5
is "missing ranks: ppagg exits 1 (ranks missing)" 1 "$(cat missing_ranks.rc)"
is "... one line says what could not be analysed, with counts" \
	"ppagg: warning: why: incomplete: 32 of 160 pipeline transfers (32 peer missing); 3 of 12 collective instances (3 rank missing); no critical path: the what-if model has 2 replicas x 3 stages, the topology 2 x 4: cells without ops" \
	"$(grep 'why:' missing_ranks.err)"
is "... the why view counts them, the notes say why there is no path" \
	"32|18|3|0|critical path: none: the what-if model has 2 replicas x 3 stages, the topology 2 x 4: cells without ops" \
	"$(sql missing_ranks/pptrace.db "SELECT p2p_unpaired, p2p_kernels_incomplete,
		collectives_incomplete, critical_path_steps, notes FROM why")"
is "... an incomplete instance names a missing rank and has no numbers" "rank missing|1|1" \
	"$(sql missing_ranks/pptrace.db "SELECT DISTINCT status, missing_rank IN (6, 7),
		last_rank IS NULL AND transfer_ns IS NULL FROM collectives WHERE status <> 'ok'")"
done_testing
