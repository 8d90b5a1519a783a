#!/bin/bash
# The trace reader: `ppbatch --inspect` throughput on a ~1 GB ppgen trace
# from page cache, as a first read from disk leaves it (median of 5, wall
# and CPU; BENCH_ROUNDS); also the reader alone (--no-classify, at the SIMD
# level chosen at run time and at each other level this CPU runs, and on the
# trace as a program writing 8 KiB at a time leaves it cached) and the whole
# classifier (--full), peak RSS, gzip input
# (ISA-L, the default, and zlib) against `igzip -dc` and `zcat`, and in the
# same run `cat`, a YAJL event counter and Python's json.load on the same
# file. Appends "name value unit" lines to $BENCH_RESULTS and prints a
# summary. Measures; never asserts.
#   READER_BENCH_GB=1     size of the generated trace (approximate)
#   READER_BENCH_PYTHON=1 also time Python's json.load (0 to skip: ~1 min/GB
#                          and ~5x the file in RAM)
set -u
cd "$(dirname "$0")/../.."
: "${BENCH_RESULTS:=/dev/null}" "${BENCH_WORK:=bench/work}"
PP_BIN=${PP_BIN:-$PWD/build/bin}
GB=${READER_BENCH_GB:-1}
PY=${READER_BENCH_PYTHON:-1}
PPTRACE_EXTRA_PKGS="time libyajl-dev isal" scripts/install-deps --test || exit 1
[ -x "$PP_BIN/ppbatch" ] && [ -x "$PP_BIN/ppgen" ] || { echo "reader: build first (make)" >&2; exit 1; }

work="$BENCH_WORK/reader"
mkdir -p "$work"
# ~947 MB per 100 kernels-per-layer at 64 micro-batches x 64 layers.
kpl=$(awk -v g="$GB" 'BEGIN { k = int(g * 1e9 / 947.2e6 * 100 + 0.5); print (k < 1 ? 1 : k) }')
trace="$work/gen-$kpl/iteration_15/rank_0000_iter_15.pt.trace.json"
if [ ! -s "$trace" ]; then
	rm -rf "$work/gen-$kpl"
	"$PP_BIN/ppgen" --quiet --out "$work/gen-$kpl" --tp 1 --pp 1 --dp 1 --microbatches 64 \
		--layers 64 --kernels-per-layer "$kpl" || exit 1
fi
[ -s "$trace.gz" ] || gzip -6 -c "$trace" >"$trace.gz" || exit 1
bytes=$(stat -c %s "$trace")
gzbytes=$(stat -c %s "$trace.gz")
yajl="$work/yajl_count"
[ "$yajl" -nt tests/bench/yajl_count.c ] ||
	${CC:-cc} -O2 -o "$yajl" tests/bench/yajl_count.c -lyajl || exit 1

# run_timed OUT CMD...: one run under GNU time; OUT gets "wall cpu maxrss_kb".
run_timed() {
	local out=$1; shift
	/usr/bin/time -f '%e %U %S %M' -o "$out.t" "$@" >/dev/null 2>"$out.err"
	local rc=$?
	awk '{ printf "%s %.3f %s\n", $1, $2 + $3, $4 }' "$out.t" >"$out"
	return $rc
}
# median_runs CMD...: BENCH_ROUNDS runs (default 5); prints "wall_median cpu_median max_rss_kb".
median_runs() {
	local i n=${BENCH_ROUNDS:-5} runs=()
	[[ $n =~ ^[1-9][0-9]*$ ]] || {
		echo "reader.sh: error: BENCH_ROUNDS '$n' is not a number of runs (1 or more)" >&2
		return 1
	}
	for ((i = 1; i <= n; i++)); do
		run_timed "$work/run.$i" "$@" || { cat "$work/run.$i.err" >&2; return 1; }
		runs+=("$work/run.$i")
	done
	local mid=$(((n + 1) / 2))
	echo "$(cut -d' ' -f1 "${runs[@]}" | sort -g | sed -n ${mid}p)" \
		"$(cut -d' ' -f2 "${runs[@]}" | sort -g | sed -n ${mid}p)" \
		"$(cut -d' ' -f3 "${runs[@]}" | sort -g | tail -n 1)"
}
gbps() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.3f", (s > 0 ? b / s / 1e9 : 0) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
# rates NAME WALL CPU RSS_KB: the three result lines of one --inspect mode.
rates() {
	echo "$1_gbps $(gbps "$bytes" "$2") GB/s"
	echo "$1_cpu_gbps $(gbps "$bytes" "$3") GB/s"
	echo "$1_peak_rss $(($4 / 1024)) MiB"
}
# mode_line LABEL WALL CPU RSS_KB: its summary line.
mode_line() {
	printf '  %-24s %6.2f s wall  %6.2f s cpu  %s GB/s (cpu %s GB/s)  peak RSS %d MiB\n' \
		"$1" "$2" "$3" "$(gbps "$bytes" "$2")" "$(gbps "$bytes" "$3")" $(($4 / 1024))
}

