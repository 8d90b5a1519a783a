#!/bin/bash
# Resource limits: under `ulimit -v` = 64 MiB + 10 % of the largest trace, a
# batch completes with exactly the unlimited result. Optimised build
# ($PP_FAST_BIN): sanitizers reserve terabytes of address space.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/reliab/lib-reliab.sh"

if pp_unimplemented ppbatch --input "$T/none"; then
	skip "ulimit -v" "ppbatch batch mode is not implemented yet"
	done_testing; exit
fi
if [ "${PP_VALGRIND:-0}" = 1 ]; then
	skip "ulimit -v" "valgrind cannot run under a small ulimit -v"
	done_testing; exit
fi
# Bigger traces than the other tests: 8 ranks with many kernels.
make_dataset "$T/base" 8 --layers 16 --kernels-per-layer 16 --microbatches 16
largest=$(find "$T/base" -name '*.json*' -printf '%s\n' | sort -n | tail -1)
limit_kb=$((64 * 1024 + largest / 1024 / 10))
echo "# largest trace $largest bytes; ulimit -v $limit_kb KiB"
"$FAST/ppbatch" --input "$T/base" --db "$T/clean.db" -j 2 --quiet 2>/dev/null
dump_views "$T/clean.db" >"$T/clean.txt"
for j in 1 2; do
	(ulimit -v "$limit_kb" && exec "$FAST/ppbatch" --input "$T/base" --db "$T/lim$j.db" -j $j --quiet) \
		2>"$T/err$j"
	is "-j $j under ulimit -v $limit_kb KiB exits 0" 0 $?
	[ -s "$T/err$j" ] && sed 's/^/# /' "$T/err$j" | head -5
	dump_views "$T/lim$j.db" >"$T/lim$j.txt"
	ok_if "-j $j under the limit: content equals the unlimited run" diff "$T/clean.txt" "$T/lim$j.txt"
done
# One 300 MB trace: the worker's big arrays grow in place (a copy would need
# old and new at once, more than 64 MiB + 10 % leaves).
"$FAST/ppgen" --out "$T/big" --pp 2 --microbatches 200 --layers 40 --kernels-per-layer 16 \
	--iterations 1 --ranks 0 --quiet
big=$(find "$T/big" -name '*.json' -printf '%s\n')
limit_kb=$((64 * 1024 + big / 1024 / 10))
echo "# one trace of $big bytes; ulimit -v $limit_kb KiB"
(ulimit -v "$limit_kb" && exec "$FAST/ppbatch" --input "$T/big" --db "$T/big.db" -j 1 --quiet) \
	2>"$T/errbig"
is "a 300 MB trace under ulimit -v $limit_kb KiB exits 0" 0 $?
is "... and is stored, not failed for memory" "ok|" \
	"$(sql "$T/big.db" "SELECT status, error FROM ranks")"
rm -rf "$T/big" "$T/big.db"*
done_testing
