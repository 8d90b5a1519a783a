#!/bin/bash
# ppbatch benchmarks (docs/performance.md). Appends "name value unit" lines to
# $BENCH_RESULTS:
#   ppbatch_1worker_gbps       one worker, one ~1 GB ppgen trace: parse +
#                              classify + store, wall clock, median of 5 (BENCH_ROUNDS; _cpu_gbps:
#                              bytes per CPU second, robust on a busy machine)
#   ppbatch_1worker_written_gbps the same worker on the trace as a program
#                              writing 8 KiB at a time leaves it cached
#   ppbatch_1file_command_gbps the same trace through `ppbatch --input -j 1`
#   ppbatch_kernels_per_s      its GPU events stored per second
#   ppbatch_worker_faults      its page faults (minor: first touches of
#                              memory) in the median round; _gzip_ too
#   ppbatch_worker_rss_mib     peak RSS of that worker, and the target
#                              64 MiB + 10 % of the trace
#   ppbatch_1worker_gzip_gbps  the same worker on the trace's .gz (gzip -6),
#                              decompressed bytes per second, median of 5
#   ppbatch_1worker_1thread_gbps / _gzip_: the same worker held to one
#                              thread (--worker-threads 1; the rows above
#                              take the default, 2 threads on >= 2 cores),
#                              in the same rounds, and _threads_speedup:
#                              its median wall time over the default's
#   ppbatch_real_gbps          the worker on the largest real trace (a real
#                              kernel density), median of 5 (BENCH_ROUNDS)
#   ppbatch_tree_p1_gbps / _p2_gbps / ppbatch_p2_speedup
#                              >= 32 ranks, >= 4 GB, --processes 1 vs 2
#                              (on 2 cores: one worker of 2 threads
#                              against two of one thread), alternately,
#                              medians of 5 (BENCH_ROUNDS)
#   ppbatch_db_ratio_pct       database bytes / trace bytes (every kernel)
#   ppbatch_base_*             the same figures of a build of an older commit
#                              (PPBATCH_BASE_COMMIT, default fe95627:
#                              scripts/bench-base builds it once), run
#                              alternately with the current build in every
#                              round, and _vs_base: its median wall time over
#                              the current build's (> 1: the current is faster)
# Sizes: PPBATCH_BENCH_BIG_MB (default 1000), PPBATCH_BENCH_TREE_GB (4).
# PPBATCH_BENCH_PARTS=worker: only the worker on the plain and gzip trace.
set -eu
: "${BENCH_WORK:?run through scripts/bench}" "${BENCH_RESULTS:?}"
W="$BENCH_WORK/ppbatch"
big_mb=${PPBATCH_BENCH_BIG_MB:-1000}
tree_gb=${PPBATCH_BENCH_TREE_GB:-4}
mkdir -p "$W"
put() { echo "$1 $2 $3" | tee -a "$BENCH_RESULTS"; }
bytes_of() { du -cb "$@" | tail -1 | cut -f1; }

# One big trace: ppgen's size grows with microbatches x layers x kernels.
# ~96 MB at 64 x 40 x 16 (one rank of pp 2).
big="$W/big"
if [ ! -f "$big/.done-$big_mb" ]; then
	rm -rf "$big"
	mb=$(awk -v s="$big_mb" 'BEGIN{printf "%d", 64 * s / 96 + 1}')
	ppgen --out "$big" --pp 2 --microbatches "$mb" --layers 40 --kernels-per-layer 16 \
		--iterations 1 --ranks 0 --quiet
	touch "$big/.done-$big_mb"
