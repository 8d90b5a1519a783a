#!/bin/bash
# The tests that run commands as another user pass from a clone in a private
# folder (mode 700, as a home folder such as /root or a mktemp -d), with
# their other-user cases run, not skipped. The tree and the commands under
# test are copied into $T/home (mode 700), and every test that acts as
# another user (it calls as_user, stage_for_others, slurm_stage, setpriv or
# runuser) runs from there: in two lanes, the Slurm tests in one, the others
# in the other.
# A skip for want of a tool (Slurm, sudo, a tmpfs mount) is passed on; a
# skip that names the private folder or says a user cannot reach, run or
# read something is a failure: that is the case this test is here for.
source "$PP_ROOT/tests/lib.sh"

if [ "$(id -u)" != 0 ]; then
	skip "tests as another user, from a private clone" "needs root: only root runs commands as another user"
	done_testing
	exit
fi
if [ "${PP_VALGRIND:-0}" = 1 ]; then
	skip "tests as another user, from a private clone" "under valgrind these tests run on their own"
	done_testing
	exit
fi

home=$T/home
clone=$home/pptrace
mkdir -m 700 "$home" "$clone" || exit 1
tar -C "$PP_ROOT" --exclude='./build*' --exclude=./.git --exclude=./bench/work -cf - . |
	tar -C "$clone" -xf -
mkdir -p "$clone/build-san/bin" "$clone/build/bin"
cp -R "$PP_BIN/." "$clone/build-san/bin/" && cp -R "$PP_FAST_BIN/." "$clone/build/bin/"
ok_if "the tree and the commands are copied into a mode-700 folder" \
	test -x "$clone/build-san/bin/ppbatch" -a -f "$clone/tests/lib.sh"
ok_if "user nobody cannot enter it" \
	test "$(stat -c %a "$home")" = 700 -a "$(setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		sh -c "ls '$clone' >/dev/null 2>&1; echo \$?")" != 0

tests=()
for f in "$clone"/tests/e2e/t*.sh; do
	case ${f##*/} in t0007-*) continue ;; esac
	grep -qE '\b(as_user|stage_for_others|slurm_stage|setpriv|runuser)\b' "$f" && tests+=("${f##*/}")
done
ok_if "tests that act as another user: ${tests[*]}" test "${#tests[@]}" -ge 4

# The commands under test are found in the clone only: PATH loses the
# folders lib.sh put first, which another user might reach.
path=$(printf '%s\n' "$PATH" | tr ':' '\n' | grep -vxF -e "$PP_BIN" -e "$PP_FAST_BIN" | paste -sd:)

# lane PATTERN: runs the tests whose name matches PATTERN (or, with !, does
# not), one after the other, from the clone; each writes out/<name>.log and
# out/<name>.rc.
mkdir -p out
lane() {
	local t
	for t in "${tests[@]}"; do
		if [ "$1" = '!' ]; then [[ $t =~ $2 ]] && continue; else [[ $t =~ $1 ]] || continue; fi
		(cd "$clone" && PATH=$path PP_ROOT=$clone PP_BIN=$clone/build-san/bin PP_FAST_BIN=$clone/build/bin \
			PP_UNIT=$clone/build-san/tests PP_SHARED=$SHARED timeout 900 bash "tests/e2e/$t") \
			>"out/${t%.sh}.log" 2>&1
		echo $? >"out/${t%.sh}.rc"
	done
}
lane '^t07' &
lane '!' '^t07' &
wait

# A skip reason that says the clone is out of someone's reach.
denied="$home|cannot (reach|run|read|enter|copy)|[Pp]ermission denied"
for t in "${tests[@]}"; do
	n=${t%.sh}
	log=out/$n.log
	p=$(grep -cE '^ok [0-9]+' "$log")
	s=$(grep -cE '^ok [0-9]+.*# *(skip|SKIP)' "$log")
	f=$(grep -E '^not ok [0-9]+' "$log" | head -5 | tr '\n' ' ')
	rc=$(cat "out/$n.rc")
	if [ "$rc" != 0 ] || [ -n "$f" ]; then
		is "$n from a private clone: exit 0, no failed case" "0" "$rc${f:+ $f}"
		tail -n 30 "$log" | sed 's/^/#   /'
	else
		ok_if "$n from a private clone: exit 0, no failed case" true
	fi
	is "$n: no case skipped for want of access" "" \
		"$(grep -E '^ok [0-9]+.*# *(skip|SKIP)' "$log" | grep -E "$denied" | head -3 | tr '\n' ' ')"
	if [ "$s" -gt 0 ] && [ "$s" = "$p" ]; then
		skip "$n: its cases ran" "$(sed -n 's/^ok [0-9]*.*# *[Ss][Kk][Ii][Pp] *//p' "$log" | head -1)"
	else
		ok_if "$n: $((p - s)) cases ran, $s skipped" test "$((p - s))" -gt 0
	fi
done
done_testing
