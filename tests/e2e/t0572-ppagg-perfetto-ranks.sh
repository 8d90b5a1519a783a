#!/bin/bash
# ppagg --perfetto-ranks (docs/ppagg.md "Why the pipeline waits"): one
# Perfetto file of the chosen ranks (why/ranks.json) on a ppgen job whose
# hosts' clocks are shifted by up to 0.7 ms (TP 2 x PP 4 x DP 2, two
# iterations, a straggler). The file is valid trace-event JSON whose tracks
# hold disjoint or properly nested slices (tests/tools/check_trace_events.py);
# one process per chosen rank (ranks, pp_group=, replica=), every kernel of
# theirs on its stream with pptrace's category, its time corrected by the
# rank's clock offset (rank_clocks); the pipeline kernels' waits and
# transfers as slices of their own, equal to the p2p_kernels view; the
# critical path as a process of its own covering each step. Above
# agg.perfetto_max_events the file holds the first iteration and says so.
# Ranks that do not exist are an error; a run without the option removes
# the file an earlier run wrote.
source "$PP_ROOT/tests/lib.sh"
"$PP_FAST_BIN/ppgen" --out j --tp 2 --pp 4 --dp 2 -m 8 --layers 1 --iterations 1,2 \
	--gpus-per-host 2 --clock-skew-max 700 --straggler 4:1.5 -q &&
	"$PP_FAST_BIN/ppbatch" --input j -q
is "generated and stored" 0 $?
ppagg --base-folder j --no-render --perfetto-ranks pp_group=1,0 2>err
is "ppagg --perfetto-ranks pp_group=1,0: exit 0" 0 $?
f=j/pptrace/why/ranks.json
ok_if "stderr names the file" grep -q "^ppagg: why: 5 ranks for Perfetto: j/pptrace/why/ranks.json (" err
python3 "$PP_ROOT/tests/tools/check_trace_events.py" $f >chk.out 2>&1
is "valid JSON and trace events, slices disjoint or nested on every track" 0 $?
sed 's/^/# /' chk.out
ok_if "a process per rank, named by its place; the critical path's" grep -q \
	'^processes 6 (critical path (the what-if model.s workers); rank 0 (PP group 0, stage 0, replica 0); rank 1 (PP group 1, stage 0, replica 0); rank 13 (PP group 1, stage 3, replica 0); rank 5 (PP group 1, stage 1, replica 0); rank 9 (PP group 1, stage 2, replica 0))' chk.out

cat >check.py <<'PY'
import json, sqlite3, sys
doc = json.load(open(sys.argv[1]))
db = sqlite3.connect(sys.argv[2])
other = doc["otherData"]
origin = other["origin_ns"]
ranks = other["ranks"]
its = other["iterations"]
ev = [e for e in doc["traceEvents"] if e["ph"] == "X"]
def ns(x):
    return round(x * 1000)
bad = 0
def check(what, want, got):
    global bad
    print("%s: %s" % (what, "ok" if want == got else "want %r, got %r" % (want, got)))
    bad |= want != got
