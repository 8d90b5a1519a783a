#!/bin/bash
# pptrace-epilog's sudo path, for real: slurmctld runs as SlurmUser=slurm (not
# root) and runs the epilog as slurm, which submits the analysis of a job of
# user nobody with `sudo -n -u '#<uid>'`, allowed by a sudoers drop-in file
# that this test installs in /etc/sudoers.d/ (validated with visudo -cf) and
# removes at exit. Without the rule, with `sudo = no`, for a job of root, and
# for hostile comments the hook refuses with its own message and submits
# nothing; with the rule the analysis runs as nobody and equals a single run;
# a second epilog run for the same job (slurmctld restart) submits nothing.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/slurm-lib.sh"
NCASES=24
PATH="$PATH:/usr/sbin:/sbin"

skip_all() { # skip_all REASON
	SLURM_WHY=$1
	slurm_skip_all "$NCASES"
	done_testing
	exit
}
slurm_pipeline_ready || skip_all "$SLURM_WHY"
slurm_stage || skip_all "$SLURM_WHY"
epilog="$PP_SLURM/pptrace-epilog"
submit="$(readlink -f -- "$PP_SLURM")/pptrace-submit"
for c in sudo visudo; do
	command -v "$c" >/dev/null 2>&1 || skip_all "$c not installed (scripts/install-deps --test installs sudo)"
done
[ "$(id -u)" = 0 ] || skip_all "needs root to install a sudoers rule and run slurmd"
id slurm >/dev/null 2>&1 || skip_all "no 'slurm' user (package slurm-wlm not set up)"
id nobody >/dev/null 2>&1 || skip_all "no 'nobody' user"
as_nobody=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups)
chmod 755 "$T"
"${as_nobody[@]}" test -x "$PP_SLURM/ppbatch" -a -r "$submit" ||
	skip_all "user nobody cannot run $PP_SLURM/ppbatch or read $submit"

slurm_epilog_job "$NCASES"
for d in norule sudono rootjob; do cp -a run/prof "run/$d"; done
chown -R nobody run
mkdir -m 1777 pw # where a hostile comment could write, if one ran
printf '#!/bin/sh\necho training step\n' >run/train.sh
chmod 755 run/train.sh

slurm_epilog_wrapper "$epilog"
: >"$T/epilog.log"
chown slurm "$T/epilog.log"
config() { # config SUDO: the [slurm] section, with sudo = SUDO
	printf '[slurm]\nsudo = %s\nppbatch = %s\nppagg = %s\nagg_args = --no-render\n' "$1" \
		"$PP_SLURM/ppbatch" "$PP_SLURM/ppagg" >"$T/pptrace.ini"
}
config yes

SLURM_USER=slurm SLURM_EXTRA_CONF="EpilogSlurmctld=$T/epilog-wrapper"
if ! slurm_start; then
	slurm_logs >&2
	skip_all "$SLURM_WHY"
fi
drop=/etc/sudoers.d/pptrace-t0711-$$ # no dot: sudo reads it once it is there
# Left by runs killed with SIGKILL: drop-ins whose PID is gone, old temp files.
for f in /etc/sudoers.d/pptrace-t0711-*; do
	[ -e "$f" ] && ! kill -0 "${f##*-}" 2>/dev/null && rm -f "$f"
done
find /etc/sudoers.d -maxdepth 1 -name '.pptrace-t0711.*' -mmin +10 -delete 2>/dev/null
trap 'rm -f "$drop"; slurm_stop; rm -rf "$T"' EXIT
is "slurmctld runs as SlurmUser slurm" slurm \
	"$(ps -o user= -p "$(cat "$SLURM_DIR/run/slurmctld.pid")" 2>&1)"

# sudoers drop-in: the rule of docs/cluster.md, for this tree's pptrace-submit.
sudo_rule() {
	local tmp
	tmp=$(mktemp /etc/sudoers.d/.pptrace-t0711.XXXXXX) || return 1 # dotted: ignored
	cat >"$tmp" <<-EOF
		Defaults!$submit env_keep += "SLURM_CONF PPTRACE_PPBATCH PPTRACE_PPAGG PPTRACE_BYTES_PER_SHARD"
		slurm ALL=(ALL,!root) NOPASSWD: $submit
	EOF
	chmod 0440 "$tmp"
	if ! visudo -cqf "$tmp"; then
		echo "# sudoers rule rejected by visudo:" && sed 's/^/#   /' "$tmp"
		rm -f "$tmp"
		return 1
	fi
	mv -f "$tmp" "$drop" && visudo -cq || { rm -f "$drop"; return 1; }
}

# wait_log N: until the epilog log has N lines (or 30 s).
wait_log() {
	local i
	for ((i = 0; i < 150; i++)); do
		[ "$(wc -l <"$T/epilog.log")" -ge "$1" ] && return 0
		sleep 0.2
	done
	return 1
}
# job_as WHO COMMENT: submit train.sh from run/ as WHO (nobody or root); its id.
job_as() {
	local who=()
	[ "$1" = nobody ] && who=("${as_nobody[@]}")
	(cd run && "${who[@]}" sbatch --parsable -J train --comment="$2" -o /dev/null train.sh)
}
none_queued() {
	[ -z "$(squeue -h -n pptrace-shard,pptrace-merge 2>&1)" ]
}

