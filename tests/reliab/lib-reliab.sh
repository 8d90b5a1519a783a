# tests/reliab/lib-reliab.sh — helpers of the reliability tests (t08xx),
# sourced after tests/lib.sh.
#
#   as_user_ready         when we are root, copies the commands of $PP_BIN
#                         to where nobody can run them (stage_for_others,
#                         tests/lib.sh); returns 1 with $OTHERS_WHY set when
#                         nobody cannot, for a skip that says why
#   as_user CMD...        runs CMD as nobody when we are root (so that file
#                         permissions apply), else as ourselves; the commands
#                         of $PP_BIN are those as_user_ready copied
#   sanitizer_clean FILE  true when FILE holds no ASan/UBSan/LSan report
#   db_integrity DB       prints SQLite's PRAGMA integrity_check ("ok")
#   dump_views DB [VIEW...]  prints every stable view, sorted, one CSV stream:
#                         the content a clean run and a re-run must share
#   dump_stored DB        the same for what a later run must never lose:
#                         ranks rows with status ok and their details
#   lost_rows OLD NEW     prints the lines of OLD missing from NEW
#   pp_unimplemented CMD ARGS...  true when CMD says "not implemented"
#   make_dataset DIR N [PPGEN-ARGS]  a trace tree, iterations 1 and 2, N ranks
#                         rounded up to pp 4 x dp (ppgen; without it, copies
#                         of real traces)
#   pp_has CMD WORD       true when `CMD --help` mentions WORD (an option)
RELIAB=$PP_ROOT/tests/reliab
FAST=${PP_FAST_BIN:-$PP_BIN}
# A sanitizer report must never be mistaken for "some inputs failed" (1).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}:exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}:exitcode=86"

as_user_ready() {
	[ "$(id -u)" = 0 ] || return 0
	[ -d "$T/others/bin" ] && return 0
	stage_for_others bin "$PP_BIN"/* || return 1
	if [ "${PP_VALGRIND:-0}" = 1 ]; then
		vg_wrappers "$T/others/bin" "$T/others/vg" && chmod 755 "$T/others/vg"
	fi
}

as_user() {
	local bin=$T/others/bin
	if [ "$(id -u)" != 0 ]; then
		"$@"
		return
	fi
	if ! as_user_ready; then
		echo "as_user: $OTHERS_WHY" >&2
		return 126
	fi
	[ "${PP_VALGRIND:-0}" = 1 ] && bin=$T/others/vg
	PATH="$bin:$PATH" setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"
}

sanitizer_clean() {
	! grep -qE 'ERROR: (Address|Leak|Memory|Thread)Sanitizer|runtime error:|SUMMARY: .*Sanitizer' "$1"
}

db_integrity() {
	sqlite3 "$1" 'PRAGMA integrity_check;' 2>&1
}

# Stable views (docs/contracts.md §3). Missing views (ppagg has not run)
# print nothing. Timing columns are not part of the views, so two runs on
# the same input must print the same text.
dump_views() {
	local db=$1 v views="ranks category_stats steps kernels pp_groups pipelines stragglers"
	shift
	[ $# -gt 0 ] && views="$*"
	for v in $views; do
		sqlite3 "$db" "SELECT name FROM sqlite_master WHERE name='$v'" 2>/dev/null |
			grep -q . || continue
		echo "== $v"
		sqlite3 -csv "$db" "SELECT * FROM $v" 2>&1 |
			LC_ALL=C sort
	done
}

dump_stored() {
	local db=$1
	[ -f "$db" ] || return 0
	# A run killed before its schema was committed leaves a database
	# without tables: nothing stored yet.
	[ "$(sqlite3 "$db" "SELECT count(*) FROM sqlite_master WHERE name = 'ranks'" 2>&1)" = 1 ] ||
		return 0
	sqlite3 -csv "$db" "SELECT * FROM ranks WHERE status = 'ok'" 2>&1 | LC_ALL=C sort
	dump_views "$db" category_stats steps kernels
}

lost_rows() {
	LC_ALL=C comm -23 <(LC_ALL=C sort "$1") <(LC_ALL=C sort "$2")
}

pp_unimplemented() {
	"$@" 2>&1 | grep -q 'not implemented'
}

make_dataset() {
	local dir=$1 n=$2 it f i
	shift 2
	if [ -x "$FAST/ppgen" ]; then
		"$FAST/ppgen" --out "$dir" --pp 4 --dp $(((n + 3) / 4)) --iterations 1,2 \
			--quiet "$@" >/dev/null 2>&1 && return 0
	fi
	for it in 1 2; do
		mkdir -p "$dir/iteration_$it"
		i=0
		for f in "$SHARED"/data/real/param/dlrm_kineto/worker*.json.gz \
			"$SHARED"/data/real/hta/trace_filter__sampled_rank-*.json.gz; do
			[ "$i" -lt "$n" ] || break
			cp "$f" "$dir/iteration_$it/rank_$(printf %04d "$i")_iter_$it.pt.trace.json.gz"
			i=$((i + 1))
		done
		# Neither ppgen nor the real traces: say so, never an empty tree.
		[ "$i" -gt 0 ] || { echo "make_dataset: no ppgen and no traces in $SHARED/data/real" >&2; return 1; }
	done
}

pp_has() {
	command -v "$1" >/dev/null 2>&1 && "$1" --help 2>&1 | grep -q -- "$2"
}
