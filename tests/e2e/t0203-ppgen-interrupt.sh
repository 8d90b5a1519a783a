#!/bin/bash
# ppgen stopped by SIGINT or SIGTERM while it writes a tree: exit 130, one
# line saying how many complete traces are there and that .truth was not
# updated, every trace left is complete, no temporary file is left behind,
# and running the command again writes the whole tree; a second signal of
# either kind kills it at once; a SIGINT ignored when ppgen starts stays
# ignored. Before, the signal
# killed ppgen silently and left the trace being written as a hidden
# .pp-*.tmp file (up to the size of a trace) in the iteration folder.
#
# No race: ppgen stops itself (SIGSTOP) once its first trace is complete
# (PPTRACE_TEST_GEN_STOP, a glob over trace paths; tests only), the test
# waits for that state, sends the signal while ppgen is stopped, then
# continues it.
source "$PP_ROOT/tests/lib.sh"

# start NAME INT-TRAP PPGEN-ARGS...: runs ppgen in the background with
# SIGINT's disposition set by `trap INT-TRAP INT` ('-': the default, '':
# ignored) and waits until it has stopped itself after its first trace;
# sets pid. Fails when ppgen ended instead, or after 120 s (a hang, not a
# timing assumption: the stop is certain to come).
start() {
	local name=$1 int=$2
	shift 2
	(
		trap "$int" INT
		export PPTRACE_TEST_GEN_STOP='*/iteration_1/rank_0000_iter_1.pt.trace.json*'
		exec ppgen --out "$name" "$@"
	) >"$name.out" 2>"$name.err" &
	pid=$!
	for _ in $(seq 2400); do
		[ "$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)" = T ] && return 0
		kill -0 $pid 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# case NAME SIGNAL PPGEN-ARGS...
case_() {
	local name=$1 sig=$2
	shift 2
	start "$name" - "$@"
	is "$name: ppgen stopped itself after its first trace" 0 $?
	kill -"$sig" $pid
	kill -CONT $pid
	wait $pid
	local rc=$?
	is "$name: SIG$sig: exit 130" 130 "$rc"
	ok_if "$name: one line says so" grep -qE \
		"^ppgen: error: interrupted \(SIG$sig\): [0-9]+ complete traces? in $name, .truth not updated; run the command again$" \
		"$name.err"
	is "$name: no temporary file is left" "" "$(find "$name" -name '.pp-*')"
	is "$name: no truth CSV was written" "" "$(find "$name/.truth" -name '*.csv')"
	local bad=0 n=0 f
	for f in "$name"/iteration_*/rank_*; do
		[ -e "$f" ] || continue
		n=$((n + 1))
		"$PP_FAST_BIN/ppbatch" --inspect "$f" >/dev/null 2>&1 || bad=$((bad + 1))
	done
	ok_if "$name: the traces left ($n) are complete ($bad are not)" \
		test "$n" -ge 1 -a "$bad" = 0
	ok_if "$name: fewer traces than the whole tree" test "$n" -lt 8
	is "$name: the first trace alone is left, and said so" "1|1" \
		"$n|$(grep -c ": 1 complete trace in $name," "$name.err")"
	ppgen --out "$name" "$@" >/dev/null 2>&1
	is "$name: run again: exit 0" 0 $?
	is "$name: run again: the whole tree and its truth" "8|9" \
		"$(ls "$name"/iteration_*/rank_* | wc -l)|$(wc -l <"$name/.truth/ranks.csv")"
}

case_ plain INT --pp 4 --layers 60 --iterations 1,2
case_ gz TERM --pp 4 --layers 60 --iterations 1,2 --gzip

# SIGINT ignored when ppgen starts (a background job of a script, where the
# Ctrl-C typed at the script is not for ppgen): ppgen ignores it too and
# writes the whole tree; it does not catch the signal.
start ign '' --pp 4 --layers 60 --iterations 1,2
is "SIGINT ignored at start: ppgen stopped itself after its first trace" 0 $?
kill -INT $pid
kill -CONT $pid
wait $pid
is "SIGINT ignored at start: exit 0" 0 $?
is "... the whole tree and its truth" "8|9" \
	"$(ls ign/iteration_*/rank_* | wc -l)|$(wc -l <ign/.truth/ranks.csv)"

# Two signals, one of each kind (Ctrl-C, then the scheduler's SIGTERM):
# the first stops ppgen as above, the second kills it at once, whichever
# comes second (not only the same signal again: SIGINT then SIGTERM must
# not end as slowly as one signal).
start two - --pp 4 --layers 60 --iterations 1,2
is "two signals: ppgen stopped itself after its first trace" 0 $?
kill -TERM $pid
kill -INT $pid
kill -CONT $pid
wait $pid
rc=$?
ok_if "two signals: killed by the second (exit $rc)" test "$rc" = 130 -o "$rc" = 143
is "... without finishing as for one signal" "" "$(grep interrupted two.err)"

# --help says what 130 leaves and what running again does: not every
# command's "running again resumes", which ppgen does not (it writes the
# whole tree again).
ppgen --help >help.txt
ok_if "--help: 130 and running again" grep -qx \
	"  130 interrupted (SIGINT/SIGTERM): as 3; running again writes the whole tree" help.txt
is "--help: no 'resumes'" "" "$(grep resumes help.txt)"
done_testing
