#!/bin/bash
# pptrace-cron --compare-previous (local mode, no Slurm needed): each run of a
# job (the base folders side by side in one parent folder) is compared with
# the run analysed before it (docs/cluster.md): the first run with nothing,
# another seed with nothing flagged, a run with every compute kernel 30 %
# slower as a regression (cron exit 4, the log says so); a run's later
# folders keep its baseline; another job's runs are not its baselines.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/slurm-lib.sh"
NCASES=18
cron="$PP_ROOT/scripts/cron/pptrace-cron"

slurm_pipeline_ready || slurm_skip_rest "$NCASES"
S="--tp 1 --pp 2 --dp 2 --microbatches 4 --iterations 1,2,3"
"$PP_FAST_BIN/ppgen" --out g1 --quiet $S --seed 1 &&
	"$PP_FAST_BIN/ppgen" --out g2 --quiet $S --seed 2 &&
	"$PP_FAST_BIN/ppgen" --out g3 --quiet $S --seed 3 --slow-compute 1.3 &&
	"$PP_FAST_BIN/ppgen" --out gb --quiet $S --seed 4 --slow-compute 1.3 ||
	{ echo "Bail out! ppgen failed"; exit 1; }
job="$PWD/root/team/train"
# add NAME GEN ITERATIONS...: the folders of a run, settled.
add() {
	local n=$1 g=$2 i
	shift 2
	mkdir -p "$job/$n"
	for i in "$@"; do cp -a "$g/iteration_$i" "$job/$n/"; done
	find "$job/$n" -name '*.json*' -exec touch -d '20 minutes ago' {} +
}
printf '[cron]\nroots = %s\nsettle_minutes = 0\nlock = %s\nagg_args = --no-render --quiet\ncompare_previous = yes\nhistory = %s\n' \
	"$PWD/root" "$PWD/cron.lock" "$PWD/hist" >cron.ini
baseline() {
	sql "$1/pptrace.db" "SELECT baseline FROM comparison"
}

# 1. The first run: nothing to compare with; recorded as the job's last.
add run1 g1 1 2
"$cron" --config cron.ini --log cron.log
is "first run: exit 0" 0 "$?"
ok_if "... not compared, and why" grep -q "run1: not compared: no earlier run of _.*_root_team_train recorded in $PWD/hist$" cron.log
is "... recorded as the job's last run" "$job/run1/pptrace.db" "$(cat hist/*_root_team_train.last)"
is "... its comparison views empty" "0" "$(sql "$job/run1/pptrace.db" "SELECT count(*) FROM compare_summary")"

# 2. Another seed: compared with run1, nothing flagged, exit 0.
: >cron.log
add run2 g2 1 2
"$cron" --config cron.ini --log cron.log
is "another seed: exit 0" 0 "$?"
ok_if "... compared with the previous run" grep -q "run2: comparing with the previous run, $job/run1/pptrace.db$" cron.log
is "... the comparison's baseline" "$job/run1/pptrace.db" "$(baseline "$job/run2")"
is "... nothing flagged" "0|0" "$(sql "$job/run2/pptrace.db" "SELECT (SELECT count(*) FROM compare_summary WHERE flagged),
	(SELECT count(*) FROM compare_categories WHERE flagged)")"
is "... now the job's last run" "$job/run2/pptrace.db" "$(cat hist/*_root_team_train.last)"

# 3. Every compute kernel 30 % slower: a regression, cron exits 4.
: >cron.log
add run3 g3 1 2
"$cron" --config cron.ini --log cron.log
is "slower compute: cron exits 4" 4 "$?"
ok_if "... the log names the regression and the baseline" \
	grep -q "error: $job/run3: regression against the previous run, $job/run2/pptrace.db (ppagg exit 4)$" cron.log
ok_if "... and carries ppagg's sentence" grep -q "run3: ppagg: .*Step +[0-9.]* % (noise" cron.log
is "... recorded in the run's database" "$job/run2/pptrace.db|1" \
	"$(sql "$job/run3/pptrace.db" "SELECT baseline, regression FROM comparison")"
is "... done, not retried: the next run finds nothing new" "0" \
	"$(: >cron.log; "$cron" --config cron.ini --log cron.log; echo $?)"

# 4. A later folder of run2 (after run3 became the last): still against run1.
: >cron.log
add run2 g2 3
"$cron" --config cron.ini --log cron.log
is "a later folder of run2: exit 0" 0 "$?"
is "... compared with run2's own baseline, not with the job's last run" "$job/run1/pptrace.db|1, 2, 3" \
	"$(sql "$job/run2/pptrace.db" "SELECT baseline, new_iterations FROM comparison")"

# 5. Another job's first run (another parent folder): not compared with train's.
: >cron.log
job="$PWD/root/team/other"
add run1 gb 1 2
"$cron" --config cron.ini --log cron.log
is "another job's first run: exit 0 (no baseline, so no regression)" 0 "$?"
ok_if "... not compared" grep -q "other/run1: not compared: no earlier run" cron.log

done_testing
