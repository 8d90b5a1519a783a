#!/bin/bash
# Process groups from the trace header (docs/classification.md "Process
# groups"): the real 2-rank trace whose header lists its groups
# (hta/nccl_parser_config), rewritten so that its kernels carry only
# "Process Group Name", gets the same pgroups and kernels' groups as the
# original; a group whose args say something else keeps what they say, and
# groups that become equal are stored once. --inspect counts the groups.
source "$PP_ROOT/tests/lib.sh"
PG=$SHARED/data/real/hta/nccl_parser_config__nccl_data.json.gz
[ -f "$PG" ] || { skip "real trace" "no file $PG (set PP_SHARED)"; done_testing; exit; }

# strip SRC DST [MODE]: the kernels' "Process Group Description" and
# "Process Group Ranks" deleted from every event (MODE half: from every
# other one only; MODE other: the first kernel's description says "mine"
# instead).
strip() {
	python3 - "$@" <<'PY'
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
mode = sys.argv[3] if len(sys.argv) > 3 else "all"
n, mine = 0, mode == "other"
for e in d["traceEvents"]:
    a = e.get("args", {})
    if "Process Group Name" not in a:
        continue
    n += 1
    if mine and e.get("cat") == "kernel":
        a["Process Group Description"] = "mine"
        mine = False
        continue
    if mode == "half" and n % 2:
        continue
    a.pop("Process Group Description", None)
    a.pop("Process Group Ranks", None)
json.dump(d, open(sys.argv[2], "w"))
PY
}
mkdir -p orig/iteration_1 names/iteration_1 half/iteration_1 other/iteration_1
ln -s "$PG" orig/iteration_1/rank_0.pt.trace.json.gz
strip "$PG" names/iteration_1/rank_0.pt.trace.json &&
	strip "$PG" half/iteration_1/rank_0.pt.trace.json half &&
	strip "$PG" other/iteration_1/rank_0.pt.trace.json other
is "the rewritten traces" 0 $?
is "names only: no kernel says a description any more" 0 \
	"$(grep -c 'Process Group Description' names/iteration_1/rank_0.pt.trace.json)"
for t in orig names half other; do
	ppbatch --input $t -q
	is "$t: stored" 0 $?
done
q="SELECT descr, ranks FROM pgroups ORDER BY 1, 2"
k="SELECT collective, pg_desc, pg_ranks, count(*) FROM kernels WHERE pg_id IS NOT NULL
	GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
is "the original: one group" "default_pg|[0, 1]" "$(sql orig/pptrace.db "$q")"
for t in names half; do
	is "$t: the same pgroups" "$(sql orig/pptrace.db "$q")" "$(sql $t/pptrace.db "$q")"
	is "$t: the same kernels' groups" "$(sql orig/pptrace.db "$k")" "$(sql $t/pptrace.db "$k")"
done
is "the kernel's own description stays; the others filled" "default_pg|[0, 1]
mine|[0, 1]" "$(sql other/pptrace.db "$q")"
is "... on one kernel" "1" \
	"$(sql other/pptrace.db "SELECT count(*) FROM kernels WHERE pg_desc = 'mine'")"

ppbatch --inspect "$PG" >out
is "--inspect: the header's groups" "  header      rank 0, world size 2, backend nccl, nccl 2.17.1, process groups 1" \
	"$(grep '^  header' out)"
ppbatch --inspect --json "$PG" >out.json
is "--inspect --json: process_groups, pg_count" "1 1" \
	"$(python3 -c 'import json; d = json.load(open("out.json")); print(d["process_groups"], d["pg_count"])')"
B200=$SHARED/data/real/tracelens/tests__traces__b200__eager_trace.json.gz
if [ -f "$B200" ]; then
	ppbatch --inspect "$B200" >out
	ok_if "--inspect: this rank's 15 groups of the job's 71" grep -q ', process groups 15 of 71$' out
fi
done_testing
