#!/bin/bash
# A disk that fills up mid-run (a small tmpfs holds the database): ppbatch
# stops with a specific error, the database stays intact, what was stored
# before is kept, and once there is room a re-run gives the clean result.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/reliab/lib-reliab.sh"

if pp_unimplemented ppbatch --input "$T/none"; then
	skip "disk full" "ppbatch batch mode is not implemented yet"
	done_testing; exit
fi
mnt=$T/mnt
mkdir -p "$mnt"
if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=64m tmpfs "$mnt" 2>/dev/null; then
	skip "disk full" "needs root to mount a tmpfs"
	done_testing; exit
fi
trap 'umount -l "$mnt" 2>/dev/null; rm -rf "$T"' EXIT
make_dataset "$T/base" 8
ppbatch --input "$T/base" --db "$T/clean.db" -j 2 --quiet 2>/dev/null
dump_views "$T/clean.db" >"$T/clean.txt"

db=$mnt/pp.db
ppbatch --input "$T/base" --folders iteration_1 --db "$db" -j 2 --quiet 2>"$T/err1"
is "first run (iteration_1) on the tmpfs exits 0" 0 $?
dump_stored "$db" >"$T/before.txt"
# Fill the disk, then leave 32 KiB: the next run runs out of space mid-way.
dd if=/dev/zero of="$mnt/filler" bs=64k 2>/dev/null
size=$(stat -c %s "$mnt/filler")
truncate -s $((size - 32768)) "$mnt/filler"
ppbatch --input "$T/base" --db "$db" -j 2 --quiet 2>"$T/err2"
rc=$?
ok_if "run on a full disk fails with exit 1 or 3 (got $rc)" test "$rc" = 1 -o "$rc" = 3
ok_if "the error says the disk is full" grep -qiE 'full|no space' "$T/err2"
ok_if "no sanitizer report" sanitizer_clean "$T/err2"
is "integrity_check ok on the full disk" ok "$(db_integrity "$db")"
dump_stored "$db" >"$T/after.txt"
is "nothing stored before is lost" "" "$(lost_rows "$T/before.txt" "$T/after.txt" | head -5)"
rm -f "$mnt/filler"
ppbatch --input "$T/base" --db "$db" -j 2 --quiet 2>"$T/err3"
is "re-run with room exits 0" 0 $?
dump_views "$db" >"$T/rerun.txt"
ok_if "re-run content equals the clean run" diff "$T/clean.txt" "$T/rerun.txt"
done_testing
