#!/bin/bash
# Runs every unit test binary and every end-to-end script, then prints one
# closing line "N passed, N failed[, N skipped]" covering all of them.
#
#   PP_BIN       folder with the commands under test (sanitizer build)
#   PP_UNIT      folder with the cmocka test binaries
#   PP_FAST_BIN  optimised build, for e2e steps that only prepare data
#   PP_ONLY      optional regex: run only tests whose name matches
#   PP_VALGRIND  1: run commands of e2e tests under valgrind memcheck
set -u
cd "$(dirname "$0")/.."
: "${PP_BIN:?}" "${PP_UNIT:?}"
export PP_BIN PP_UNIT PP_FAST_BIN="${PP_FAST_BIN:-$PP_BIN}" PP_ROOT="$PWD"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
only="${PP_ONLY:-.}"
passed=0 failed=0 skipped=0
failures=()
log_dir=$(mktemp -d "${TMPDIR:-/tmp}/pptrace-tests.XXXXXX")

# Adds one test file's counts to the totals and says how it went: kind
# (unit or e2e), name, exit status, passed, failed, skipped, log, the log
# lines to show on failure, what failed, the pattern of skip reasons (a
# skipping test prints "# skip: why").
report() {
	local kind=$1 name=$2 rc=$3 p=$4 f=$5 s=$6 out=$7 lines=$8 what=$9 skip_re=${10}
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	if ((f > 0)); then
		failures+=("$kind/$name (exit $rc)")
		echo "FAIL $kind/$name: $what (log below)"
		tail -n "$lines" "$out" | sed 's/^/    /'
	else
		if ((s)); then echo "ok   $kind/$name: $p passed, $s skipped"; else echo "ok   $kind/$name: $p passed"; fi
		grep -E "$skip_re" "$out" | sed 's/^/    /'
	fi
}

run_unit() {
	local bin=$1 name out rc run ok
	name=$(basename "$bin")
	out="$log_dir/$name.log"
	timeout 300 "$bin" >"$out" 2>&1
	rc=$?
	run=$(grep -c '^\[ RUN      \]' "$out")
	ok=$(grep -c '^\[       OK \]' "$out")
	# cmocka names a skipped test twice (when run, and in the closing list)
	# and prints a count line: count distinct names.
	skip=$(grep -E '^\[  SKIPPED \] [A-Za-z_]' "$out" | sort -u | wc -l)
	if ((run == 0)); then run=1; fi
	if ((rc != 0 && ok + skip >= run)); then ok=$((run - 1 - skip)); fi
	report unit "$name" "$rc" "$ok" $((run - ok - skip)) "$skip" "$out" 40 \
		"$((run - ok - skip)) of $run failed" '^# *skip'
}

run_e2e() {
	local script=$1 name out rc p f s
	name=$(basename "$script" .sh)
	out="$log_dir/$name.log"
	timeout 900 bash "$script" >"$out" 2>&1
	rc=$?
	p=$(grep -cE '^ok [0-9]+( |$)' "$out" | head -1)
	s=$(grep -cE '^ok [0-9]+.*# *(skip|SKIP)' "$out")
	f=$(grep -cE '^not ok [0-9]+' "$out")
	p=$((p - s))
	if ((rc != 0 && f == 0)); then f=1; fi
	report e2e "$name" "$rc" "$p" "$f" "$s" "$out" 60 "$f failed, $p passed" '# *(skip|SKIP)'
}

for bin in "$PP_UNIT"/test_*; do
	[ -x "$bin" ] || continue
	[[ $(basename "$bin") =~ $only ]] || continue
	run_unit "$bin"
done
for script in tests/e2e/t*.sh; do
	[ -f "$script" ] || continue
	[[ $(basename "$script") =~ $only ]] || continue
	run_e2e "$script"
done

if ((${#failures[@]})); then
	echo "failed: ${failures[*]}"
	echo "logs kept in $log_dir"
else
	rm -rf "$log_dir"
fi
if ((skipped)); then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
((failed == 0))