# Page cache warm, as a first read from disk leaves it (scripts/bench-cache:
# the state changes the reader's system time), and no writeback of earlier
# benchmarks' files (ppgen writes 1 GB just before) competing with the
# measurements.
sync
scripts/bench-cache read "$trace" "$trace.gz" || exit 1
# --inspect as users run it (reader + the classifier's survey), the reader
# alone (--no-classify), and the whole classifier (--full).
read -r w_plain c_plain rss_plain < <(median_runs "$PP_BIN/ppbatch" --inspect "$trace") || exit 1
read -r w_gz c_gz rss_gz < <(median_runs "$PP_BIN/ppbatch" --inspect "$trace.gz") || exit 1
read -r w_ro c_ro rss_ro < <(median_runs "$PP_BIN/ppbatch" --inspect --no-classify "$trace") || exit 1
read -r w_cl c_cl rss_cl < <(median_runs "$PP_BIN/ppbatch" --inspect --full "$trace") || exit 1
# The reader alone at every SIMD level this CPU runs (PP_SIMD forces one).
simd=$("$PP_BIN/ppbatch" --inspect --no-classify --json "$trace" | sed -n 's/.*"simd":"\([a-z0-9]*\)".*/\1/p')
levels=()
for lv in avx512 avx2 sse2 neon scalar; do
	got=$(PP_SIMD=$lv "$PP_BIN/ppbatch" --inspect --no-classify --json "$trace" |
		sed -n 's/.*"simd":"\([a-z0-9]*\)".*/\1/p')
	[ "$got" = "$lv" ] || continue
	read -r w c _ < <(median_runs env PP_SIMD=$lv "$PP_BIN/ppbatch" --inspect --no-classify "$trace") || exit 1
	levels+=("$lv $w $c")
done
read -r w_gzro c_gzro rss_gzro < <(median_runs "$PP_BIN/ppbatch" --inspect --no-classify "$trace.gz") || exit 1
read -r w_gzzl c_gzzl _ < <(median_runs env PP_GUNZIP=zlib "$PP_BIN/ppbatch" --inspect --no-classify "$trace.gz") || exit 1
read -r w_zcat c_zcat _ < <(median_runs zcat "$trace.gz") || exit 1
read -r w_igz c_igz _ < <(median_runs igzip -dc "$trace.gz") || exit 1
read -r w_cat c_cat _ < <(median_runs cat "$trace") || exit 1
read -r w_yajl c_yajl rss_yajl < <(median_runs "$yajl" "$trace") || exit 1
events=$("$PP_BIN/ppbatch" --inspect --json "$trace" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
yevents=$("$yajl" "$trace")
w_py=0 c_py=0 rss_py=0
if [ "$PY" = 1 ]; then
	run_timed "$work/py" python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); print(len(d["traceEvents"]))' "$trace" &&
		read -r w_py c_py rss_py <"$work/py"
fi

# The reader alone on the trace as a program writing 8 KiB at a time leaves
# it in the page cache (small folios: more system time). Not timed: a read
# from this virtual machine's disk, which varies with the host (0.54-3.0 s
# for the same run; docs/reader.md, "The page cache's state").
scripts/bench-cache written "$trace" || exit 1
read -r w_wr c_wr _ < <(median_runs "$PP_BIN/ppbatch" --inspect --no-classify "$trace") || exit 1

