#!/bin/bash
# Every example query of docs/database.md ("Example queries"), and those
# of README.md's views section, runs, as
# written, on a database ppbatch and ppagg made (ppgen, iteration 15, a
# straggler so that the what-if views hold rows): no SQL error, and each
# query answers. The op-trace export there prints Kineto ops' epoch start
# times exactly, not as `start_ns / 1e9`: SQLite prints 15 significant
# digits, 1707261432.00008 for ...432000081260 ns, 10 us off.
source "$PP_ROOT/tests/lib.sh"
"$PP_FAST_BIN/ppgen" --out j --pp 2 --dp 2 --straggler 1:1.5 --layers 1 \
	--kernels-per-layer 2 -q && "$PP_FAST_BIN/ppbatch" --input j -q &&
	ppagg --base-folder j --no-render -q
is "generated, stored and aggregated" 0 $?
# run_block NAME MIN WHAT: runs NAME.sh (a docs block) in the database's
# folder; at least MIN sqlite3 commands, exit 0, nothing on stderr.
run_block() {
	local n
	n=$(grep -c '^sqlite3 ' "$1.sh")
	ok_if "$3 holds example queries ($n)" test "$n" -ge "$2"
	(cd j && bash -e "../$1.sh") >"$1.out" 2>"$1.err"
	is "$3: every query runs: exit 0" 0 $?
	is "... no message on stderr" "" "$(cat "$1.err")"
}
# The block after "## Example queries", without its fences.
sed -n '/^## Example queries/,$p' "$PP_ROOT/docs/database.md" |
	sed -n '/^```sh$/,/^```$/p' | sed '1d;$d' >queries.sh
run_block queries 10 "docs/database.md"
ok_if "... the what-if query names the straggler's worker" grep -q '^1 *1 *0 ' queries.out
awk '/^# Which stage waits most\?/{p=1} p&&/^```$/{exit} p' "$PP_ROOT/README.md" >readme.sh
run_block readme 4 "README's views section"
ok_if "... the workers query gives slow_rank" grep -q 'rank *dp_rank *stage *s_w *slow_rank' readme.out
first=$(sed -n 2p j/trace.csv)
want=$(sql j/pptrace.db "SELECT dp_rank, stage, rank, iteration, optype, start_ns, end_ns - start_ns
	FROM ops LIMIT 1")
IFS='|' read -r dp st rk it op s d <<<"$want"
is "the op-trace export: seconds exact to the nanosecond" \
	"$dp,$st,$rk,$it,$op,$((s / 1000000000)).$(printf %09d $((s % 1000000000))),0.$(printf %09d "$d")" \
	"$(echo "$first" | cut -d, -f1-7)"
done_testing
