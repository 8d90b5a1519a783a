# tests/lib.sh — sourced by every end-to-end script (tests/e2e/tNNNN-*.sh).
#
# Gives a fresh temp directory ($T, removed at exit), the commands under test
# on PATH (sanitizer build from $PP_BIN), and TAP helpers:
#   ok_if "desc" cmd...        passes when cmd exits 0
#   is "desc" expected actual  passes when the strings are equal
#   skip "desc" "reason"
#   sql [OPTIONS] DB QUERY     sqlite3 -bail; on an error (non-zero exit or a
#                              message on stderr) it prints "sql error: ..."
#                              and returns 1, so a check of its output (even
#                              against "") fails and says why
#   checker_clean "desc" MIN TOOL ROOT   runs a source checker (tests/tools,
#                              tests/reliab): no report, exit 0, and its
#                              "# N ... checked" count on stderr >= MIN
#   stage_for_others NAME PATH...  copies what another user runs or reads to
#                              where that user can reach it (see below)
#   done_testing               prints the plan; call at the end
set -u
: "${PP_BIN:?run through make check}"
PP_ROOT=${PP_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
SHARED=${PP_SHARED:-$PP_ROOT/../shared}
PATH="$PP_BIN:$PATH"
T=$(mktemp -d "${TMPDIR:-/tmp}/pptrace-e2e.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1

# PP_VALGRIND=1 (make check-valgrind): every command of $PP_BIN runs under
# memcheck through a wrapper put first on PATH; its children too (workers),
# except system programs such as gnuplot. Reports go to $T/.vg/ and
# done_testing turns any of them (an error or a leak) into a failed test;
# leaks of a process killed by a signal (a worker the coordinator stops
# with SIGTERM) are not leaks: tests/reliab/vgfilter.awk.
# vg_wrappers BIN DEST: DEST/<cmd> runs BIN/<cmd> under memcheck, for each
# command of BIN.
vg_wrappers() {
	local c
	mkdir -p "$2" || return 1
	for c in "$1"/*; do
		[ -f "$c" ] && [ -x "$c" ] || continue
		cat >"$2/${c##*/}" <<EOF
#!/bin/sh
exec valgrind --error-exitcode=99 --leak-check=full \\
  --show-leak-kinds=definite,indirect,possible \\
  --errors-for-leak-kinds=definite,indirect,possible \\
  --trace-children=yes --trace-children-skip='/bin/*,/usr/*,*/gnuplot*' \\
  --child-silent-after-fork=yes --log-file="$T/.vg/%p.log" "$c" "\$@"
EOF
		chmod 755 "$2/${c##*/}" || return 1
	done
}
if [ "${PP_VALGRIND:-0}" = 1 ]; then
	mkdir -p "$T/.vg"
	chmod 1777 "$T/.vg" # commands run as nobody log here too
	vg_wrappers "$PP_BIN" "$T/.vg/bin"
	PATH="$T/.vg/bin:$PATH"
fi
_tap_n=0
_tap_fail=0

# ok_if DESC CMD... / is DESC EXPECTED GOT: one TAP line each. Both record a
# failure and return 0, so `is ... || return` never fires: to stop on a
# failed step, test the command itself (`cmd || { ok_if "cmd" false; return; }`).
ok_if() {
	local desc=$1; shift
	_tap_n=$((_tap_n + 1))
	if "$@" >"$T/.out" 2>&1; then
		echo "ok $_tap_n - $desc"
	else
		echo "not ok $_tap_n - $desc"
		sed 's/^/# /' "$T/.out" | tail -n 30
		_tap_fail=$((_tap_fail + 1))
	fi
}

is() {
	local desc=$1 exp=$2 got=$3
	_tap_n=$((_tap_n + 1))
	if [ "$exp" = "$got" ]; then
		echo "ok $_tap_n - $desc"
	else
		echo "not ok $_tap_n - $desc"
		echo "# expected: $(printf '%s' "$exp" | head -c 2000)"
		echo "# got:      $(printf '%s' "$got" | head -c 2000)"
		_tap_fail=$((_tap_fail + 1))
	fi
}

skip() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $1 # skip $2"
}

sql() {
	local rc o="$T/.sqlout.$BASHPID" e="$T/.sqlerr.$BASHPID"
	sqlite3 -bail "$@" >"$o" 2>"$e"
	rc=$?
	if [ "$rc" != 0 ] || [ -s "$e" ]; then
		echo "sql error (sqlite3 exit $rc): $(head -c 500 "$e")"
		rc=1
	else
		cat "$o"
	fi
	rm -f "$o" "$e"
	return "$rc"
}

