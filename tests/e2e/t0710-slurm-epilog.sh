#!/bin/bash
# pptrace-epilog as slurmctld's EpilogSlurmctld on a real single-node cluster:
# a job that opted in (comment "pptrace=<dir>") gets its traces analysed, as
# its owner; hostile comments are rejected without running anything; the
# analysis jobs never re-trigger it; a job array triggers one analysis. Then
# the script driven directly with the environment slurmctld gives it.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/slurm-lib.sh"
NCASES=16

slurm_pipeline_ready && slurm_stage || slurm_skip_rest "$NCASES"
slurm_epilog_job "$NCASES"
cp -a run/prof run/prof2
nranks=$(find run/prof -name '*.json*' -path '*/iteration_*' | wc -l)
epilog="$PP_SLURM/pptrace-epilog"

slurm_epilog_wrapper "$epilog"
printf '[slurm]\nppbatch = %s\nppagg = %s\nagg_args = --no-render\n' "$PP_SLURM/ppbatch" \
	"$PP_SLURM/ppagg" >"$T/pptrace.ini"
SLURM_EXTRA_CONF="EpilogSlurmctld=$T/epilog-wrapper"
slurm_start || { slurm_logs >&2; slurm_skip_rest "$NCASES"; }
printf '#!/bin/sh\necho training step\n' >run/train.sh

# 1. A job that opted in, with a path relative to its work dir.
job=$(cd run && sbatch --parsable -J train --comment="pptrace=prof pptrace-shards=2" \
	-o /dev/null train.sh)
work="$PWD/run/prof/.pptrace.db.slurm"
slurm_wait_result "$work" 60
ok_if "the opted-in job's analysis completed" grep -qx 'state=complete' "$work"/status/merge_*.result
is "two shards as the comment asked" 2 "$(ls "$work"/shard_*-of-00002.db 2>/dev/null | wc -l)"
slurm_views run/prof/pptrace.db >epi.views
ok_if "its database equals a single ppbatch run" diff single.views epi.views
is "one log line: the submission for job $job" \
	"job $job (user root): analysis of $PWD/run/prof" \
	"$(sed -n 's/^[^ ]* pptrace-epilog\[[0-9]*\]: \(.*\): array_job=.*/\1/p' "$T/epilog.log")"
is "the analysis jobs did not trigger it again" 1 "$(wc -l <"$T/epilog.log")"

# 2. Hostile or bad comments: rejected, nothing run, nothing submitted.
: >"$T/epilog.log"
before=$(ls run/prof/.pptrace.db.slurm/status | wc -l)
for c in "pptrace=prof;touch\${IFS}$T/pwned1" "pptrace=\$(touch $T/pwned2)" \
	"pptrace=\`touch $T/pwned3\`" "pptrace=../../../etc" "pptrace=prof|id"; do
	(cd run && sbatch -J train --comment="$c" -o /dev/null train.sh >/dev/null)
done
for _ in $(seq 1 100); do [ "$(wc -l <"$T/epilog.log")" -ge 5 ] && break; sleep 0.2; done
sleep 1
is "five rejections logged" 5 "$(grep -c 'error: job [0-9]*: comment tag pptrace=<dir> must be' "$T/epilog.log")"
ok_if "no command from a comment ran" test ! -e "$T/pwned1" -a ! -e "$T/pwned2" -a ! -e "$T/pwned3"
is "no analysis submitted for them" "" "$(squeue -h -n pptrace-shard,pptrace-merge)"
is "no status files added" "$before" "$(ls run/prof/.pptrace.db.slurm/status | wc -l)"

# 3. A job array opts in: one analysis, after the whole array.
: >"$T/epilog.log"
top=$PWD
(cd run && sbatch --parsable -J train --array=0-2 --comment="pptrace=$top/run/prof2" \
	-o /dev/null train.sh >/dev/null)
slurm_wait_result "$PWD/run/prof2/.pptrace.db.slurm" 60
is "one submission for three array tasks" 1 "$(grep -c ': array_job=' "$T/epilog.log")"
is "the other tasks found it done" 2 "$(grep -c 'already submitted' "$T/epilog.log")"
is "array analysis has every rank" "$nranks" "$(sql run/prof2/pptrace.db 'SELECT count(*) FROM ranks' 2>&1)"

# 4. A job of another user: the analysis runs as that user.
if id nobody >/dev/null 2>&1 && setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
	test -x "$PP_SLURM/ppbatch"; then
	cp -a run/prof run/prof3
	rm -rf run/prof3/.pptrace.db.slurm run/prof3/pptrace.db*
	chown -R nobody "run/prof3"
	: >"$T/epilog.log"
	(cd run && setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
		sbatch -J train --comment="pptrace=$top/run/prof3" -o /dev/null train.sh >/dev/null)
	slurm_wait_result "$PWD/run/prof3/.pptrace.db.slurm" 60
	is "another user's job: database written as that user" nobody "$(stat -c %U run/prof3/pptrace.db 2>&1)"
	is "another user's job: every rank" "$nranks" "$(sql run/prof3/pptrace.db 'SELECT count(*) FROM ranks' 2>&1)"
else
	skip "another user's job: database written as that user" "user nobody cannot run $PP_SLURM/ppbatch"
	skip "another user's job: every rank" "user nobody cannot run $PP_SLURM/ppbatch"
fi

# 5. Driven directly with slurmctld's environment (no PATH): jobs without the
#    tag and pptrace's own jobs are ignored silently, exit 0.
: >"$T/epilog.log"
base_env=(SLURM_SCRIPT_CONTEXT=epilog_slurmctld SLURM_JOB_ID=999 SLURM_JOB_UID=0
	SLURM_JOB_GID=0 SLURM_JOB_USER=root SLURM_JOB_WORK_DIR="$PWD/run"
	SLURM_JOB_EXIT_CODE=0 SLURM_CLUSTER_NAME=test PPTRACE_EPILOG_LOG="$T/epilog.log")
env -i "${base_env[@]}" SLURM_JOB_NAME=train SLURM_JOB_COMMENT="nightly run" "$epilog"
rc1=$?
env -i "${base_env[@]}" SLURM_JOB_NAME=pptrace-merge SLURM_JOB_COMMENT="pptrace=prof" "$epilog"
rc2=$?
is "direct: untagged job and own merge job: exit 0 0" "0 0" "$rc1 $rc2"
is "direct: nothing logged, nothing submitted" "0" "$(wc -l <"$T/epilog.log")"

slurm_stop
done_testing
