#!/bin/bash
# pptrace-cron (local mode, no Slurm needed): the first run analyses every
# settled iteration folder under the roots, the next finds nothing new, a new
# folder is analysed alone, a folder still being written waits, and a run
# that finds the lock taken leaves at once.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/slurm-lib.sh"
NCASES=12
cron="$PP_ROOT/scripts/cron/pptrace-cron"

if ! slurm_pipeline_ready; then
	slurm_skip_all "$NCASES"
	done_testing
	exit
fi
# Two iterations now, a third one later (taken from a second generated tree).
"$PP_FAST_BIN/ppgen" --out gen --tp 1 --pp 2 --dp 1 --microbatches 4 --iterations 1,2,3 >gen.log 2>&1 ||
	{ cat gen.log; echo "Bail out! ppgen failed"; exit 1; }
base="$PWD/root/team/job1/prof"
mkdir -p "$base"
cp -a gen/iteration_1 gen/iteration_2 "$base/"
cp gen/unique_parallel_groups_* "$base/" 2>/dev/null
per_iter=$(find gen/iteration_1 -name '*.json*' | wc -l)
printf '[cron]\nroots = %s\nsettle_minutes = 0\nlock = %s\nagg_args = --no-render --quiet\n' \
	"$PWD/root" "$PWD/cron.lock" >cron.ini
find root -name '*.json*' -exec touch -d '20 minutes ago' {} +

"$cron" --config cron.ini --log cron.log
rc=$?
if [ "$rc" != 0 ] && grep -q 'not implemented' cron.log; then
	SLURM_WHY="ppbatch or ppagg is not implemented yet"
	slurm_skip_all "$NCASES"
	done_testing
	exit
fi
is "first run exits 0" 0 "$rc"
ok_if "first run: both folders are new" grep -q "prof: new: iteration_1 iteration_2$" cron.log
is "first run: every rank stored" "$((2 * per_iter))" \
	"$(sql "$base/pptrace.db" 'SELECT count(*) FROM ranks' 2>&1)"
is "first run: state remembers two folders" "iteration_1 iteration_2" \
	"$(cut -d' ' -f1 "$base/.pptrace-cron.state" | tr '\n' ' ' | sed 's/ $//')"

: >cron.log
"$cron" --config cron.ini --log cron.log
is "second run exits 0" 0 "$?"
ok_if "second run: nothing new" grep -q "nothing new under $PWD/root$" cron.log

# A new folder still being written waits for the settle time, then goes alone.
cp -a gen/iteration_3 "$base/"
: >cron.log
"$cron" --config cron.ini --settle 10 --log cron.log
ok_if "fresh folder: left for later" grep -q 'iteration_3 still being written' cron.log
find "$base/iteration_3" -name '*.json*' -exec touch -d '20 minutes ago' {} +
: >cron.log
"$cron" --config cron.ini --settle 10 --log cron.log
is "third run exits 0" 0 "$?"
ok_if "third run: only the new folder" grep -q "prof: new: iteration_3$" cron.log
is "third run: its ranks added" "$((3 * per_iter)) 3" \
	"$(sql "$base/pptrace.db" 'SELECT count(*), count(DISTINCT iteration) FROM ranks' 2>&1 | tr '|' ' ')"

# Overlap: while another run holds the lock, a run leaves at once, doing
# nothing: it returns while the holder still holds the lock (the holder
# would hold it for 10 minutes; no clock is read).
flock cron.lock sh -c 'echo $$ >holder.pid; exec sleep 600' &
holder=$!
for _ in $(seq 1200); do # until the holder has it (a minute at most)
	[ -s holder.pid ] && ! flock -n cron.lock true && break
	sleep 0.05
done
: >cron.log
touch -d '20 minutes ago' "$base/iteration_3/new.json"
"$cron" --config cron.ini --log cron.log
rc=$?
is "locked: exits 0 without waiting for the lock" "0 held" \
	"$rc $(kill -0 "$holder" 2>/dev/null && echo held)"
ok_if "locked: says so, processes nothing" grep -q 'another run holds .*cron.lock; skipping' cron.log
kill "$(cat holder.pid)" 2>/dev/null # the sleep: flock then ends
wait "$holder" 2>/dev/null

done_testing
