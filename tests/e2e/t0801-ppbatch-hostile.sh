#!/bin/bash
# Hostile and broken inputs (tests/reliab/mkhostile.py): every file gets its
# own specific error or is analysed, the valid files around them are
# processed exactly, nothing crashes, leaks or hangs, no SQL from trace text.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/reliab/lib-reliab.sh"

small=
[ "${PP_VALGRIND:-0}" = 1 ] && small=--small
if ! as_user_ready; then
	skip "hostile inputs, read by ppbatch as user nobody" "$OTHERS_WHY"
	done_testing
	exit
fi
python3 "$RELIAB/mkhostile.py" "$T/base" $small
chmod 755 "$T"
mkdir -p "$T/db"
[ "$(id -u)" = 0 ] && chown 65534:65534 "$T/db"

# Every input alone through --inspect: an exit code, never a crash or a hang.
# (Not the FIFO: named explicitly, it is read like cat reads it, waiting for
# a writer; a pipe with a writer is read, see below.)
bad=
for f in "$T"/base/iteration_1/*; do
	[ -p "$f" ] && continue
	as_user timeout 60 ppbatch --inspect "$f" >/dev/null 2>"$T/ierr"
	r=$?
	if [ "$r" -gt 3 ] || ! sanitizer_clean "$T/ierr"; then
		bad="$bad [$(basename "$f"): exit $r $(grep -m1 -E 'ERROR|runtime error' "$T/ierr")]"
	fi
done
is "--inspect of each hostile file exits 0-3 without a sanitizer report" "" "$bad"
ppbatch --inspect --json <(cat "$T/base/iteration_1/rank_0000_iter_1.pt.trace.json") >"$T/pipe.out" 2>&1
is "--inspect reads a pipe (process substitution)" 0 $?

if pp_unimplemented ppbatch --input "$T/none"; then
	skip "hostile inputs through ppbatch --input" "ppbatch batch mode is not implemented yet"
	done_testing
	exit
fi

start=$(date +%s)
as_user timeout 600 ppbatch --input "$T/base" --db "$T/db/pp.db" -j 2 --quiet \
	>"$T/out" 2>"$T/err"
rc=$?
echo "# ppbatch took $(($(date +%s) - start)) s"
is "ppbatch exits 1 (some inputs failed), no crash or hang" 1 "$rc"
ok_if "no sanitizer report from ppbatch" sanitizer_clean "$T/err"
[ "$rc" = 1 ] || sed 's/^/# /' "$T/err" | tail -20

while IFS=$'\t' read -r verdict what why; do
	if [ "$verdict" = PASS ]; then
		is "$what" PASS PASS
	else
		is "$what" "" "$why"
	fi
done < <(python3 "$RELIAB/check_hostile.py" "$T/base" "$T/db/pp.db" "$T/err" 2>&1 ||
	printf 'FAIL\tcheck_hostile.py ran\tsee above\n')

done_testing
