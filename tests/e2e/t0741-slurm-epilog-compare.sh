#!/bin/bash
# pptrace-epilog with slurm.compare_previous on a real single-node cluster:
# each job's analysis compares it with the previous run of the same job name
# (SLURM_JOB_NAME, docs/cluster.md): the first run with nothing, another seed
# with nothing flagged; `pptrace-submit --wait --compare-previous` of a run
# with slower compute exits 4 and so does its merge job; another job name
# has its own history; a comment's pptrace-compare=no turns it off.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/slurm-lib.sh"
NCASES=14

slurm_pipeline_ready && slurm_stage || slurm_skip_rest "$NCASES"
mkdir -p run
S="--tp 1 --pp 2 --dp 2 --microbatches 4 --iterations 1,2"
"$PP_FAST_BIN/ppgen" --out run/a --quiet $S --seed 1 &&
	"$PP_FAST_BIN/ppgen" --out run/b --quiet $S --seed 2 &&
	"$PP_FAST_BIN/ppgen" --out run/c --quiet $S --seed 3 --slow-compute 1.3 ||
	{ echo "Bail out! ppgen failed"; exit 1; }
cp -a run/b run/d
cp -a run/b run/e
chmod -R a+rX run
epilog="$PP_SLURM/pptrace-epilog"
hist="$T/hist/root"

slurm_epilog_wrapper "$epilog"
printf '[slurm]\nppbatch = %s\nppagg = %s\nagg_args = --no-render\ncompare_previous = yes\ncompare_history = %s\n' \
	"$PP_SLURM/ppbatch" "$PP_SLURM/ppagg" "$T/hist/%u" >"$T/pptrace.ini"
SLURM_EXTRA_CONF="EpilogSlurmctld=$T/epilog-wrapper"
slurm_start || { slurm_logs >&2; slurm_skip_rest "$NCASES"; }
printf '#!/bin/sh\necho training step\n' >run/train.sh
# run NAME DIR [COMMENT WORDS]: a job that opted in; waits for its analysis.
run() {
	local n=$1 d=$2
	shift 2
	(cd run && sbatch --parsable -J "$n" --comment="pptrace=$d pptrace-shards=1 $*" -o /dev/null train.sh >/dev/null)
	slurm_wait_result "$PWD/run/$d/.pptrace.db.slurm" 90
}
result() { # result DIR KEY
	sed -n "s/^$2=//p" "$PWD/run/$1/.pptrace.db.slurm"/status/merge_*.result
}

# 1. The first run of "train": not compared, recorded as its last.
run train a
is "first run: complete, no baseline, no regression" "complete||no" \
	"$(result a state)|$(result a baseline)|$(result a regression)"
is "... recorded as train's last run, under the owner's history" "$PWD/run/a/pptrace.db" \
	"$(cat "$hist/train.last" 2>&1)"
ok_if "... the merge log says why not compared" grep -q "not compared: no earlier run of train recorded in $hist" \
	run/a/.pptrace.db.slurm/logs/merge_*.log

# 2. Its next run, another seed: compared with the first, nothing flagged.
run train b
is "another seed: compared with the first run, no regression" "complete|$PWD/run/a/pptrace.db|no" \
	"$(result b state)|$(result b baseline)|$(result b regression)"
is "... the comparison in its database" "$PWD/run/a/pptrace.db|0" \
	"$(sql run/b/pptrace.db "SELECT baseline, regression FROM comparison")"
is "... nothing flagged" 0 "$(sql run/b/pptrace.db "SELECT count(*) FROM compare_summary WHERE flagged")"
is "... now train's last run" "$PWD/run/b/pptrace.db" "$(cat "$hist/train.last")"

# 3. pptrace-submit --wait of a run with slower compute: exit 4, the merge
#    job's exit code 4 (what sacct and --mail-type=FAIL see).
out=$("$PP_SLURM/pptrace-submit" --input run/c --shards 1 --wait --agg-arg --no-render \
	--compare-previous train --history "$hist" 2>submit.err)
is "slower compute: pptrace-submit --wait exits 4" 4 "$?"
ok_if "... it says so" grep -q "regression against the previous run, $PWD/run/b/pptrace.db" submit.err
merge=$(printf '%s\n' "$out" | sed -n 's/.*merge_job=\([0-9]*\).*/\1/p')
is "... its merge job ended with exit code 4" "ExitCode=4:0" \
	"$(scontrol show job "$merge" 2>&1 | grep -o 'ExitCode=[0-9:]*' | head -n 1)"
is "... the result file" "complete|yes" "$(result c state)|$(result c regression)"

# 4. Another job name: its own history, nothing to compare with.
run eval d
is "another job name: not compared" "complete|" "$(result d state)|$(result d baseline)"

# 5. pptrace-compare=no in the comment: not compared, nothing recorded.
run train e pptrace-compare=no
is "pptrace-compare=no: not compared" "complete|" "$(result e state)|$(result e baseline)"
is "... train's last run unchanged" "$PWD/run/c/pptrace.db" "$(cat "$hist/train.last")"

slurm_stop
done_testing
