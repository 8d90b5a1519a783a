#!/bin/bash
# kill -9 of the coordinator and of workers at random moments (6 times here,
# 50 in `make soak`): after each, integrity_check is ok and nothing stored
# before is lost; a final re-run gives exactly the clean-run content.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/reliab/lib-reliab.sh"

if pp_unimplemented ppbatch --input "$T/none"; then
	skip "kill -9 faults" "ppbatch batch mode is not implemented yet"
	done_testing
	exit
fi
kills=6
[ "${PP_SOAK:-0}" = 1 ] && kills=50
seed=${PP_SEED:-$$}
RANDOM=$seed
echo "# seed $seed (PP_SEED=$seed reproduces the kill times)"
make_dataset "$T/base" 8

t0=$(date +%s%3N)
ppbatch --input "$T/base" --db "$T/clean.db" -j 2 --quiet 2>"$T/clean.err"
is "clean run exits 0" 0 $?
dur=$(($(date +%s%3N) - t0))
echo "# clean run: $dur ms"
dump_views "$T/clean.db" >"$T/clean.txt"
ok_if "clean run stored ranks" grep -q ',ok,' "$T/clean.txt"

db=$T/run.db
bad_integrity= lost= orphans= crashes= hangs=
limit=$((dur / 1000 * 5 + 30)) # seconds a run may take after a worker is killed
coord=0 workers=0 missed=0
for i in $(seq 1 "$kills"); do
	dump_stored "$db" >"$T/before.txt"
	# A run that ends before its kill (the machine got faster than during
	# the clean run) is run again with the time it took as the measure,
	# up to 5 times, so that the kills land in running processes whatever
	# the load.
	hit=0
	for attempt in 1 2 3 4 5; do
		# --force: every round has the whole tree to (re)write, so the kill
		# always lands in the middle of work, also on rows stored before.
		t1=$(date +%s%3N)
		setsid ppbatch --input "$T/base" --db "$db" -j 2 --quiet --force 2>"$T/run.err" &
		pid=$!
		# A random moment within the first 80 % of a clean run.
		nap=$(awk -v r="$RANDOM" -v d="$dur" 'BEGIN { printf "%.3f", r / 32767 * d * 0.8 / 1000 }')
		sleep "$nap"
		target=$pid
		if ((i % 2 == 0)); then
			# Only real workers: at exit LeakSanitizer forks a tracer child that
			# must not be killed (its parent would wait for it forever).
			kids=$(pgrep -P "$pid" -f -- "--worker" | tr "\n" " ")
			set -- $kids
			if [ $# -gt 0 ]; then
				shift $((RANDOM % $#))
				target=$1
			fi
		fi
		echo "# kill $i: $([ "$target" = "$pid" ] && echo coordinator || echo worker) $target at ${nap}s"
		if kill -9 "$target" 2>/dev/null; then
			if [ "$target" = "$pid" ]; then coord=$((coord + 1)); else workers=$((workers + 1)); fi
			hit=1
			break
		fi
		missed=$((missed + 1)) # the run had already ended
		wait "$pid"
		rc=$?
		dur=$(($(date +%s%3N) - t1))
		# The next attempt overwrites run.err: judge this run, unkilled, now.
		[ "$rc" = 0 ] || crashes="$crashes [kill $i: a run that ended before its kill exited $rc]"
		sanitizer_clean "$T/run.err" ||
			crashes="$crashes [kill $i: sanitizer report in a run that ended before its kill]"
		echo "# the run ended first ($dur ms): again"
	done
	if [ "$hit" = 0 ]; then
		: # every attempt ended before its kill, and was waited for
	elif [ "$target" = "$pid" ]; then
		wait "$pid" 2>/dev/null
		# Workers of a killed coordinator must go away on their own.
		for _ in $(seq 1 50); do pgrep -g "$pid" >/dev/null || break; sleep 0.1; done
		if pgrep -g "$pid" >/dev/null; then
			orphans="$orphans $i"
			pkill -9 -g "$pid"
		fi
	else
		# The coordinator must notice the dead worker and finish: bounded wait.
		for _ in $(seq 1 $((limit * 10))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		if kill -0 "$pid" 2>/dev/null; then
			hangs="$hangs [kill $i: worker $target killed, coordinator still running after ${limit} s]"
			kill -9 -- -"$pid" 2>/dev/null
		fi
		wait "$pid"
		rc=$?
		[ "$rc" -le 1 ] || [ "$rc" = 137 ] ||
			crashes="$crashes [kill $i: worker killed, coordinator exit $rc]"
	fi
	sanitizer_clean "$T/run.err" || crashes="$crashes [kill $i: sanitizer report]"
	if [ -f "$db" ]; then
		ic=$(db_integrity "$db")
		[ "$ic" = ok ] || bad_integrity="$bad_integrity [kill $i: $ic]"
	fi
	dump_stored "$db" >"$T/after.txt"
	l=$(lost_rows "$T/before.txt" "$T/after.txt" | head -3)
	[ -z "$l" ] || lost="$lost [kill $i: $l]"
done
echo "# $kills kills: $coord of the coordinator, $workers of a worker; $missed runs ended before their kill and ran again"
ok_if "most kills hit a running process" test $((coord + workers)) -ge $((kills / 2))
is "integrity_check ok after every kill" "" "$bad_integrity"
is "no stored row lost by a kill" "" "$lost"
is "workers exit when their coordinator is killed" "" "$orphans"
is "coordinator finishes after a worker is killed (no hang)" "" "$hangs"
is "coordinator survives killed workers, no sanitizer report" "" "$crashes"

ppbatch --input "$T/base" --db "$db" -j 2 --quiet 2>"$T/rerun.err"
is "re-run after the kills exits 0" 0 $?
dump_views "$db" >"$T/rerun.txt"
ok_if "re-run content equals the clean run" diff "$T/clean.txt" "$T/rerun.txt"
is "integrity_check after the re-run" ok "$(db_integrity "$db")"
done_testing
