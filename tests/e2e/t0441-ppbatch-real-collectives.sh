#!/bin/bash
# Collectives on real traces ($SHARED/data/real). The 8-rank recommendation
# job (param/dlrm_kineto, V100, NCCL) runs its all_to_all as
# ncclKernel_SendRecv_* kernels under nccl:all_to_all annotations: they are
# all-to-all, and nothing is pipeline p2p. The 2-rank trace whose header
# lists its process groups (hta/nccl_parser_config) keeps every
# collective's group.
source "$PP_ROOT/tests/lib.sh"
REAL=$SHARED/data/real
DLRM=$REAL/param/dlrm_kineto
[ -d "$DLRM" ] || { skip "real traces" "no folder $DLRM (set PP_SHARED)"; done_testing; exit; }

link_iteration dlrm 12 "$DLRM"/worker*.pt.trace.json.gz
ppbatch --input dlrm -q
is "the 8 ranks: exit 0" 0 $?
db=dlrm/pptrace.db
is "every rank's SendRecv kernels are all-to-all, its AllReduce all-reduce (kernel, collective, ranks)" \
	"ncclKernel_AllReduce|all_reduce|8
ncclKernel_SendRecv|all_to_all|8" \
	"$(sql $db "SELECT substr(name, 1, instr(name, '_RING') - 1), collective, count(DISTINCT rank)
		FROM kernels WHERE type = 'comm' GROUP BY 1, 2 ORDER BY 1")"
is "no pipeline p2p: no pp_communication, no send or receive" "0|0" \
	"$(sql $db "SELECT (SELECT count(*) FROM category_stats WHERE category = 'pp_communication'),
		(SELECT count(*) FROM kernels WHERE collective IN ('send', 'recv', 'send_recv'))")"
ppbatch --inspect dlrm/iteration_12/worker0_*.gz >out 2>&1
is "--inspect: 8 communication kernels on rank 0" "1" "$(grep -c 'kernel types comp [0-9]*, comm 8,' out)"
is "rank 0's all-to-all time lands in its annotations" "## alltoall_fwd_single ##|1|2146000|2146000" \
	"$(sql $db "SELECT name, calls, gpu_ns, comm_ns FROM annotations WHERE rank = 0 ORDER BY gpu_ns DESC LIMIT 1")"

PG=$REAL/hta/nccl_parser_config__nccl_data.json.gz
mkdir -p pg/iteration_1
ln -s "$PG" pg/iteration_1/
ppbatch --input pg -q
is "the 2-rank trace: every collective keeps its group" "all_reduce|default_pg|[0, 1]|15
broadcast|default_pg|[0, 1]|6" \
	"$(sql pg/pptrace.db "SELECT collective, pg_desc, pg_ranks, count(*) FROM kernels
		WHERE type = 'comm' GROUP BY 1, 2, 3 ORDER BY 1")"
done_testing
