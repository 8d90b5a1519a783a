#!/bin/bash
# Two ppbatch runs on one database at once (same input, overlapping work):
# both finish, nothing is stored twice, the content equals a clean run.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/reliab/lib-reliab.sh"

if pp_unimplemented ppbatch --input "$T/none"; then
	skip "concurrent runs" "ppbatch batch mode is not implemented yet"
	done_testing; exit
fi
make_dataset "$T/base" 8
ppbatch --input "$T/base" --db "$T/clean.db" -j 2 --quiet 2>/dev/null
dump_views "$T/clean.db" >"$T/clean.txt"
for round in 1 2; do
	db=$T/run$round.db
	extra=
	[ "$round" = 2 ] && extra=--force
	ppbatch --input "$T/base" --db "$db" -j 2 --quiet 2>"$T/a.err" &
	a=$!
	ppbatch --input "$T/base" --db "$db" -j 2 --quiet $extra 2>"$T/b.err" &
	b=$!
	wait $a; ra=$?
	wait $b; rb=$?
	is "round $round: both runs exit 0" "0 0" "$ra $rb"
	ok_if "round $round: no sanitizer report" sanitizer_clean "$T/a.err"
	ok_if "round $round: no sanitizer report (second)" sanitizer_clean "$T/b.err"
	is "round $round: integrity_check" ok "$(db_integrity "$db")"
	dump_views "$db" >"$T/got.txt"
	ok_if "round $round: content equals the clean run" diff "$T/clean.txt" "$T/got.txt"
done
done_testing
