#!/bin/bash
# pptrace-submit on a real single-node Slurm cluster: a 3-task shard array
# plus the merge+ppagg job gives the same database as one ppbatch run; a task
# that fails, or one that never runs, is reported and makes --wait exit 1; a
# second submission redoes only what is missing.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/slurm-lib.sh"
NCASES=14
submit="$PP_ROOT/scripts/slurm/pptrace-submit"
export PPTRACE_POLL=0.5

if ! slurm_pipeline_ready; then
	slurm_skip_all "$NCASES"
	done_testing
	exit
fi

# The tree (8 ranks x 2 iterations) and the reference: one ppbatch run + ppagg.
"$PP_FAST_BIN/ppgen" --out tree --tp 2 --pp 2 --dp 2 --microbatches 4 --iterations 1,2 >gen.log 2>&1 ||
	{ cat gen.log; echo "Bail out! ppgen failed"; exit 1; }
nranks=$(find tree -name '*.json*' -path '*/iteration_*' | wc -l)
slurm_reference "$PWD/tree" single.db
rc=$?
if [ "$rc" = 1 ]; then
	slurm_skip_all "$NCASES"
	done_testing
	exit
fi
is "reference: single ppbatch + ppagg run" 0 "$rc"
slurm_views single.db >single.views
if ! slurm_start; then
	slurm_logs >&2
	slurm_skip_all "$((NCASES - 1))"
	done_testing
	exit
fi

# 1. Array of 3 shards, merge, ppagg; --wait exits 0; views equal.
"$submit" --input tree --shards 3 --db merged.db --out merged-agg --agg-arg --no-render --wait >submit.out 2>submit.err
rc=$?
is "3-shard submit --wait exits 0" 0 "$rc"
[ "$rc" = 0 ] || { cat submit.out submit.err | sed 's/^/# /'; slurm_logs; }
ok_if "prints the array and merge job ids" grep -Eq '^array_job=[0-9]+ tasks=3 merge_job=[0-9]+ ' submit.out
work=$(sed -n 's/.* work=//p' submit.out)
is "three shard databases, never one shared file" 3 "$(ls "$work"/shard_*-of-00003.db 2>/dev/null | wc -l)"
slurm_views merged.db >merged.views
is "merged database has every rank" "$nranks" "$(sql merged.db 'SELECT count(*) FROM ranks')"
ok_if "merged views equal the single run (ranks..stragglers)" diff single.views merged.views
ok_if "ppagg wrote its output" test -d merged-agg

# 2. One task fails on purpose: its shard database path is a folder, so
#    ppbatch cannot open it. The merge reports it; --wait exits 1.
work2=$(dirname "$PWD/m2.db")/.m2.db.slurm
mkdir -p "$work2/shard_00001-of-00003.db"
"$submit" --input tree --shards 3 --db m2.db --agg-arg --no-render --wait >submit2.out 2>submit2.err
is "submit --wait with a failed task exits 1" 1 "$?"
ok_if "the failed shard is listed with its exit status" \
	grep -Eq 'failed shards \(shard:exit\): 1:[0-9]+' submit2.err
# Files are dealt k mod 3 in (folder, rank, path) order: shard 1 holds these.
got_missing=$(awk -v n="$nranks" 'BEGIN { c = 0; for (i = 0; i < n; i++) if (i % 3 == 1) c++; print c }')
is "the other shards were merged (failed ones absent, not invented)" \
	"$((nranks - got_missing))" "$(sql m2.db 'SELECT count(*) FROM ranks')"

# 3. Submitting again after the cause is fixed completes from the same shards.
rmdir "$work2/shard_00001-of-00003.db"
"$submit" --input tree --shards 3 --db m2.db --agg-arg --no-render --wait >submit3.out 2>submit3.err
is "resubmit after the fix exits 0" 0 "$?"
slurm_views m2.db >m2.views
ok_if "resubmitted database equals the single run" diff single.views m2.views

# 4. A task that never runs (cancelled while pending) is reported as missing:
#    the array waits behind a held job, task 2 is cancelled, the hold released.
hold=$(sbatch --parsable --hold --job-name=blocker --output=/dev/null --wrap=true)
"$submit" --input tree --shards 3 --db m3.db --agg-arg --no-render --after "$hold" --wait >submit4.out 2>submit4.err &
waiter=$!
for _ in $(seq 1 50); do grep -q '^array_job=' submit4.out 2>/dev/null && break; sleep 0.2; done
array=$(sed -n 's/^array_job=\([0-9]*\).*/\1/p' submit4.out)
scancel "${array}_2"
scontrol release "$hold"
wait "$waiter"
is "submit --wait with a cancelled task exits 1" 1 "$?"
ok_if "the cancelled task's shard is listed as missing" grep -q 'missing shards: 2;' submit4.err

slurm_stop
done_testing
