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
#   pp_job_key NAME        a job name made a file name: each character but
#                          letters, digits, '.', '_' and '-' (and a leading
#                          '.') becomes '_'; exit 1 when NAME is empty
#   pp_baseline HIST KEY DB PIN
#                          the baseline of database DB, the previous run of
#                          job KEY (docs/cluster.md "Comparing each run with
#                          the previous one"): the path in file PIN when it
#                          holds one, else the database recorded in
#                          HIST/KEY.last when it exists and is not DB (then
#                          written to PIN, so that later folders of the same
#                          run compare with the same baseline); exit 1 when
#                          there is none, a reason on stdout
#   pp_record_run HIST KEY DB
#                          record DB as the last run of job KEY (atomic)
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

pp_job_key() {
	[ -n "$1" ] || return 1
	printf '%s' "$1" | head -c 200 | tr -c 'A-Za-z0-9._-' '_' | sed 's/^\./_/'
	printf '\n'
}

pp_baseline() {
	local hist=$1 key=$2 db=$3 pin=$4 prev=""
	if [ -s "$pin" ]; then
		prev=$(head -n 1 "$pin")
		[ -f "$prev" ] && { printf '%s\n' "$prev"; return 0; }
		printf 'its baseline %s is gone\n' "$prev"
		return 1
	fi
	[ -s "$hist/$key.last" ] || { printf 'no earlier run of %s recorded in %s\n' "$key" "$hist"; return 1; }
	prev=$(head -n 1 "$hist/$key.last")
	if [ ! -f "$prev" ]; then
		printf 'the earlier run of %s, %s, is gone\n' "$key" "$prev"
		return 1
	fi
	if [ "$(readlink -f -- "$prev")" = "$(readlink -f -- "$db")" ]; then
		printf 'the earlier run of %s wrote this same database (give each run its own folder)\n' "$key"
		return 1
	fi
	printf '%s\n' "$prev" >"$pin.tmp" 2>/dev/null && mv -f "$pin.tmp" "$pin"
	printf '%s\n' "$prev"
}

pp_record_run() {
	local hist=$1 key=$2 db
	db=$(readlink -f -- "$3") || return 1
	mkdir -p "$hist" 2>/dev/null || return 1
	printf '%s\n' "$db" >"$hist/$key.last.$$" && mv -f "$hist/$key.last.$$" "$hist/$key.last"
}
