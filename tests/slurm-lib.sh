# tests/slurm-lib.sh — a private single-node Slurm cluster for end-to-end tests.
#
# Source after tests/lib.sh. Gives:
#   slurm_start        start munged, slurmctld and slurmd in $T/slurm (own key,
#                      sockets, ports, state); returns 0 once `sinfo` shows the
#                      node idle, else 1 with the reason in $SLURM_WHY.
#                      Exports SLURM_CONF so sbatch/squeue/scontrol talk to it.
#   slurm_stop         stop the daemons by PID (also run from the EXIT trap).
#   slurm_skip_all N   print N skipped TAP lines "# skip $SLURM_WHY".
#   slurm_skip_rest N  slurm_skip_all N, done_testing, exit.
#   slurm_logs         print the tail of the daemon logs (for failed tests).
#   slurm_epilog_job N the epilog tests' job and its single-node reference.
#   slurm_stage        copy scripts/slurm/* and $PP_BIN's ppbatch and ppagg
#                      into $PP_SLURM (stage_for_others, tests/lib.sh), where
#                      SlurmUser and the jobs' users can run them whatever
#                      folder the clone is in; returns 1 with SLURM_WHY set
#                      when they cannot.
#   slurm_epilog_wrapper EPILOG
#                      write $T/epilog-wrapper, a site wrapper for
#                      EpilogSlurmctld that execs EPILOG with the test's
#                      SLURM_CONF, PPTRACE_CONFIG=$T/pptrace.ini and
#                      PPTRACE_EPILOG_LOG=$T/epilog.log.
# Extra slurm.conf lines may be given in $SLURM_EXTRA_CONF before slurm_start;
# $SLURM_USER (default root) is the SlurmUser slurmctld runs as (and runs
# EpilogSlurmctld as): its state, log and pid folders are given to it.
# Needs root (slurmd launches jobs as their users) and Debian's slurm-wlm and
# munge; without them slurm_start fails with SLURM_WHY set, never hangs.
# PP_NO_SLURM=1 turns the Slurm cases into skips (e.g. on a busy shared host).
# Layout of $T/slurm: etc/slurm.conf, munge/{key,socket,pid,log}, state/,
# spool/, log/{slurmctld,slurmd}.log, run/*.pid.

SLURM_DIR=""
SLURM_WHY=""
_slurm_pids=()

_slurm_listening() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

