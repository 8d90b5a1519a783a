#!/usr/bin/env python3
"""Checks the why views ppagg wrote (docs/why.md) against ppgen's truth
(TREE/.truth: p2p.csv, p2p_kernels.csv, collectives.csv, clock_offsets.csv;
docs/contracts.md §4) with the tolerances docs/why.md §8 states:

- every p2p kernel of the truth is in p2p_kernels with its duration; a
  measured one has wait + transfer = duration exactly, and the transfer is
  within 2 µs of the truth for >= 95 % of them;
- every transfer of the truth is in p2p with its peer, micro-batch and
  chunk; a transfer whose peer has no trace is `peer missing` with no
  numbers, the others are measured, wait + transfer = duration, the
  transfer within 2 µs for >= 95 %;
- every instance of the truth is in collectives (status ok) unless the
  collectives view leaves its kind out (--no-inner: tp, cp, ep); the last
  arriver among the truth's tied ones and the transfer after it within 2 µs
  for >= 99 %; an instance the view holds as ok is one of the truth's;
- the critical path of each iteration: its segments follow one another and
  cover the step (their sum is the span) when there is one;
- rank_clocks equal clock_offsets.csv within 2 µs (when the truth has one);
- --slow-rank R: R arrives last at >= 90 % of its data-parallel instances,
  is `late` there, and is on the critical path; --slow-stage S: the computes
  of stage S are the larger part of each step's path.

Usage: whycheck.py DB TREE [--slow-rank R] [--slow-stage S] [--no-inner]
       [--no-path]
Prints what it measured and exits 1 at the first broken rule."""
import csv
import sqlite3
import sys

TOL = 2000


def fail(msg):
    print("error: " + msg)
    sys.exit(1)


def truth(tree, name):
    with open("%s/.truth/%s" % (tree, name), newline="") as f:
        return list(csv.DictReader(f))


