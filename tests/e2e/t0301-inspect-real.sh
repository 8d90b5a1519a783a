#!/bin/bash
# ppbatch --inspect on every real trace in $SHARED/data/real: all read with
# ok:true, JSON keys as documented, counts and times equal to an independent
# Python reading (times through Decimal, never float).
source "$PP_ROOT/tests/lib.sh"

REAL="$SHARED/data/real"
if [ ! -d "$REAL" ]; then
	skip "real traces" "no $REAL"
	done_testing
	exit
fi
find "$REAL" -type f -name '*.json*' | sort >files
is "45 real traces present" 45 "$(wc -l <files)"

ppbatch --inspect --json $(cat files) >out.jsonl 2>err.txt
is "exit status 0 when all files read" 0 "$?"
is "no diagnostics" "" "$(cat err.txt)"
is "one JSON object per file" 45 "$(wc -l <out.jsonl)"

python3 - out.jsonl >check.txt <<'PY'
import json, sys
bad = []
for line in open(sys.argv[1]):
    d = json.loads(line)
    for k in ("file", "bytes", "events", "kernels", "ok", "error"):
        if k not in d:
            bad.append("%s: no key %s" % (d.get("file"), k))
    if d["ok"] is not True or d["error"] is not None:
        bad.append("%s: %s" % (d["file"], d["error"]))
    if not isinstance(d["bytes"], int) or d["bytes"] <= 0 or d["events"] <= 0:
        bad.append("%s: bytes/events" % d["file"])
print("\n".join(bad) if bad else "all ok")
PY
is "every file ok:true with the documented keys" "all ok" "$(cat check.txt)"

# Independent reading of three files: event count, kernel count, exact span.
python3 - out.jsonl "$REAL" >cmp.txt <<'PY'
import json, sys, gzip, decimal
res = {json.loads(l)["file"]: json.loads(l) for l in open(sys.argv[1])}
names = ["hta/ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
         "hta/large_integer_trace__rank-70.Mar_25_20_48_12.2861.pt.trace.json.gz",
         "param/dlrm_kineto/worker1_step_12.1694128201556.pt.trace.json.gz",
         "hta/cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"]
out = []
for n in names:
    path = sys.argv[2] + "/" + n
    d = json.load(gzip.open(path), parse_float=decimal.Decimal)
    ev = d["traceEvents"]
    kern = sum(1 for e in ev if str(e.get("cat", "")).lower() == "kernel")
    lo = hi = None
    for e in ev:
        if e.get("ph") == "M" or e.get("ts") is None:
            continue
        a = int(decimal.Decimal(e["ts"]) * 1000)
        b = a + max(0, int(decimal.Decimal(e.get("dur") or 0) * 1000))
        lo = a if lo is None else min(lo, a)
        hi = b if hi is None else max(hi, b)
    base = d.get("baseTimeNanoseconds", 0)
    r = res[path]
    di = d.get("distributedInfo", {})
    got = (r["events"], r["kernels"], r["start_ns"], r["end_ns"], r["rank"], r["world_size"])
    want = (len(ev), kern, lo + base, hi + base, di.get("rank"), di.get("world_size"))
    out.append("%s %s" % (n.split("/")[-1][:20], "same" if got == want else "got %s want %s" % (got, want)))
print("\n".join(out))
PY
is "matches an independent reading" "ns_resolution_trace_ same
large_integer_trace_ same
worker1_step_12.1694 same
cpu_only__rank-34.Ju same" "$(cat cmp.txt)"

# The default survey says what the full classifier says (roles with their
# rules, steps per pattern set, counters), without the kernel rows.
ppbatch --inspect --full --json $(cat files) >full.jsonl 2>/dev/null
is "--full: exit 0" 0 "$?"
python3 - out.jsonl full.jsonl >survey.txt <<'PY'
import json, sys
keys = ("mode", "forward_thread", "backward_thread", "steps_per_set", "profiler_steps",
        "events", "cpu_slices", "launches", "gpu_events", "steps")
bad = []
for sl, fl in zip(open(sys.argv[1]), open(sys.argv[2])):
    top = json.loads(sl)
    s, f = top["classification"], json.loads(fl)["classification"]
    if not (s["survey"] is True and f["survey"] is False and s["kernels"] is None
            and f["kernels"] == f["gpu_events"] and "gpu_busy_ns" not in s):
        bad.append("survey flags: %s" % s)
    for k in keys:
        if s[k] != f[k]:
            bad.append("%s: %s vs %s" % (k, s[k], f[k]))
    # inspect's own GPU counts agree with the classifier's (2021 Memcpy/Memset too)
    if top["gpu_events"] != s["gpu_events"]:
        bad.append("gpu_events: inspect %s, classifier %s" % (top["gpu_events"], s["gpu_events"]))
print("\n".join(bad) if bad else "same")
PY
is "survey equals the full classification on all 45" "same" "$(cat survey.txt)"

f=$(grep ns_resolution files)
ppbatch --inspect "$f" >text.txt
is "text output exits 0" 0 "$?"
is "text: events by ph" "  events      68692  (M 36, X 45420, f 15928, i 2, s 7306)" "$(grep '^  events      ' text.txt)"
is "text: gpu events" "  gpu events  6095  (kernel 4350, gpu_memcpy 1600, gpu_memset 145)" "$(grep '^  gpu events' text.txt)"
is "text: header" "  header      rank 0, world size 1, backend nccl, nccl 2.17.1, process groups 1" "$(grep '^  header' text.txt)"
is "text: span, exact ns" "  time span   1712195495406752797 .. 1712195496004644183 ns (0.597891 s)" "$(grep '^  time span' text.txt)"
ok_if "text: named main thread" grep -q 'tid 1102 .* thread 1102 (pt_main_thread)' text.txt
done_testing