_slurm_free_port() {
	# A port nobody listens on, from a random start; two consecutive ones.
	local p i
	for i in $(seq 1 50); do
		p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		if ! _slurm_listening "$p" && ! _slurm_listening "$((p + 1))"; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

_slurm_wait_for() {
	# _slurm_wait_for SECONDS cmd... : poll every 0.2 s until cmd succeeds.
	local limit=$1 i
	shift
	for ((i = 0; i < limit * 5; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

_slurm_node_idle() {
	[ "$(sinfo -h -n localhost -o '%t' 2>/dev/null)" = idle ]
}

slurm_start() {
	local bin
	if [ -n "${PP_NO_SLURM:-}" ]; then
		SLURM_WHY="PP_NO_SLURM is set"
		return 1
	fi
	for bin in munged slurmctld slurmd sinfo sbatch squeue scontrol scancel setpriv; do
		if ! command -v "$bin" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$bin" ]; then
			SLURM_WHY="$bin not installed (scripts/install-deps --test installs slurm-wlm munge)"
			return 1
		fi
	done
	if [ "$(id -u)" != 0 ]; then
		SLURM_WHY="needs root to run slurmd"
		return 1
	fi
	if ! id munge >/dev/null 2>&1; then
		SLURM_WHY="no 'munge' user (package munge not set up)"
		return 1
	fi
	PATH="$PATH:/usr/sbin:/sbin"
	SLURM_DIR="$T/slurm"
	local d=$SLURM_DIR port
	mkdir -p "$d/etc" "$d/munge" "$d/state" "$d/spool" "$d/log" "$d/run" || return 1
	port=$(_slurm_free_port) || { SLURM_WHY="no free TCP port"; return 1; }
	# The daemons detach: stop them however the test ends (timeout sends TERM).
	trap 'slurm_stop; rm -rf "$T"' EXIT
	trap 'exit 143' TERM
	trap 'exit 130' INT

	# munge: own key and socket, running as user munge. Its directory checks
	# refuse world-writable parents such as /tmp, hence --force.
	chmod 755 "$T"
	chown munge:munge "$d/munge"
	chmod 700 "$d/munge"
	if ! setpriv --reuid=munge --regid=munge --clear-groups \
		dd if=/dev/urandom of="$d/munge/key" bs=1024 count=1 status=none; then
		SLURM_WHY="cannot create a munge key as user munge"
		return 1
	fi
	chmod 600 "$d/munge/key"
	if ! setpriv --reuid=munge --regid=munge --clear-groups munged --force \
		--key-file="$d/munge/key" --socket="$d/munge/socket" \
		--pid-file="$d/munge/pid" --log-file="$d/munge/log" \
		--seed-file="$d/munge/seed" >"$d/log/munged.out" 2>&1; then
		SLURM_WHY="munged failed: $(tail -n 1 "$d/log/munged.out" "$d/munge/log" 2>/dev/null | tr '\n' ' ')"
		return 1
	fi
	_slurm_wait_for 5 test -s "$d/munge/pid"
	_slurm_pids+=("$(cat "$d/munge/pid" 2>/dev/null)")
	chmod 755 "$d/munge"  # clients need to reach the socket

	cat >"$d/etc/slurm.conf" <<-EOF
		ClusterName=pptest$port
		SlurmctldHost=localhost
		SlurmctldPort=$port
		SlurmdPort=$((port + 1))
		SlurmUser=${SLURM_USER:-root}
		SlurmdUser=root
		AuthType=auth/munge
		CredType=cred/munge
		AuthInfo=socket=$d/munge/socket
		StateSaveLocation=$d/state
		SlurmdSpoolDir=$d/spool/%n
		SlurmctldPidFile=$d/run/slurmctld.pid
		SlurmdPidFile=$d/run/slurmd.pid
		SlurmctldLogFile=$d/log/slurmctld.log
		SlurmdLogFile=$d/log/slurmd.log
		SlurmctldDebug=info
		SlurmdDebug=info
		ProctrackType=proctrack/linuxproc
		TaskPlugin=task/none
		JobAcctGatherType=jobacct_gather/none
		AccountingStorageType=accounting_storage/none
		JobCompType=jobcomp/none
		SelectType=select/cons_tres
		SelectTypeParameters=CR_Core
		SchedulerType=sched/backfill
		SchedulerParameters=sched_interval=1,bf_interval=1
		MpiDefault=none
		SwitchType=switch/none
		ReturnToService=2
		SlurmdParameters=config_overrides
		MinJobAge=120
		KillWait=2
		InactiveLimit=0
		SlurmctldTimeout=30
		SlurmdTimeout=30
		MaxArraySize=10001
		NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
		PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
	EOF
	if [ -n "${SLURM_EXTRA_CONF:-}" ]; then
		printf '%s\n' "$SLURM_EXTRA_CONF" >>"$d/etc/slurm.conf"
	fi
	export SLURM_CONF="$d/etc/slurm.conf"
	if [ "${SLURM_USER:-root}" != root ]; then
		if ! chown "$SLURM_USER" "$d/state" "$d/log" "$d/run"; then
			SLURM_WHY="cannot give the state folders to SlurmUser $SLURM_USER"
			return 1
		fi
	fi

	if ! slurmctld -i >"$d/log/slurmctld.out" 2>&1; then
		SLURM_WHY="slurmctld failed: $(tail -n 2 "$d/log/slurmctld.out" "$d/log/slurmctld.log" 2>/dev/null | tr '\n' ' ')"
		return 1
	fi
	_slurm_wait_for 10 test -s "$d/run/slurmctld.pid"
	_slurm_pids+=("$(cat "$d/run/slurmctld.pid" 2>/dev/null)")
	if ! slurmd -N localhost >"$d/log/slurmd.out" 2>&1; then
		SLURM_WHY="slurmd failed: $(tail -n 2 "$d/log/slurmd.out" "$d/log/slurmd.log" 2>/dev/null | tr '\n' ' ')"
		return 1
	fi
	_slurm_wait_for 10 test -s "$d/run/slurmd.pid"
	_slurm_pids+=("$(cat "$d/run/slurmd.pid" 2>/dev/null)")
	if ! _slurm_wait_for 40 _slurm_node_idle; then
		SLURM_WHY="node never became idle: $(sinfo -h -o '%t %E' 2>&1 | head -1); $(grep -h -i error "$d/log/slurmctld.log" "$d/log/slurmd.log" 2>/dev/null | tail -n 2 | tr '\n' ' ')"
		return 1
	fi
	return 0
}

slurm_stop() {
	local pid i alive
	# Newest first: slurmd, slurmctld, munged. Only the PIDs we started.
	for ((i = ${#_slurm_pids[@]} - 1; i >= 0; i--)); do
		pid=${_slurm_pids[i]}
		[ -n "$pid" ] && kill "$pid" 2>/dev/null
	done
	for ((i = 0; i < 50; i++)); do
		alive=0
		for pid in "${_slurm_pids[@]}"; do
			[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && alive=1
		done
		((alive)) || break
		sleep 0.1
	done
	for pid in "${_slurm_pids[@]}"; do
		[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	done
	_slurm_pids=()
}

slurm_skip_all() {
	local n=$1 i
	for ((i = 0; i < n; i++)); do
		skip "slurm case $((i + 1))" "$SLURM_WHY"
	done
}

# slurm_skip_rest N: the test's N cases skipped with $SLURM_WHY, then its end
# (done_testing, exit): what a test does when Slurm or its inputs are missing.
slurm_skip_rest() {
	slurm_skip_all "$1"
	done_testing
	exit
}

slurm_logs() {
	[ -n "$SLURM_DIR" ] || return 0
	tail -n 20 "$SLURM_DIR"/log/*.log 2>/dev/null | sed 's/^/# /'
}

# slurm_pipeline_ready: ppgen, ppbatch and ppagg are built (the Slurm tests
# need a generated tree and the real commands); else SLURM_WHY says which not.
slurm_pipeline_ready() {
	local c
	for c in "$PP_FAST_BIN/ppgen" "$PP_BIN/ppbatch" "$PP_BIN/ppagg"; do
		if [ ! -x "$c" ]; then
			SLURM_WHY="$(basename "$c") is not built"
			return 1
		fi
	done
	return 0
}

PP_SLURM=""
slurm_stage() {
	if ! stage_for_others slurm "$PP_ROOT"/scripts/slurm/* "$PP_BIN/ppbatch" "$PP_BIN/ppagg"; then
		SLURM_WHY=$OTHERS_WHY
		return 1
	fi
	PP_SLURM=$T/others/slurm
}

slurm_epilog_wrapper() {
	# slurmctld passes no environment of ours: a site wrapper sets what it
	# needs (docs/cluster.md), here where the test cluster's config is.
	chmod 755 "$T"
	cat >"$T/epilog-wrapper" <<-EOF
		#!/bin/sh
		SLURM_CONF=$T/slurm/etc/slurm.conf PPTRACE_EPILOG_LOG=$T/epilog.log
		PPTRACE_CONFIG=$T/pptrace.ini
		export SLURM_CONF PPTRACE_EPILOG_LOG PPTRACE_CONFIG
		exec $1
	EOF
	chmod 755 "$T/epilog-wrapper"
}

# slurm_views DB: every row of the stable views (docs/contracts.md §3),
# sorted, one "view|csv row" line each — for comparing two databases.
slurm_views() {
	local v
	for v in ranks category_stats steps kernels pp_groups pipelines stragglers; do
		sqlite3 -csv "$1" "SELECT * FROM $v" 2>&1 | sed "s/^/$v|/" | LC_ALL=C sort
	done
}

# slurm_wait_file FILE SECONDS: until FILE exists and the queue is empty.
slurm_wait_file() {
	local i
	for ((i = 0; i < $2 * 5; i++)); do
		if [ -e "$1" ] && [ -z "$(squeue -h 2>/dev/null)" ]; then
			return 0
		fi
		sleep 0.2
	done
	return 1
}

# slurm_wait_result WORK SECONDS: until a merge job wrote WORK/status/
# merge_*.result and the queue is empty.
slurm_wait_result() {
	local i r
	for ((i = 0; i < $2 * 5; i++)); do
		for r in "$1"/status/merge_*.result; do
			if [ -e "$r" ] && [ -z "$(squeue -h 2>/dev/null)" ]; then
				return 0
			fi
		done
		sleep 0.2
	done
	return 1
}

# slurm_epilog_job N: the job the epilog tests analyse: ppgen's TP 1 x PP 2
# x DP 2 tree (4 micro-batches, 1 iteration) in run/prof, its single-node
# reference (slurm_reference) in single.db and its views in single.views.
# Without a reference the test's N cases are skipped (slurm_skip_rest);
# bails out when ppgen fails.
slurm_epilog_job() {
	local rc
	mkdir -p run
	"$PP_FAST_BIN/ppgen" --out run/prof --tp 1 --pp 2 --dp 2 --microbatches 4 --iterations 1 \
		>gen.log 2>&1 || { cat gen.log; echo "Bail out! ppgen failed"; exit 1; }
	slurm_reference "$PWD/run/prof" single.db
	rc=$?
	if [ "$rc" != 0 ]; then
		[ "$rc" = 1 ] || SLURM_WHY="the reference ppbatch/ppagg run failed"
		slurm_skip_rest "$1"
	fi
	slurm_views single.db >single.views
}

# slurm_reference TREE DB: the single-node reference — ppbatch then ppagg over
# every iteration of TREE into DB (charts in DB.agg). Returns 1 with SLURM_WHY
# set when ppbatch or ppagg is still a placeholder, 2 when either failed.
slurm_reference() {
	local tree=$1 db=$2 iters rc
	ppbatch --input "$tree" --db "$db" --quiet >"$db.log" 2>&1
	rc=$?
	if grep -q 'not implemented' "$db.log"; then
		SLURM_WHY="ppbatch is not implemented yet"
		return 1
	fi
	[ "$rc" = 0 ] || { sed 's/^/# /' "$db.log"; return 2; }
	iters=$(cd "$tree" && ls -d iteration_* | sed 's/.*_//' | sort -n | tr '\n' ' ')
	# shellcheck disable=SC2086
	ppagg --base-folder "$tree" --iterations $iters --db "$db" --out "$db.agg" --no-render \
		>>"$db.log" 2>&1
	rc=$?
	if grep -q 'not implemented' "$db.log"; then
		SLURM_WHY="ppagg is not implemented yet"
		return 1
	fi
	[ "$rc" = 0 ] || { sed 's/^/# /' "$db.log"; return 2; }
	return 0
}
