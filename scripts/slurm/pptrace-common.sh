# pptrace-common.sh — shell helpers shared by pptrace-submit, the array and
# merge job scripts, pptrace-epilog and pptrace-cron. Sourced, never run.
#
#   pp_log MSG...          one log line on stderr (or $PP_LOG_FILE when set):
#                          "2026-01-02T03:04:05Z prog[pid]: MSG"
#   pp_err MSG...          the same with "error: ", returns 1
#   pp_find_cmd NAME       absolute path of a pptrace command: $PPTRACE_<NAME>
#                          (e.g. PPTRACE_PPBATCH), then PATH, then beside the
#                          calling script, then the source tree's build/bin
#   pp_ini_get FILE SECTION KEY
#                          value of KEY in [SECTION] of an INI file (last one
#                          wins, ; and # comments, surrounding blanks removed);
#                          exit 1 when absent
#   pp_ini_section FILE SECTION
#                          every "key=value" of [SECTION], one per line
#   pp_is_uint S           S is a decimal integer without sign
#   pp_shard_db WORK I K   path of shard I of K in WORK
#   pp_work_dir DB         the work folder for database DB: DIR/.NAME.slurm
# Scripts set PP_PROG (message prefix) and PP_HERE (their own folder) first.

pp_log() {
	local line
	line="$(date -u +%Y-%m-%dT%H:%M:%SZ) ${PP_PROG:-pptrace}[$$]: $*"
	if [ -n "${PP_LOG_FILE:-}" ]; then
		printf '%s\n' "$line" >>"$PP_LOG_FILE" 2>/dev/null || printf '%s\n' "$line" >&2
	else
		printf '%s\n' "$line" >&2
	fi
}

pp_err() {
	pp_log "error: $*"
	return 1
}

pp_find_cmd() {
	local name=$1 var p
	var="PPTRACE_$(printf '%s' "$name" | tr '[:lower:]-' '[:upper:]_')"
	p=${!var:-}
	if [ -n "$p" ]; then
		[ -x "$p" ] && { printf '%s\n' "$p"; return 0; }
		return 1
	fi
	p=$(command -v "$name" 2>/dev/null) && [ -x "$p" ] && case $p in /*) printf '%s\n' "$p"; return 0 ;; esac
	for p in "$PP_HERE/$name" "$PP_HERE/../bin/$name" "$PP_HERE/../../build/bin/$name"; do
		if [ -x "$p" ] && [ -f "$p" ]; then
			readlink -f -- "$p"
			return 0
		fi
	done
	return 1
}

pp_ini_section() {
	pp_ini_get "$1" "$2" ""
}

pp_ini_get() {
	[ -r "$1" ] || return 1
	awk -v sec="$2" -v key="$3" '
		function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t\r]+$/, "", s); return s }
		/^[ \t]*[;#]/ { next }
		/^[ \t]*\[/ { s = $0; gsub(/^[ \t]*\[|\][ \t\r]*$/, "", s); cur = trim(s); next }
		cur == sec {
			i = index($0, "="); if (i == 0) next
			k = trim(substr($0, 1, i - 1))
			v = trim(substr($0, i + 1)); sub(/[ \t]+[;#].*$/, "", v)
			if (key == "") { print k "=" v; found = 1; next }
			if (k != key) next
			val = v; found = 1
		}
		END { if (!found) exit 1; if (key != "") print val }' "$1"
}

pp_is_uint() {
	case $1 in '' | *[!0-9]*) return 1 ;; esac
	return 0
}

pp_shard_db() {
	printf '%s/shard_%05d-of-%05d.db\n' "$1" "$2" "$3"
}

pp_work_dir() {
	local dir base
	dir=$(dirname -- "$1")
	base=$(basename -- "$1")
	printf '%s/.%s.slurm\n' "$dir" "$base"
}