checker_clean() {
	local desc=$1 min=$2 tool=$3 root=$4 rc n
	python3 "$tool" "$root" >"$T/report" 2>"$T/count"
	rc=$?
	cat "$T/count"
	is "$desc" "" "$(cat "$T/report")"
	is "${tool##*/} exit status" 0 "$rc"
	# A checker that finds nothing to check (a moved folder) proves nothing.
	n=$(sed -n 's/^# \([0-9]*\) .*checked.*/\1/p' "$T/count")
	ok_if "${tool##*/} checked ${n:-nothing} (at least $min)" test "${n:-0}" -ge "$min"
}

# stage_for_others NAME PATH...: another user (nobody, slurm) cannot enter a
# clone in a private folder (a home folder such as /root, or mktemp -d: mode
# 700), so what a test runs or reads as that user is copied, files or
# folders, into $T/others/NAME/ (removed with $T), readable by every user and
# runnable where it was. Returns 1 with the reason in $OTHERS_WHY when user
# nobody still cannot read it there (TMPDIR in a private folder), so that the
# test can skip those cases and say why.
OTHERS_WHY=""
stage_for_others() {
	local dir=$T/others/$1
	shift
	if ! { chmod 755 "$T" && mkdir -p "$dir" && chmod 755 "$T/others" "$dir" &&
		cp -R -- "$@" "$dir/" && chmod -R a+rX "$dir"; }; then
		OTHERS_WHY="cannot copy $* into $dir"
		return 1
	fi
	if [ "$(id -u)" = 0 ] &&
		! setpriv --reuid=65534 --regid=65534 --clear-groups -- test -r "$dir" -a -x "$dir"; then
		OTHERS_WHY="user nobody cannot enter $dir (TMPDIR=${TMPDIR:-/tmp} is not open to other users)"
		return 1
	fi
}

# link_iteration DIR N FILE...: DIR/iteration_N/ holding a link to each FILE
# (real traces, used where they are); bails out when a FILE is missing (a
# glob that matched nothing), rather than leave a dangling link behind.
link_iteration() {
	local dir=$1/iteration_$2 f
	shift 2
	mkdir -p "$dir" || exit 1
	for f in "$@"; do
		[ -e "$f" ] || { echo "Bail out! no trace $f"; exit 1; }
		ln -s "$f" "$dir/" || exit 1
	done
}

done_testing() {
	if [ "${PP_VALGRIND:-0}" = 1 ]; then
		is "valgrind memcheck reports no error and no leak" "" \
			"$(awk -f "$PP_ROOT/tests/reliab/vgfilter.awk" "$T"/.vg/*.log 2>/dev/null)"
	fi
	echo "1..$_tap_n"
	[ "$_tap_fail" = 0 ]
}

# agg80_report WHAT: the 80-rank mkaggdb job of the report tests (tp 2 x
# pp 4 x dp 10, laid out tp, dp, pp: rank = tp + 2 (dp + 10 stage), PP
# group 2 dp + tp; rank 13, stage 0 of replica 6, slow) as pptrace.db with
# its topology file, and its report in pptrace/ (ppagg -j 2 -q). Without
# gnuplot the rest of the test is one skip saying WHAT.
agg80_report() {
	if ! command -v gnuplot >/dev/null; then
		skip "$1" "gnuplot is not installed"
		done_testing
		exit
	fi
	python3 "$PP_ROOT/tests/e2e/mkaggdb.py" --db pptrace.db --tp 2 --pp 4 --dp 10 --mb 4 \
		--kernels 2 --straggler 13:1.4 --topology unique_parallel_groups_1.txt
	ppagg --base-folder . -j 2 -q
	is "the report: exit 0" 0 $?
}

# report_links DIR: every link of the pages of the report in DIR resolves
# (tests/tools/check_report_links.py).
report_links() {
	python3 "$PP_ROOT/tests/tools/check_report_links.py" "$1"
}

# chromium_dom PAGE: headless Chromium loads PAGE (a path below $T) and
# writes the DOM it ends with to dom.html, its console to chrome.err (the
# current folder); Chromium's exit status. One profile per test, in $T.
chromium_dom() {
	mkdir -p "$T/profile"
	timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$T/profile" --enable-logging=stderr --v=0 \
		--dump-dom "file://$T/$1" >dom.html 2>chrome.err
}