fi
trace=$(ls "$big"/iteration_1/*.json)
tb=$(stat -c %s "$trace")
# The build of an older commit timed beside this one (the goal of one
# worker's speed is a ratio to it, measured in the same run).
base_commit=${PPBATCH_BASE_COMMIT:-fe95627}
base_bin=
if [ "$base_commit" != none ]; then
	base_bin=$(scripts/bench-base "$base_commit" 2>"$W/base.err") || base_bin=
	if [ -n "$base_bin" ]; then
		echo "# ppbatch base: $base_commit ($base_bin), run alternately with the current build" >>"$BENCH_RESULTS"
	else
		echo "# ppbatch base: skipped: $(tail -1 "$W/base.err")" | tee -a "$BENCH_RESULTS"
	fi
fi
# bins[b] run with the worker options bargs[b]: the current build, the
# base build, the current build with one thread per worker (index one).
bins=("$PP_BIN")
bargs=("")
[ -z "$base_bin" ] || { bins+=("$base_bin"); bargs+=(""); }
bins+=("$PP_BIN")
bargs+=("--worker-threads 1")
one=$((${#bins[@]} - 1))
# The worker alone (the protocol of pipeline/batch/worker.h), for its own RSS;
# median of BENCH_ROUNDS (default 5) by wall time, each build of bins[] in
# every round (the first one first in odd rounds, last in even ones).
# worker_runs TASK WHAT [DB]: the rounds of one task; writes the median
# round's "wall user sys maxrss_kb minor_faults" of build b to $W/median.b. Each round
# stores into a new database; or, given DB, into DB (DB.b for build b) made
# once before the rounds by that build (as in a run, where the coordinator
# creates it: its creation is not timed), replacing the trace.
worker_runs() {
	[[ ${BENCH_ROUNDS:-5} =~ ^[1-9][0-9]*$ ]] || {
		echo "ppbatch.sh: error: BENCH_ROUNDS '$BENCH_ROUNDS' is not a number of runs (1 or more)" >&2
		exit 1
	}
	local b round order
	for b in "${!bins[@]}"; do
		rm -f "$W/worker.times.$b"
		if [ -n "${3:-}" ]; then
			rm -f "$3.$b"*
			"${bins[$b]}/ppbatch" --worker ${bargs[$b]} --db "$3.$b" <"$1" >"$W/reply"
		fi
	done
	for ((round = 1; round <= ${BENCH_ROUNDS:-5}; round++)); do
		order=("${!bins[@]}")
		((round % 2)) || order=($(printf '%s\n' "${order[@]}" | tac))
		for b in "${order[@]}"; do
			local db=${3:-$W/big.db}.$b
			[ -n "${3:-}" ] || rm -f "$db"*
			sync
			/usr/bin/time -f '%e %U %S %M %R' -o "$W/time" "${bins[$b]}/ppbatch" --worker ${bargs[$b]} --db "$db" <"$1" >"$W/reply"
			grep -q '^0	' "$W/reply" || { echo "ppbatch bench: worker (${bins[$b]}) failed$2: $(cat "$W/reply")" >&2; exit 1; }
			cat "$W/time" >>"$W/worker.times.$b"
		done
	done
	for b in "${!bins[@]}"; do
		sort -n "$W/worker.times.$b" | sed -n "$(((${BENCH_ROUNDS:-5} + 1) / 2))p" >"$W/median.$b"
	done
}
# put_rates BUILD GBPS CPU_GBPS RATIO BYTES: the GB/s (wall and CPU) of
# build BUILD's median in the last worker_runs, named GBPS and CPU_GBPS,
# and the ratio of its median wall time to the current build's, named RATIO.
put_rates() {
	local wall0 wall usr sys
	read -r wall0 _ <"$W/median.0"
	read -r wall usr sys _ <"$W/median.$1"
	put "$2" "$(awk -v b="$5" -v t="$wall" 'BEGIN{printf "%.3f", b/1e9/t}')" GB/s
	put "$3" "$(awk -v b="$5" -v u="$usr" -v s="$sys" 'BEGIN{printf "%.3f", b/1e9/(u+s)}')" GB/s
	put "$4" "$(awk -v a="$wall" -v c="$wall0" 'BEGIN{printf "%.2f", a/c}')" x
}
# put_base NAME BYTES: the base build's figures (put_rates) against the
# current one's.
put_base() {
	[ -n "$base_bin" ] || return 0
	put_rates 1 "ppbatch_base_$1_gbps" "ppbatch_base_$1_cpu_gbps" "ppbatch_$1_vs_base" "$2"
	local faults
	read -r _ _ _ _ faults <"$W/median.1"
	put "ppbatch_base_$1_faults" "$faults" faults
}
# put_one NAME BYTES: the one-thread worker's figures (put_rates) against
# the default's.
put_one() {
	put_rates "$one" "ppbatch_$1_1thread_gbps" "ppbatch_$1_1thread_cpu_gbps" \
		"ppbatch_$1_threads_speedup" "$2"
}
printf '%s\t%s\t%s\titeration_1\t1\t1\t1\t0\t%s\t0\t0\n' "$trace" "$trace" "$trace" "$tb" >"$W/task"
# Every input in the page cache as a first read from disk leaves it
# (scripts/bench-cache; docs/reader.md, "The page cache's state").
scripts/bench-cache read "$trace"
worker_runs "$W/task" ""
read -r wall usr sys rss_kb faults <"$W/median.0"
put ppbatch_trace_mb "$(awk -v b="$tb" 'BEGIN{printf "%.0f", b/1e6}')" MB
put ppbatch_1worker_gbps "$(awk -v b="$tb" -v t="$wall" 'BEGIN{printf "%.3f", b/1e9/t}')" GB/s
put ppbatch_1worker_cpu_gbps "$(awk -v b="$tb" -v u="$usr" -v s="$sys" 'BEGIN{printf "%.3f", b/1e9/(u+s)}')" GB/s
put ppbatch_worker_rss_mib "$(awk -v k="$rss_kb" 'BEGIN{printf "%.1f", k/1024}')" MiB
put ppbatch_worker_faults "$faults" faults
put ppbatch_worker_rss_target_mib "$(awk -v b="$tb" 'BEGIN{printf "%.1f", 64 + b*0.1/1048576}')" MiB
put ppbatch_big_db_ratio_pct "$(awk -v d="$(bytes_of "$W/big.db.0"*)" -v b="$tb" 'BEGIN{printf "%.2f", 100*d/b}')" %
put_base 1worker "$tb"
put_one 1worker "$tb"
# The same worker on the gzip file (ISA-L's inflate when built in), kept
# outside the tree that the whole-command run below walks.
gz="$W/big-$big_mb.json.gz"
[ -s "$gz" ] || gzip -6 -c "$trace" >"$gz"
scripts/bench-cache read "$gz"
printf '%s\t%s\t%s\titeration_1\t1\t1\t1\t0\t%s\t0\t0\n' "$gz" "$gz" "$gz" "$(stat -c %s "$gz")" >"$W/gztask"
worker_runs "$W/gztask" " on gzip"
read -r wall usr sys rss_kb faults <"$W/median.0"
put ppbatch_1worker_gzip_gbps "$(awk -v b="$tb" -v t="$wall" 'BEGIN{printf "%.3f", b/1e9/t}')" GB/s
put ppbatch_1worker_gzip_cpu_gbps "$(awk -v b="$tb" -v u="$usr" -v s="$sys" 'BEGIN{printf "%.3f", b/1e9/(u+s)}')" GB/s
put ppbatch_worker_gzip_rss_mib "$(awk -v k="$rss_kb" 'BEGIN{printf "%.1f", k/1024}')" MiB
put ppbatch_worker_gzip_faults "$faults" faults
put_base 1worker_gzip "$tb"
put_one 1worker_gzip "$tb"
if [ "${PPBATCH_BENCH_PARTS:-all}" = worker ]; then
	put ppbatch_loadavg "$(cut -d' ' -f1 /proc/loadavg)" load
	exit 0
fi
# The rest times the builds alone: not the one-thread worker.
unset 'bins[one]'
# The same worker on the trace as a program writing 8 KiB at a time leaves
# it in the page cache (small folios: more system time in the reader).
scripts/bench-cache written "$trace"
worker_runs "$W/task" " on the written trace"
read -r wall usr sys rss_kb <"$W/median.0"
put ppbatch_1worker_written_gbps "$(awk -v b="$tb" -v t="$wall" 'BEGIN{printf "%.3f", b/1e9/t}')" GB/s
put ppbatch_1worker_written_cpu_gbps "$(awk -v b="$tb" -v u="$usr" -v s="$sys" 'BEGIN{printf "%.3f", b/1e9/(u+s)}')" GB/s
scripts/bench-cache read "$trace"
# The same trace through the whole command (coordinator, one worker, the
# final WAL checkpoint), as a user runs it.
rm -f "$W/bigcmd.db"*
sync
/usr/bin/time -f '%e %U %S' -o "$W/time" \
	ppbatch --input "$big" --db "$W/bigcmd.db" --processes 1 --quiet
read -r wall usr sys <"$W/time"
put ppbatch_1file_command_gbps "$(awk -v b="$tb" -v t="$wall" 'BEGIN{printf "%.3f", b/1e9/t}')" GB/s
put ppbatch_kernels_per_s "$(sqlite3 "$W/bigcmd.db" 'SELECT count(*) FROM kernels' | awk -v t="$wall" '{printf "%.0f", $1/t}')" kernels/s

# Throughput per GB depends on how many GPU events a GB holds: ppgen writes
# ~1,200 bytes per kernel, the real traces 1,500-4,200. The largest real
# trace ($PP_SHARED/data/real, 54 MB, ~19 k kernels) through the worker,
# median of BENCH_ROUNDS, for a real-world density.
real=${PP_SHARED:-$PWD/../shared}/data/real/hta/df_index_resolver__df_index_resolver.json.gz
if [ -f "$real" ]; then
	zcat "$real" >"$W/real.json"
	scripts/bench-cache read "$W/real.json"
	rb=$(stat -c %s "$W/real.json")
	printf '%s\t%s\t%s\titeration_1\t1\t1\t1\t0\t%s\t0\t0\n' "$W/real.json" "$W/real.json" "$W/real.json" "$rb" >"$W/rtask"
	worker_runs "$W/rtask" " on the real trace" "$W/real.db"
	read -r wall _ <"$W/median.0"
	put ppbatch_real_trace_mb "$(awk -v b="$rb" 'BEGIN{printf "%.0f", b/1e6}')" MB
	put ppbatch_real_bytes_per_kernel "$(sqlite3 "$W/real.db.0" 'SELECT count(*) FROM kernels' | awk -v b="$rb" '{printf "%.0f", b/$1}')" bytes
	put ppbatch_real_gbps "$(awk -v b="$rb" -v t="$wall" 'BEGIN{printf "%.3f", b/1e9/t}')" GB/s
	put_base real "$rb"
fi

# A tree of >= 32 ranks and >= tree_gb GB: pp 4 x dp 8 ranks, one iteration.
tree="$W/tree"
if [ ! -f "$tree/.done-$tree_gb" ]; then
	rm -rf "$tree"
	# ~ 4.8 MB per rank at 8 x 16 x 16 with pp 4 (stages differ a little):
	# scale micro-batches, 5 % extra, a multiple of 4.
	mb=$(awk -v g="$tree_gb" 'BEGIN{m = g * 1000 / 32 / 4.8 * 8 * 1.05; printf "%d", int((m + 3) / 4) * 4}')
	ppgen --out "$tree" --pp 4 --dp 8 --microbatches "$mb" --layers 16 --kernels-per-layer 16 \
		--iterations 1 --quiet
	touch "$tree/.done-$tree_gb"
fi
tbytes=$(bytes_of "$tree"/iteration_1/*.json)
put ppbatch_tree_ranks "$(ls "$tree"/iteration_1 | wc -l)" ranks
put ppbatch_tree_gb "$(awk -v b="$tbytes" 'BEGIN{printf "%.2f", b/1e9}')" GB
# -j 1 and -j 2 alternately, BENCH_ROUNDS rounds (default 5), medians:
# this machine's speed drifts by tens of percent from minute to minute, so
# the two are compared within one stretch of time; the base build's runs
# (when there is one) alternate with them.
scripts/bench-cache read "$tree"/iteration_1/*.json
rm -f "$W"/tree*.times
for ((round = 1; round <= ${BENCH_ROUNDS:-5}; round++)); do
	for b in "${!bins[@]}"; do
		for p in 1 2; do
			rm -f "$W/tree$p.db"*
			sync
			/usr/bin/time -f '%e %U %S' -o "$W/time" \
				"${bins[$b]}/ppbatch" --input "$tree" --db "$W/tree$p.db" --processes $p --quiet
			read -r wall usr sys <"$W/time"
			echo "$wall $(awk -v u="$usr" -v s="$sys" 'BEGIN{printf "%.2f", u+s}')" >>"$W/tree$p.$b.times"
		done
		[ "$b" != 0 ] || put_db_ratio=$(awk -v d="$(bytes_of "$W/tree2.db"*)" -v b="$tbytes" 'BEGIN{printf "%.2f", 100*d/b}')
	done
done
declare -A twall
for b in "${!bins[@]}"; do
	pre=ppbatch
	[ "$b" = 0 ] || pre=ppbatch_base
	for p in 1 2; do
		read -r wall cpu < <(sort -n "$W/tree$p.$b.times" | sed -n "$(((${BENCH_ROUNDS:-5} + 1) / 2))p")
		twall[$p.$b]=$wall
		put "${pre}_tree_p${p}_gbps" "$(awk -v b="$tbytes" -v t="$wall" 'BEGIN{printf "%.3f", b/1e9/t}')" GB/s
		put "${pre}_tree_p${p}_cpu_s" "$cpu" s
		rm -f "$W/tree$p.$b.times"
	done
	put "${pre}_p2_speedup" "$(awk -v a="${twall[1.$b]}" -v b="${twall[2.$b]}" 'BEGIN{printf "%.2f", a/b}')" x
done
if [ -n "$base_bin" ]; then
	put ppbatch_tree_p1_vs_base "$(awk -v a="${twall[1.1]}" -v c="${twall[1.0]}" 'BEGIN{printf "%.2f", a/c}')" x
	put ppbatch_tree_p2_vs_base "$(awk -v a="${twall[2.1]}" -v c="${twall[2.0]}" 'BEGIN{printf "%.2f", a/c}')" x
fi
put ppbatch_db_ratio_pct "$put_db_ratio" %
put ppbatch_loadavg "$(cut -d' ' -f1 /proc/loadavg)" load