def main():
    args = sys.argv[1:]
    db = sqlite3.connect(args[0])
    tree = args[1]
    opt = {"--slow-rank": None, "--slow-stage": None}
    flags = set()
    i = 2
    while i < len(args):
        if args[i] in opt:
            opt[args[i]] = int(args[i + 1])
            i += 2
        else:
            flags.add(args[i])
            i += 1
    written = {r for (r,) in db.execute("SELECT DISTINCT rank FROM traces WHERE rank IS NOT NULL")}

    # p2p kernels
    got = {(r[0], r[1], r[2]): r[3:] for r in db.execute(
        "SELECT iteration, rank, kernel, dur_ns, wait_ns, transfer_ns, status FROM p2p_kernels")}
    n = close = incomplete = 0
    worst = 0
    for t in truth(tree, "p2p_kernels.csv"):
        key = (int(t["iteration"]), int(t["rank"]), int(t["kernel"]))
        if key not in got:
            fail("p2p kernel %s of the truth is not in p2p_kernels" % (key,))
        dur, wait, tr, status = got[key]
        if dur != int(t["dur_ns"]):
            fail("p2p kernel %s: duration %s, truth %s" % (key, dur, t["dur_ns"]))
        if status != "ok":
            incomplete += 1
            continue
        if wait + tr != dur:
            fail("p2p kernel %s: wait %d + transfer %d != duration %d" % (key, wait, tr, dur))
        d = abs(tr - int(t["transfer_ns"]))
        worst = max(worst, d)
        close += d <= TOL
        n += 1
    if len(got) != n + incomplete:
        fail("p2p_kernels has %d rows, the truth %d" % (len(got), n + incomplete))
    if not n or close * 100 < n * 95:
        fail("p2p kernels: %d of %d transfers within 2 us" % (close, n))
    print("p2p kernels: %d measured, transfer within 2 us: %d (%.2f %%), worst %d ns; "
          "%d incomplete" % (n, close, 100.0 * close / n, worst, incomplete))

    # transfers
    got = {}
    for r in db.execute("SELECT iteration, rank, kernel, direction, role, peer_rank, microbatch,"
                        " chunk, dur_ns, wait_ns, transfer_ns, status FROM p2p"):
        got[r[:5]] = r[5:]
    rows = measured = rclose = missing = 0
    for t in truth(tree, "p2p.csv"):
        key = (int(t["iteration"]), int(t["rank"]), int(t["kernel"]), t["direction"], t["role"])
        if key not in got:
            fail("transfer %s of the truth is not in p2p" % (key,))
        peer, mb, chunk, dur, wait, tr, status = got[key]
        if (peer, mb, chunk) != (int(t["peer_rank"]), int(t["microbatch"]), int(t["chunk"])):
            fail("transfer %s: peer, micro-batch, chunk %s, truth %s" %
                 (key, (peer, mb, chunk), (t["peer_rank"], t["microbatch"], t["chunk"])))
        rows += 1
        if peer not in written:
            if status != "peer missing" or wait is not None or tr is not None:
                fail("transfer %s: peer %d has no trace, the view says %s" % (key, peer, status))
            missing += 1
            continue
        if status != "ok" or wait + tr != dur:
            fail("transfer %s: %s, wait %s + transfer %s, duration %s" % (key, status, wait, tr, dur))
        measured += 1
        rclose += abs(tr - int(t["transfer_ns"])) <= TOL
    if rows != len(got):
        fail("p2p has %d rows, the truth %d" % (len(got), rows))
    if measured and rclose * 100 < measured * 95:
        fail("transfers: %d of %d within 2 us" % (rclose, measured))
    print("transfers: %d, %d measured, within 2 us: %d; %d with a peer without a trace"
          % (rows, measured, rclose, missing))

    # collectives
    got = {}
    for r in db.execute("SELECT iteration, pg, kind, ranks, seq, last_rank, transfer_ns, skew_ns,"
                        " size FROM collectives WHERE status = 'ok'"):
        ranks = " ".join(x.strip() for x in r[3].strip("[]").split(","))
        got[(r[0], r[1], ranks, r[4])] = (r[2],) + r[5:]
    inner = {"tp", "cp", "ep"}
    seen = set()
    n = right = close = 0
    for t in truth(tree, "collectives.csv"):
        key = (int(t["iteration"]), t["pg_desc"], t["pg_ranks"], int(t["seq"]))
        if key not in got:
            if "--no-inner" in flags:
                continue  # checked below: only inner kinds may be absent
            fail("instance %s of the truth is not in collectives" % (key,))
        kind, last, tr, skew, size = got[key]
        seen.add(key)
        n += 1
        right += str(last) in t["last_ranks"].split()
        close += abs(tr - int(t["transfer_ns"])) <= TOL and abs(skew - int(t["skew_ns"])) <= TOL
        if size != int(t["size"]):
            fail("instance %s: size %d, truth %s" % (key, size, t["size"]))
    extra = set(got) - seen
    if extra:
        fail("%d instances ok in the view are not the truth's, e.g. %s" % (len(extra), min(extra)))
    if "--no-inner" in flags:
        kinds = {r[0] for r in db.execute("SELECT DISTINCT kind FROM collectives")}
        if kinds & inner:
            fail("--no-inner: the view lists kinds %s" % sorted(kinds & inner))
    if not n or right * 100 < n * 99 or close * 100 < n * 99:
        fail("collectives: %d instances, last arriver right %d, transfer and skew within 2 us %d"
             % (n, right, close))
    print("collective instances: %d, last arriver right: %d (%.2f %%), transfer and skew within "
          "2 us: %d" % (n, right, 100.0 * right / n, close))

    # the critical path
    steps = list(db.execute(
        "SELECT iteration, count(*), sum(dur_ns), max(start_ns + dur_ns) - min(start_ns),"
        " sum(start_ns <> prev) FROM (SELECT iteration, start_ns, dur_ns,"
        " lag(start_ns + dur_ns, 1, start_ns) OVER (PARTITION BY iteration ORDER BY seq)"
        " AS prev FROM critical_path) GROUP BY iteration"))
    (nsteps,) = db.execute("SELECT critical_path_steps FROM why").fetchone()
    if "--no-path" in flags:
        if steps or nsteps:
            fail("a critical path where none is expected")
        print("critical path: none, as expected")
    else:
        if not steps or len(steps) != nsteps:
            fail("critical path: %d steps, the why view says %s" % (len(steps), nsteps))
        for it, segs, total, span, gaps in steps:
            if total != span or gaps:
                fail("critical path of iteration %d: %d segments sum to %d ns, span %d ns, "
                     "%d gaps" % (it, segs, total, span, gaps))
        print("critical path: %d steps, each covered exactly" % len(steps))

    # clocks
    try:
        want = {int(t["rank"]): int(t["offset_ns"]) for t in truth(tree, "clock_offsets.csv")}
    except FileNotFoundError:
        want = None
    if want:
        gotc = dict(db.execute("SELECT rank, offset_ns FROM rank_clocks"))
        bad = [r for r in gotc if abs(gotc[r] - want[r]) > TOL]
        if bad:
            fail("rank_clocks: rank %d offset %d, truth %d" % (bad[0], gotc[bad[0]], want[bad[0]]))
        print("rank_clocks: %d ranks within 2 us of the truth" % len(gotc))

    slow = opt["--slow-rank"]
    if slow is not None:
        row = db.execute("SELECT instances, times_last, late FROM collective_ranks"
                         " WHERE rank = ? AND pg_kind = 'dp'", (slow,)).fetchone()
        if not row or row[1] * 10 < row[0] * 9 or not row[2]:
            fail("rank %d at its DP collectives: %s" % (slow, row))
        (onpath,) = db.execute("SELECT count(*) FROM critical_path WHERE rank = ?", (slow,)).fetchone()
        if not onpath:
            fail("rank %d is not on the critical path" % slow)
        print("slow rank %d: last at %d of %d DP instances, late; %d segments of the path"
              % (slow, row[1], row[0], onpath))
    stage = opt["--slow-stage"]
    if stage is not None:
        for it, part, total in db.execute(
                "SELECT iteration, sum(CASE WHEN stage = ? AND kind = 'op' AND optype IN"
                " ('forward-compute', 'backward-compute') THEN dur_ns ELSE 0 END), sum(dur_ns)"
                " FROM critical_path GROUP BY iteration", (stage,)):
            if part * 2 <= total:
                fail("iteration %d: stage %d computes %d of the path's %d ns" % (it, stage, part, total))
        print("slow stage %d: its computes are most of every step's path" % stage)


main()