q = ",".join("?" * len(its))
off = dict(db.execute("SELECT rank, offset_ns FROM rank_clocks"))
check("offsets: some ranks shifted", True, any(off[r] for r in ranks))
cats = {c for (c,) in db.execute("SELECT name FROM category_codes")}
for r in ranks:
    mine = [e for e in ev if e["pid"] == r + 1 and e["cat"] in cats]
    rows = list(db.execute("SELECT category, start_ns, dur_ns FROM kernels WHERE rank = ?"
                           " AND iteration IN (%s) ORDER BY start_ns, dur_ns" % q, [r] + its))
    check("rank %d: every kernel, with its category" % r, sorted((c, s - off[r], d) for c, s, d in rows),
          sorted((e["cat"], ns(e["ts"]) + origin, ns(e["dur"])) for e in mine))
    waits = [e for e in ev if e["pid"] == r + 1 and e["cat"] == "p2p_wait"]
    tr = [e for e in ev if e["pid"] == r + 1 and e["cat"] == "p2p_transfer"]
    w = db.execute("SELECT count(*), coalesce(sum(wait_ns), 0), coalesce(sum(transfer_ns), 0)"
                   " FROM p2p_kernels WHERE rank = ? AND wait_ns > 0 AND iteration IN (%s)" % q,
                   [r] + its).fetchone()
    t = db.execute("SELECT coalesce(sum(transfer_ns), 0) FROM p2p_kernels WHERE rank = ?"
                   " AND iteration IN (%s)" % q, [r] + its).fetchone()[0]
    check("rank %d: a wait slice per p2p kernel that waited, their sum" % r, (w[0], w[1]),
          (len(waits), sum(ns(e["dur"]) for e in waits)))
    check("rank %d: the transfers' sum" % r, t, sum(ns(e["dur"]) for e in tr))
    starts = {ns(e["ts"]) + origin for e in waits}
    want = {s for (s,) in db.execute("SELECT start_ns FROM p2p_kernels WHERE rank = ? AND"
                                     " wait_ns > 0 AND iteration IN (%s)" % q, [r] + its)}
    check("rank %d: a wait starts with its kernel (corrected)" % r, want, starts)
path = [e for e in ev if e["cat"] == "critical_path"]
for it in its:
    mine = sorted((ns(e["ts"]), ns(e["dur"])) for e in path if e["args"]["iteration"] == it)
    want = db.execute("SELECT count(*), sum(dur_ns) FROM critical_path WHERE iteration = ?"
                      " AND dur_ns > 0", (it,)).fetchone()
    check("iteration %d: every segment of the critical path, their time" % it, want,
          (len(mine), sum(d for _, d in mine)))
    check("iteration %d: the segments follow one another" % it, True,
          all(a + d == b for (a, d), (b, _) in zip(mine, mine[1:])))
sys.exit(bad)
PY
python3 check.py $f j/pptrace.db >check.out 2>&1
is "kernels, waits, transfers and the path agree with the views, on the corrected clock" 0 $?
sed 's/^/# /' check.out

ppagg --base-folder j --no-render --perfetto-ranks replica=1 -q
is "replica=1: exit 0" 0 $?
is "... its eight ranks" '[2,3,6,7,10,11,14,15]' \
	"$(python3 -c "import json,sys; print(json.dumps(json.load(open('$f'))['otherData']['ranks']).replace(' ', ''))")"

printf '[agg]\nperfetto_max_events = 1000\n' >small.ini
ppagg --base-folder j --no-render --perfetto-ranks 0-15 --config small.ini 2>small.err
is "over agg.perfetto_max_events: exit 0" 0 $?
ok_if "... one line says what was left out" grep -q \
	'^ppagg: warning: why: --perfetto-ranks: [0-9]* kernels of the chosen ranks in 2 iterations are more than the 1000 events .* only iteration 1 written; --iterations chooses others' small.err
is "... the file holds the first iteration and says so" '[1] True' \
	"$(python3 -c "import json; o = json.load(open('$f'))['otherData']; print(json.dumps(o['iterations']), 'only iteration 1' in o['note'])")"
python3 "$PP_ROOT/tests/tools/check_trace_events.py" $f >/dev/null 2>&1
is "... and is valid" 0 $?

ppagg --base-folder j --no-render --perfetto-ranks pp_group=4 -q 2>bad.err
is "pp_group=4 of 4 PP groups: exit 3" 3 $?
is "... says which exist" "ppagg: error: --perfetto-ranks 'pp_group=4': no PP group 4: the topology has PP groups 0-3" \
	"$(cat bad.err)"
ppagg --base-folder j --no-render --perfetto-ranks 16 -q 2>bad.err
is "rank 16 of 16: exit 3" 3 $?
ppagg --base-folder j --no-render --perfetto-ranks 'pp_group=x' -q 2>bad.err
is "a malformed list: a usage error" 2 $?
ok_if "... saying what is expected" grep -q "expected a rank, a range such as 8-15, pp_group=<g> or replica=<m>" bad.err
ppagg --base-folder j --no-render -q
ok_if "a run without --perfetto-ranks removes the earlier file" test ! -e $f -a -e j/pptrace/why/hops.gp
done_testing
