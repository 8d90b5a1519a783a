#!/bin/bash
# ppagg while ppbatch is writing the same database: every ppagg run ends
# (exit 0 or 1, never "database is locked" as a crash), ppbatch is not
# disturbed, and afterwards ppbatch + ppagg give exactly the clean result.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/reliab/lib-reliab.sh"

if pp_unimplemented ppbatch --input "$T/none" || ! command -v ppagg >/dev/null; then
	skip "ppagg during ppbatch" "ppbatch or ppagg is not implemented yet"
	done_testing; exit
fi
make_dataset "$T/base" 16
ppbatch --input "$T/base" --db "$T/clean.db" -j 2 --quiet 2>/dev/null
ppagg --base-folder "$T/base" --db "$T/clean.db" --out "$T/clean-out" --no-render --quiet 2>/dev/null
dump_views "$T/clean.db" >"$T/clean.txt"

db=$T/run.db
ppbatch --input "$T/base" --folders iteration_1 --db "$db" -j 2 --quiet 2>/dev/null
ppbatch --input "$T/base" --db "$db" -j 2 --quiet 2>"$T/batch.err" &
pid=$!
runs=0 bad=
while kill -0 "$pid" 2>/dev/null || [ "$runs" = 0 ]; do
	ppagg --base-folder "$T/base" --db "$db" --out "$T/out" --no-render --quiet 2>"$T/agg.err"
	rc=$?
	runs=$((runs + 1))
	if [ "$rc" -gt 1 ] || ! sanitizer_clean "$T/agg.err"; then
		bad="$bad [run $runs: exit $rc: $(head -c 200 "$T/agg.err")]"
	fi
done
wait "$pid"
is "ppbatch exits 0 while ppagg reads and writes" 0 $?
echo "# $runs ppagg runs during the batch"
is "every ppagg run during the batch ends normally" "" "$bad"
ok_if "no sanitizer report from ppbatch" sanitizer_clean "$T/batch.err"
is "integrity_check" ok "$(db_integrity "$db")"
ppagg --base-folder "$T/base" --db "$db" --out "$T/out" --no-render --quiet 2>/dev/null
is "ppagg after the batch exits 0" 0 $?
dump_views "$db" >"$T/got.txt"
ok_if "content equals the clean run (ppbatch + ppagg)" diff "$T/clean.txt" "$T/got.txt"
done_testing
