#!/bin/bash
# ppbatch --inspect on ppgen output: every quirk ppgen can plant (--nasty),
# plain and gzip alike; roles and steps per pattern set from the classifier
# agree with ppgen's truth; a truncated trace fails, then is salvaged.
source "$PP_ROOT/tests/lib.sh"

MB=3
"$PP_FAST_BIN/ppgen" --quiet --out plain --tp 1 --pp 2 --dp 1 --microbatches $MB --layers 2 \
	--kernels-per-layer 4 --nasty all >/dev/null
"$PP_FAST_BIN/ppgen" --quiet --out gz --tp 1 --pp 2 --dp 1 --microbatches $MB --layers 2 \
	--kernels-per-layer 4 --nasty all --gzip >/dev/null
ls plain/iteration_15/*.json gz/iteration_15/*.json.gz >files
is "four traces" 4 "$(wc -l <files)"

ppbatch --inspect --json $(cat files) >out.jsonl
is "exit 0 on every nasty trace" 0 "$?"
python3 - out.jsonl "$MB" plain/.truth/steps.csv >check.txt <<'PY'
import json, sys, csv
mb = int(sys.argv[2])
truth = {}
for row in csv.DictReader(open(sys.argv[3])):
    truth[(int(row["rank"]), row["phase"])] = truth.get((int(row["rank"]), row["phase"]), 0) + 1
lines = [json.loads(l) for l in open(sys.argv[1])]
out = []
for d in lines:
    c = d["classification"]
    rank = d["rank"]
    ok = (d["ok"] and d["error"] is None and c is not None
          and c["steps_per_set"]["forward_step"] == mb == truth[(rank, "fwd")]
          and c["steps_per_set"]["backward_step"] == mb == truth[(rank, "bwd")]
          and c["forward_thread"]["rule"] == "flows" and c["backward_thread"]["rule"] == "flows"
          and c["forward_thread"]["tid"] != c["backward_thread"]["tid"])
    out.append("%s rank %s %s" % ("gz" if d["gzip"] else "plain", rank, "ok" if ok else json.dumps(d)[:600]))
same = all(lines[i][k] == lines[i + 2][k] for i in (0, 1)
           for k in ("events", "kernels", "by_ph", "by_cat", "kernel_types", "start_ns", "end_ns", "threads"))
out.append("gzip reads the same: %s" % same)
print("\n".join(out))
PY
is "roles and steps agree with the truth" "gz rank 0 ok
gz rank 1 ok
plain rank 0 ok
plain rank 1 ok
gzip reads the same: True" "$(cat check.txt)"

ppbatch --inspect --no-classify --json plain/iteration_15/rank_0000_iter_15.pt.trace.json >nc.json
is "--no-classify: no classification, same counts" "None True" \
	"$(python3 -c '
import json,sys
a=json.load(open(sys.argv[1])); b=[json.loads(l) for l in open(sys.argv[2])][2]
print(a["classification"], all(a[k]==b[k] for k in ("events","kernels","kernel_types","threads")))' nc.json out.jsonl)"

"$PP_FAST_BIN/ppgen" --quiet --out cut --tp 1 --pp 1 --dp 1 --microbatches 2 --layers 1 \
	--kernels-per-layer 2 --nasty truncate >/dev/null
t=$(ls cut/iteration_15/*.json)
ppbatch --inspect "$t" >o.txt 2>e.txt
is "truncated ppgen trace: exit 1" 1 "$?"
ok_if "truncated: says where and how many events" grep -qE 'byte [0-9]+: file ends inside an event \(at byte [0-9]+\) after [0-9]+ complete events' e.txt
ppbatch --inspect --salvage --json "$t" >s.json
is "salvaged: exit 0, ok, truncated, classified" "True True True" \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["ok"], d["truncated"], d["classification"] is not None)' s.json)"
done_testing
