#!/bin/bash
# The why analysis on real traces ($SHARED/data/real). The 8-rank
# recommendation job (param/dlrm_kineto) runs its all-to-all as
# ncclKernel_SendRecv_* kernels: ppagg reports no pipeline transfer from
# them (the p2p views stay empty), even with a pipeline size given, and says
# in one line why the rest is not analysed. The 2-rank trace whose header
# lists its process group (hta/nccl_parser_config) holds one of the group's
# two ranks: every instance of the group is incomplete ("rank missing"),
# never guessed.
source "$PP_ROOT/tests/lib.sh"
REAL=$SHARED/data/real
DLRM=$REAL/param/dlrm_kineto
[ -d "$DLRM" ] || { skip "real traces" "no folder $DLRM (set PP_SHARED)"; done_testing; exit; }

link_iteration dlrm 12 "$DLRM"/worker*.pt.trace.json.gz
"$PP_FAST_BIN/ppbatch" --input dlrm -q
is "the 8 ranks stored" 0 $?
for sizes in "" "--pp 1" "--pp 2"; do
	# shellcheck disable=SC2086 # the sizes are words
	ppagg --base-folder dlrm --no-render $sizes 2>err
	is "ppagg $sizes: exit 0" 0 $?
	is "ppagg $sizes: no pipeline transfer, no pipeline kernel" "0|0" \
		"$(sql dlrm/pptrace.db "SELECT (SELECT count(*) FROM p2p), (SELECT count(*) FROM p2p_kernels)")"
	ok_if "ppagg $sizes: one line says why nothing else is analysed" grep -q '^ppagg: why: not analysed: ' err
done

PG=$REAL/hta/nccl_parser_config__nccl_data.json.gz
mkdir -p pg/iteration_1
ln -s "$PG" pg/iteration_1/
"$PP_FAST_BIN/ppbatch" --input pg -q
ppagg --base-folder pg --no-render --pp 1 2>err
is "the 2-rank group, one rank traced: exit 0" 0 $?
is "... every instance incomplete, a missing rank named, no numbers" "default_pg|rank missing|1|21|0" \
	"$(sql pg/pptrace.db "SELECT kind, status, missing_rank, count(*), count(last_rank) FROM collectives GROUP BY 1, 2, 3")"
ok_if "... and said on stderr" grep -q '^ppagg: warning: why: incomplete: 21 of 21 collective instances (21 rank missing)' err
done_testing
