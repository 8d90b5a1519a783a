#!/bin/bash
# scripts/bench-cache, which sets a benchmark input's page-cache state
# (docs/reader.md, "The page cache's state"): every mode keeps the file's
# bytes, `cold` leaves none of it cached, `read` and `written` all of it.
source "$PP_ROOT/tests/lib.sh"
BC="$PP_ROOT/scripts/bench-cache"

head -c 3145728 /dev/urandom >"$T/f"
cp "$T/f" "$T/orig"
# cached FILE: the bytes of FILE in the page cache, per fincore(1).
cached() { fincore --bytes --noheadings --output RES "$1" | tr -d ' '; }

for mode in written read cold; do
	ok_if "bench-cache $mode exits 0" "$BC" $mode "$T/f"
	case $mode in
	cold) want=0 ;;
	*) want=3145728 ;; # whole pages of 4, 16 or 64 KiB
	esac
	if ! command -v fincore >/dev/null; then
		skip "bench-cache $mode leaves $want bytes cached" "fincore (util-linux) is not installed"
	elif [ $mode = cold ] && [ "$(stat -f -c %T "$T")" = tmpfs ]; then
		skip "bench-cache cold drops the file from the page cache" "$T is on tmpfs, whose pages cannot be dropped"
	else
		is "bench-cache $mode leaves $want bytes cached" "$want" "$(cached "$T/f")"
	fi
	# (after the look at the cache: cmp reads the file into it)
	ok_if "bench-cache $mode keeps the file's bytes" cmp "$T/f" "$T/orig"
done
ok_if "bench-cache written leaves no temporary file" test ! -e "$T/f.bench-cache"

# written replaces the file by a copy, which keeps the file's mode (a
# private trace does not become readable by others); through a symlink,
# the target is rewritten and the link stays.
chmod 600 "$T/f"
ok_if "bench-cache written on a mode 600 file exits 0" "$BC" written "$T/f"
is "the file keeps its mode" 600 "$(stat -c %a "$T/f")"
ln -s f "$T/link"
ok_if "bench-cache written through a symlink exits 0" "$BC" written "$T/link"
ok_if "the symlink is still a symlink" test -L "$T/link"
ok_if "its target keeps its bytes" cmp "$T/f" "$T/orig"
# A copy that fails (here: files may not exceed 1 KiB) leaves the file as
# it was and no temporary file.
(ulimit -f 1 && "$BC" written "$T/f") 2>/dev/null
isnt_zero=$?
ok_if "a failed copy: exit status not 0" test "$isnt_zero" -ne 0
ok_if "a failed copy leaves no temporary file" test ! -e "$T/f.bench-cache"
ok_if "a failed copy keeps the file's bytes" cmp "$T/f" "$T/orig"

"$BC" read "$T/missing" 2>"$T/err"
is "a missing file: exit status 1" 1 $?
ok_if "a missing file: the error names it" grep -q "bench-cache: error: '$T/missing' is not a regular file" "$T/err"
"$BC" fast "$T/f" 2>"$T/err"
is "an unknown mode: exit status 2" 2 $?
ok_if "an unknown mode: the usage" grep -q '^usage: bench-cache read|written|cold FILE' "$T/err"
done_testing
