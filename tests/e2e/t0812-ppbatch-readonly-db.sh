#!/bin/bash
# A read-only database folder: a read-only mount (root) and a folder without
# write permission (as nobody). ppbatch fails with a specific error or
# succeeds, the stored content is unchanged, and with write access back a
# re-run gives the clean result.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/reliab/lib-reliab.sh"

if pp_unimplemented ppbatch --input "$T/none"; then
	skip "read-only database" "ppbatch batch mode is not implemented yet"
	done_testing; exit
fi
chmod 755 "$T"
make_dataset "$T/base" 4
chmod -R a+rX "$T/base"
ppbatch --input "$T/base" --db "$T/clean.db" -j 2 --quiet 2>/dev/null
dump_views "$T/clean.db" >"$T/clean.txt"

# 1. Read-only mount.
mnt=$T/mnt
mkdir -p "$mnt"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=64m tmpfs "$mnt" 2>/dev/null; then
	trap 'umount -l "$mnt" 2>/dev/null; rm -rf "$T"' EXIT
	db=$mnt/pp.db
	ppbatch --input "$T/base" --folders iteration_1 --db "$db" -j 2 --quiet 2>/dev/null
	dump_views "$db" >"$T/before.txt"
	mount -o remount,ro "$mnt"
	ppbatch --input "$T/base" --db "$db" -j 2 --quiet 2>"$T/err"
	rc=$?
	ok_if "read-only mount: exit 3 (got $rc)" test "$rc" = 3
	ok_if "read-only mount: the error names the database" grep -qF "$db" "$T/err"
	ok_if "read-only mount: no sanitizer report" sanitizer_clean "$T/err"
	mount -o remount,rw "$mnt"
	dump_views "$db" >"$T/after.txt"
	ok_if "read-only mount: content unchanged" diff "$T/before.txt" "$T/after.txt"
	is "read-only mount: integrity_check" ok "$(db_integrity "$db")"
	ppbatch --input "$T/base" --db "$db" -j 2 --quiet 2>/dev/null
	is "read-only mount: re-run with write access exits 0" 0 $?
	dump_views "$db" >"$T/rerun.txt"
	ok_if "read-only mount: re-run equals the clean run" diff "$T/clean.txt" "$T/rerun.txt"
else
	skip "read-only mount" "needs root to mount a tmpfs"
fi

# 2. A folder without write permission, as a user that does not own it.
# Every command on this database runs as that user: a root sqlite3 would
# create root-owned pp.db-wal/-shm files there whenever it is not the last
# connection to close, and the owner's next run could not open them. The
# runs' stderr is kept, so that a failure says why. That user gets
# dump_views as text (declare -f): tests/ may be out of its reach.
if ! as_user_ready; then
	skip "mode 555 folder, as user nobody" "$OTHERS_WHY"
	done_testing
	exit
fi
d=$T/rodir
mkdir -p "$d"
[ "$(id -u)" = 0 ] && chown 65534:65534 "$d"
as_user ppbatch --input "$T/base" --folders iteration_1 --db "$d/pp.db" -j 2 --quiet 2>"$T/err1"
rc=$?
echo "# folder mode 755: exit $rc: $(head -c 300 "$T/err1" | tr '\n' ' ')"
is "mode 555 folder: the first run (mode 755) exits 0" 0 "$rc"
as_user bash -c "$(declare -f dump_views); dump_views '$d/pp.db'" >"$T/before2.txt"
ok_if "mode 555 folder: the first run stored ranks" \
	awk '/^== ranks/ { r = 1; next } /^==/ { r = 0 } r { n++ } END { exit !n }' "$T/before2.txt"
chmod 555 "$d"
as_user ppbatch --input "$T/base" --db "$d/pp.db" -j 2 --quiet 2>"$T/err2"
rc=$?
echo "# folder mode 555: exit $rc: $(head -c 300 "$T/err2" | tr '\n' ' ')"
chmod 755 "$d"
as_user bash -c "$(declare -f dump_views); dump_views '$d/pp.db'" >"$T/after2.txt"
if [ "$rc" = 0 ]; then
	ok_if "mode 555 folder: the run worked and equals the clean run" diff "$T/clean.txt" "$T/after2.txt"
else
	ok_if "mode 555 folder: exit 3 with the database named (got $rc)" \
		sh -c "test $rc = 3 && grep -qF '$d/pp.db' '$T/err2'"
	ok_if "mode 555 folder: content unchanged" diff "$T/before2.txt" "$T/after2.txt"
fi
ok_if "mode 555 folder: no sanitizer report" sanitizer_clean "$T/err2"
is "mode 555 folder: integrity_check" ok "$(as_user sqlite3 "$d/pp.db" 'PRAGMA integrity_check;' 2>&1)"
is "mode 555 folder: no file of another user in the folder" "" "$(find "$d" ! -user 65534 2>&1)"
as_user ppbatch --input "$T/base" --db "$d/pp.db" -j 2 --quiet 2>"$T/err3"
rc=$?
echo "# mode 755 again: exit $rc: $(head -c 300 "$T/err3" | tr '\n' ' ')"
is "mode 555 folder: re-run with write access exits 0" 0 "$rc"
as_user bash -c "$(declare -f dump_views); dump_views '$d/pp.db'" >"$T/rerun2.txt"
ok_if "mode 555 folder: re-run equals the clean run" diff "$T/clean.txt" "$T/rerun2.txt"
done_testing
