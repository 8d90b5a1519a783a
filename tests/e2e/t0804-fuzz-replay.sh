#!/bin/bash
# Replays every fuzz seed (tests/fuzz/corpus/<target>/) and every input that
# once crashed or hung a target (tests/fuzz/regress/<target>/) through the
# target, built with gcc and the library under test (sanitizers when it has
# them), without libFuzzer: each must return, quickly, with no report.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/reliab/lib-reliab.sh"

lib=$PP_BIN/../libpp.a
util=$PP_BIN/../libpputil.a
if [ ! -f "$lib" ]; then
	skip "fuzz replay" "no libpp.a next to $PP_BIN"
	done_testing; exit
fi
san=
nm "$lib" 2>/dev/null | grep -q __asan_report && san="-fsanitize=address,undefined -fno-sanitize-recover=all"
PKGS="sqlite3 libuv zlib inih"
nm "$lib" 2>/dev/null | grep -q ' U isal_inflate$' && PKGS="$PKGS libisal" # an ISA-L build
for src in "$PP_ROOT"/tests/fuzz/fuzz_*.c; do
	t=${src##*/fuzz_}
	t=${t%.c}
	bin=$T/replay_$t
	if ! gcc -std=c11 -D_GNU_SOURCE -g -O1 $san -I"$PP_ROOT/pipeline" \
		-I"$PP_ROOT" $(pkg-config --cflags $PKGS) "$src" "$PP_ROOT/tests/fuzz/replay.c" "$lib" "$util" \
		$(pkg-config --libs $PKGS) -lm -o "$bin" 2>"$T/cc.err"; then
		is "$t: replay binary builds" "" "$(head -5 "$T/cc.err")"
		continue
	fi
	files=()
	for f in "$PP_ROOT"/tests/fuzz/corpus/"$t"/* "$PP_ROOT"/tests/fuzz/regress/"$t"/*; do
		[ -f "$f" ] && files+=("$f")
	done
	bad=
	# All inputs in one process; only when that fails, one by one to name them.
	if ! timeout 300 "$bin" "${files[@]}" >/dev/null 2>"$T/r.err" || ! sanitizer_clean "$T/r.err"; then
		for f in "${files[@]}"; do
			if ! timeout 30 "$bin" "$f" >/dev/null 2>"$T/r.err" || ! sanitizer_clean "$T/r.err"; then
				bad="$bad [${f#$PP_ROOT/}: $(grep -m1 -E 'ERROR|runtime error|Killed' "$T/r.err")]"
			fi
		done
		[ -n "$bad" ] || bad="[all inputs together fail or take over 300 s]"
	fi
	is "$t: ${#files[@]} seed and regression inputs replay cleanly" "" "$bad"
done
done_testing
