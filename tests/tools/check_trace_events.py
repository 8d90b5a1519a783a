#!/usr/bin/env python3
"""Checks a Chrome trace-event JSON file (the JSON Object Format that
Perfetto's UI and chrome://tracing open) against the format's rules, as
ppagg writes it (whatif/timeline.json):

- the file is one JSON object with a "traceEvents" array (and an optional
  "displayTimeUnit" of "ms" or "ns");
- every event has "ph", "pid", "tid" (integers) and "name" (a string);
- complete events ("ph": "X") have numeric "ts" and "dur", both >= 0;
- metadata events ("ph": "M") are process_name / thread_name (args.name a
  string) or process_sort_index / thread_sort_index (args.sort_index an
  integer);
- complete events on one track (pid, tid) nest properly: one that starts
  inside another ends inside it too (the format's rule for "X" events);
- every track and process that has events is named.

Prints what it found (processes, tracks, events) and exits 1 with the first
broken rule."""
import json
import sys


def fail(msg):
    print("error: " + msg)
    sys.exit(1)


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("not an object with a traceEvents array")
    if doc.get("displayTimeUnit", "ms") not in ("ms", "ns"):
        fail("displayTimeUnit must be ms or ns")
    pnames, tnames, tracks = {}, {}, {}
    nx, with_args = 0, 0
    for i, e in enumerate(doc["traceEvents"]):
        where = "event %d" % i
        if not isinstance(e, dict):
            fail(where + ": not an object")
        for k, t in (("ph", str), ("name", str), ("pid", int), ("tid", int)):
            if not isinstance(e.get(k), t) or isinstance(e.get(k), bool):
                fail("%s: %s missing or not a %s" % (where, k, t.__name__))
        ph = e["ph"]
        if ph == "X":
            for k in ("ts", "dur"):
                v = e.get(k)
                if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
                    fail("%s: %s must be a number >= 0" % (where, k))
            tracks.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"], i))
            nx += 1
            a = e.get("args", {})
            if isinstance(a, dict) and {"microbatch", "chunk", "op"} <= set(a):
                with_args += 1
        elif ph == "M":
            a = e.get("args")
            if not isinstance(a, dict):
                fail(where + ": metadata without args")
            if e["name"] in ("process_name", "thread_name"):
                if not isinstance(a.get("name"), str):
                    fail(where + ": args.name must be a string")
                if e["name"] == "process_name":
                    pnames[e["pid"]] = a["name"]
                else:
                    tnames[(e["pid"], e["tid"])] = a["name"]
            elif e["name"] in ("process_sort_index", "thread_sort_index"):
                if not isinstance(a.get("sort_index"), int):
                    fail(where + ": args.sort_index must be an integer")
            else:
                fail(where + ": unknown metadata " + e["name"])
        else:
            fail(where + ": phase %r not expected here" % ph)
    for key, evs in tracks.items():
        if key[0] not in pnames:
            fail("process %d has events but no name" % key[0])
        if key not in tnames:
            fail("track %s has events but no name" % (key,))
        evs.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for s, e, i in evs:
            # Times are µs with ns decimals: equal within 1e-6 is equal.
            while stack and stack[-1] <= s + 1e-6:
                stack.pop()
            if stack and e > stack[-1] + 1e-6:
                fail("event %d on track %s overlaps another without nesting" % (i, key))
            stack.append(e)
    procs = sorted(pnames.values())
    print("processes %d (%s), tracks %d" % (len(procs), "; ".join(procs), len(tracks)))
    print("complete events %d%s" % (nx, ", every one with args microbatch, chunk, op"
                                    if with_args == nx else ", %d with args" % with_args))


main()