load=$(cut -d' ' -f1 /proc/loadavg)
{
	echo "reader_trace_bytes $bytes bytes"
	rates reader_inspect "$w_plain" "$c_plain" "$rss_plain"
	rates reader_only "$w_ro" "$c_ro" "$rss_ro"
	rates reader_inspect_full "$w_cl" "$c_cl" "$rss_cl"
	echo "reader_only_written_gbps $(gbps "$bytes" "$w_wr") GB/s"
	echo "reader_only_written_cpu_gbps $(gbps "$bytes" "$c_wr") GB/s"
	echo "reader_simd $simd level"
	for l in "${levels[@]}"; do
		read -r lv w c <<<"$l"
		echo "reader_only_${lv}_gbps $(gbps "$bytes" "$w") GB/s"
		echo "reader_only_${lv}_cpu_gbps $(gbps "$bytes" "$c") GB/s"
	done
	echo "reader_gzip_inspect_s $w_gz s"
	echo "reader_gzip_only_s $w_gzro s"
	echo "reader_gzip_only_gbps $(gbps "$bytes" "$w_gzro") GB/s"
	echo "reader_gzip_only_zlib_s $w_gzzl s"
	echo "reader_igzip_s $w_igz s"
	echo "reader_igzip_gbps $(gbps "$bytes" "$w_igz") GB/s"
	echo "reader_gzip_vs_plain_plus_igzip $(awk -v g="$w_gzro" -v p="$w_ro" -v i="$w_igz" 'BEGIN { printf "%.2f", (p + i > 0 ? g / (p + i) : 0) }') x"
	echo "reader_gzip_cpu_vs_plain_plus_igzip $(awk -v g="$c_gzro" -v p="$c_ro" -v i="$c_igz" 'BEGIN { printf "%.2f", (p + i > 0 ? g / (p + i) : 0) }') x"
	echo "reader_cat_gbps $(gbps "$bytes" "$w_cat") GB/s"
	echo "reader_zcat_s $w_zcat s"
	echo "reader_gzip_vs_zcat $(ratio "$w_gz" "$w_zcat") x"
	echo "reader_gzip_cpu_vs_zcat $(ratio "$c_gz" "$c_zcat") x"
	echo "reader_gzip_peak_rss $((rss_gz / 1024)) MiB"
	echo "reader_yajl_gbps $(gbps "$bytes" "$w_yajl") GB/s"
	echo "reader_vs_yajl $(ratio "$w_yajl" "$w_plain") x"
	echo "reader_vs_yajl_cpu $(ratio "$c_yajl" "$c_plain") x"
	if [ "$PY" = 1 ]; then
		echo "reader_python_gbps $(gbps "$bytes" "$w_py") GB/s"
		echo "reader_python_peak_rss $((rss_py / 1024)) MiB"
		echo "reader_vs_python $(ratio "$w_py" "$w_plain") x"
		echo "reader_vs_python_cpu $(ratio "$c_py" "$c_plain") x"
	fi
	echo "reader_load_average $load load"
} | tee -a "$BENCH_RESULTS" >"$work/summary"

echo "reader: $(awk -v b="$bytes" 'BEGIN { printf "%.2f GB", b / 1e9 }') ppgen trace, $events events (YAJL counts $yevents), load average $load"
mode_line '--inspect' "$w_plain" "$c_plain" "$rss_plain"
mode_line '--inspect --no-classify' "$w_ro" "$c_ro" "$rss_ro"
mode_line '--inspect --full' "$w_cl" "$c_cl" "$rss_cl"
printf '  --no-classify, %-9s %6.2f s wall  %6.2f s cpu  %s GB/s (cpu %s GB/s)\n' \
	'written' "$w_wr" "$c_wr" "$(gbps "$bytes" "$w_wr")" "$(gbps "$bytes" "$c_wr")"
for l in "${levels[@]}"; do
	read -r lv w c <<<"$l"
	printf '  --no-classify, %-9s %6.2f s wall  %6.2f s cpu  %s GB/s (cpu %s GB/s)%s\n' "$lv" "$w" "$c" \
		"$(gbps "$bytes" "$w")" "$(gbps "$bytes" "$c")" "$([ "$lv" = "$simd" ] && echo '  (chosen)')"
done
printf '  --inspect gzip           %6.2f s wall  %6.2f s cpu  (%s MB gz)  peak RSS %d MiB\n' \
	"$w_gz" "$c_gz" $((gzbytes / 1000000)) $((rss_gz / 1024))
printf '  --no-classify gzip       %6.2f s wall  %6.2f s cpu  ISA-L; zlib %.2f s wall\n' "$w_gzro" "$c_gzro" "$w_gzzl"
printf '  igzip -dc >/dev/null     %6.2f s wall  %6.2f s cpu  -> gzip --no-classify / (plain --no-classify + igzip) = %s x\n' \
	"$w_igz" "$c_igz" "$(awk -v g="$w_gzro" -v p="$w_ro" -v i="$w_igz" 'BEGIN { printf "%.2f", g / (p + i) }')"
printf '  cat >/dev/null           %6.2f s wall  %6.2f s cpu  %s GB/s\n' "$w_cat" "$c_cat" "$(gbps "$bytes" "$w_cat")"
printf '  zcat >/dev/null          %6.2f s wall  %6.2f s cpu  -> gzip --inspect / zcat = %s x wall, %s x cpu\n' \
	"$w_zcat" "$c_zcat" "$(ratio "$w_gz" "$w_zcat")" "$(ratio "$c_gz" "$c_zcat")"
printf '  YAJL event count         %6.2f s wall  %6.2f s cpu  %s GB/s  -> --inspect is %s x faster\n' \
	"$w_yajl" "$c_yajl" "$(gbps "$bytes" "$w_yajl")" "$(ratio "$w_yajl" "$w_plain")"
[ "$PY" = 1 ] &&
	printf '  Python json.load         %6.2f s wall  %6.2f s cpu  %s GB/s  peak RSS %d MiB  -> --inspect is %s x faster\n' \
		"$w_py" "$c_py" "$(gbps "$bytes" "$w_py")" $((rss_py / 1024)) "$(ratio "$w_py" "$w_plain")"
echo "  (wall times on a shared machine; cpu = user + sys)"
exit 0