# refused WHAT WHO DIR MESSAGE: a job of WHO tagged pptrace=DIR ends; its
# epilog logs exactly MESSAGE (@JOB@ = the job id) and submits nothing.
refused() {
	local job
	: >"$T/epilog.log"
	job=$(job_as "$2" "pptrace=$3")
	wait_log 1
	is "$1: the refusal logged" "${4//@JOB@/$job}" \
		"$(sed -n 's/^[^ ]* pptrace-epilog\[[0-9]*\]: //p' "$T/epilog.log")"
	ok_if "$1: nothing submitted" none_queued
	ok_if "$1: no work folder" test ! -e "run/$3/.pptrace.db.slurm"
}
nob="nobody (uid $(id -u nobody), gid $(id -g nobody))"
nosudo="without a password: add the sudoers rule of docs/cluster.md; ignored"

# 1. sudo = yes but no sudoers rule: refused, its own message, nothing submitted.
refused "no rule" nobody norule \
	"error: job @JOB@: sudo does not let uid $(id -u slurm) run $submit as $nob $nosudo"

ok_if "the sudoers rule is valid and installed" sudo_rule

# 2. The rule is there but the site says sudo = no: refused, nothing submitted.
config no
refused "sudo = no" nobody sudono \
	"error: job @JOB@: cannot submit as nobody (uid $(id -u nobody)): this epilog runs as uid $(id -u slurm); set slurm.sudo = yes with a sudoers rule, or SlurmUser=root (docs/cluster.md)"
config yes

# 3. A job of root: the rule excludes root, so sudo refuses; nothing submitted.
refused "root's job" root rootjob \
	"error: job @JOB@: sudo does not let uid $(id -u slurm) run $submit as root (uid 0, gid 0) $nosudo"

# 4. Hostile comments on this path: rejected before sudo, nothing run.
: >"$T/epilog.log"
for c in "pptrace=prof;touch\${IFS}$T/pw/1" "pptrace=\$(touch $T/pw/2)" \
	"pptrace=\`touch $T/pw/3\`" "pptrace=../../../etc" "pptrace=prof|id" \
	"pptrace=prof&touch\${IFS}$T/pw/4"; do
	job_as nobody "$c" >/dev/null
done
wait_log 6
sleep 1
is "hostile comments: six rejections logged" 6 \
	"$(grep -c 'error: job [0-9]*: comment tag pptrace=<dir> must be' "$T/epilog.log")"
is "hostile comments: no command from a comment ran" "" "$(ls pw)"
ok_if "hostile comments: nothing submitted" none_queued
ok_if "hostile comments: no work folder" test ! -e run/prof/.pptrace.db.slurm

# 5. With the rule: the analysis is submitted through sudo and runs as nobody.
: >"$T/epilog.log"
job=$(job_as nobody "pptrace=prof pptrace-shards=2")
work="$PWD/run/prof/.pptrace.db.slurm"
slurm_wait_result "$work" 90
ok_if "sudo: the analysis completed" grep -qx 'state=complete' "$work"/status/merge_*.result
line=$(sed -n 's/^[^ ]* pptrace-epilog\[[0-9]*\]: //p' "$T/epilog.log")
merge=$(printf '%s\n' "$line" | sed -n 's/.* merge_job=\([0-9]*\) .*/\1/p')
is "sudo: one log line, the submission as nobody" \
	"job $job (user nobody): analysis of $PWD/run/prof: array_job=" \
	"$(printf '%s\n' "$line" | sed 's/array_job=.*/array_job=/')"
is "sudo: the merge job belongs to nobody" "UserId=nobody($(id -u nobody))" \
	"$(scontrol show job "$merge" 2>&1 | grep -o 'UserId=[^ ]*')"
is "sudo: database, shards and marker owned by nobody" "nobody nobody nobody nobody" \
	"$(stat -c %U run/prof/pptrace.db "$work"/shard_*-of-00002.db "$work/once.job-$job" 2>&1 | tr '\n' ' ' | sed 's/ $//')"
ok_if "sudo: the merge job runs the configured ppbatch and ppagg" grep -q \
	"pptrace-merge.sbatch [^ ]* $PP_SLURM/ppbatch $PP_SLURM/ppagg $PWD/run/prof " \
	<(scontrol show job -o "$merge" 2>&1 | sed 's/.* Command=//')
slurm_views run/prof/pptrace.db >sudo.views
ok_if "sudo: the database equals a single ppbatch run" diff single.views sudo.views

# 6. slurmctld runs the epilog again for that job (e.g. after a restart): the
#    job's environment as slurmctld sets it, as slurm: nothing new submitted.
: >"$T/epilog.log"
setpriv --reuid=slurm --regid="$(id -g slurm)" --clear-groups env -i \
	SLURM_SCRIPT_CONTEXT=epilog_slurmctld SLURM_JOB_ID="$job" SLURM_JOBID="$job" \
	SLURM_JOB_UID="$(id -u nobody)" SLURM_JOB_GID="$(id -g nobody)" SLURM_JOB_USER=nobody \
	SLURM_JOB_NAME=train SLURM_JOB_COMMENT="pptrace=prof pptrace-shards=2" \
	SLURM_JOB_WORK_DIR="$PWD/run" SLURM_JOB_EXIT_CODE=0 SLURM_CLUSTER_NAME=test "$T/epilog-wrapper"
ok_if "again: found the once-marker, through sudo" grep -q \
	"job $job (user nobody): analysis of $PWD/run/prof: .*already submitted" "$T/epilog.log"
ok_if "again: nothing submitted" none_queued

slurm_stop
rm -f "$drop"
ok_if "the sudoers drop-in is removed" test ! -e "$drop"
done_testing
