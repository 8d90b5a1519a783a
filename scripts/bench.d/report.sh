#!/bin/bash
# The report at scale (docs/performance.md): ppgen trees of 1,024 ranks (tp 8 x pp 16 x
# dp 8, one iteration, ~1 GB) and 8,192 ranks (tp 8 x pp 16 x dp 64, ~9 GB),
# each made by ppgen, stored by ppbatch -j 2 and aggregated by ppagg with
# its default analyses and rendering: the whole path on one machine.
# Per size and step: wall and CPU seconds (CPU includes the children: the
# workers, gnuplot) and the peak RSS of the largest process; the database's
# bytes; the
# output's bytes (apparent, and on disk) and files, index.html and the iteration
# page, charts rendered and scripts written; at 1,024 ranks also headless
# Chromium opening index.html (wall time to the loaded DOM, images loaded).
# At 8,192 ranks, each example query of docs/database.md on that database
# (wall seconds, the slowest named). The load average is recorded beside
# each run: these are wall times on a shared machine. Appends "name value
# unit" lines to $BENCH_RESULTS.
#   REPORT_BENCH_8K=0   skip the 8,192-rank tree (9 GB, several minutes)
set -eu
: "${BENCH_WORK:?run through scripts/bench}" "${BENCH_RESULTS:?}"
bin=${PP_BIN:?}
W="$BENCH_WORK/report"
rm -rf "$W"
mkdir -p "$W"
put() { echo "$1 $2 $3" | tee -a "$BENCH_RESULTS"; }
load() { cut -d' ' -f1 /proc/loadavg; }
TIMEFORMAT='%R %U %S'

# timed NAME CMD...: wall and CPU (user + system, children included) and
# the peak RSS of the largest process of the command's tree (GNU time's %M).
timed() {
	local name=$1 real user sys rss
	shift
	put "${name}_load_before" "$(load)" ""
	/usr/bin/time -f '%e %U %S %M' -o "$W/$name.time" "$@" >"$W/$name.out" 2>"$W/$name.err"
	read -r real user sys rss <"$W/$name.time"
	put "${name}_wall" "$real" s
	put "${name}_cpu" "$(echo "$user $sys" | awk '{printf "%.2f", $1 + $2}')" s
	put "${name}_peak_rss" "$(awk -v k="$rss" 'BEGIN{printf "%.0f", k / 1024}')" MiB
}

# queries N DB: each example query of docs/database.md (the block t0523
# runs) on DB, timed alone: the slowest's wall seconds and its comment.
queries() {
	local n=$1 db=$2
	sed -n '/^## Example queries/,$p' docs/database.md | sed -n '/^```sh$/,/^```$/p' |
		sed '1d;$d' >"$W/queries.sh"
	python3 - "$W/queries.sh" "$db" "$n" <<'PY' | tee -a "$BENCH_RESULTS"
import re, subprocess, sys, time
text, db, n = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
# Each command starts at a line "sqlite3 ..." and runs to the next comment,
# blank line or sqlite3 line; the comment above names it.
cmds, what, prev = [], "", ""
for block in re.split(r"\n(?=sqlite3 |#)", text):
    if block.startswith("#") and not prev.startswith("#"):
        what = block.splitlines()[0][2:]
    prev = block
    if block.startswith("sqlite3 "):
        cmds.append((what, block.split(" > ")[0]))
worst = (0.0, "")
for what, cmd in cmds:
    cmd = cmd.replace("pptrace.db", db, 1)
    t = time.monotonic()
    subprocess.run(["bash", "-c", cmd], stdout=subprocess.DEVNULL, check=True)
    worst = max(worst, (time.monotonic() - t, what))
print(f"report_{n}_doc_queries {len(cmds)}")
print(f"report_{n}_doc_query_slowest_wall {worst[0]:.3f} s ({worst[1]})")
PY
}

one() {
	local n=$1 tree="$W/r$1"
	shift
	timed "report_${n}_ppgen" "$bin/ppgen" --out "$tree" "$@" --straggler 77:1.3 -q
	# As a first read from disk leaves it (docs/reader.md, "The page cache's state").
	find "$tree" -name '*.json' -exec scripts/bench-cache read {} + || return 1
	put "report_${n}_trace_bytes" "$(du -sb "$tree" | cut -f1)" B
	timed "report_${n}_ppbatch_j2" "$bin/ppbatch" --input "$tree" -j 2 --quiet
	timed "report_${n}_ppagg" "$bin/ppagg" --base-folder "$tree" -j 2
	put "report_${n}_database_bytes" "$(stat -c %s "$tree/pptrace.db")" B
	local out="$tree/pptrace"
	put "report_${n}_output_bytes" "$(du -sb "$out" | cut -f1)" B
	put "report_${n}_output_disk_bytes" "$(($(du -sk "$out" | cut -f1) * 1024))" B
	put "report_${n}_output_files" "$(find "$out" -type f | wc -l)" ""
	put "report_${n}_index_html_bytes" "$(stat -c %s "$out/index.html")" B
	put "report_${n}_iteration_html_bytes" "$(stat -c %s "$out/iteration_15.html")" B
	local err="$W/report_${n}_ppagg.err"
	put "report_${n}_scripts_written" \
		"$(sed -n 's/.*, \([0-9]*\) chart scripts written.*/\1/p' "$err")" ""
	put "report_${n}_charts_rendered" "$(sed -n 's/.*rendering: \([0-9]*\) charts.*/\1/p' "$err")" ""
	put "report_${n}_render_wall" "$(sed -n 's/.*rendered all charts in \([0-9.]*\) s.*/\1/p' "$err")" s
}

one 1024 --tp 8 --pp 16 --dp 8
if command -v chromium >/dev/null; then
	mkdir -p "$W/profile"
	{ time timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$W/profile" --dump-dom "file://$W/r1024/pptrace/index.html" \
		>"$W/dom.html" 2>/dev/null; } 2>"$W/chrome.time"
	read -r real _ <"$W/chrome.time"
	put report_1024_chromium_index_wall "$real" s
	put report_1024_chromium_index_images "$(grep -o 'data-images="[^"]*"' "$W/dom.html" | cut -d'"' -f2)" ""
fi
rm -rf "$W/r1024"
if [ "${REPORT_BENCH_8K:-1}" != 0 ]; then
	one 8192 --tp 8 --pp 16 --dp 64
	queries 8192 "$W/r8192/pptrace.db"
	rm -rf "$W/r8192"
fi
