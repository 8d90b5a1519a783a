#!/usr/bin/env python3
"""mkaggdb.py — a synthetic ppbatch database for ppagg tests and the
benchmark, written without traces (fast: a 1024-rank database in seconds).
The schema is storage/schema.c's own (its SQL string literals are executed),
and rows go into its internal tables (traces, category_t, step_t, kernel_t,
names, pgroups) as storage/db_trace.c stores them; ppagg reads them through the
stable views. Data: a simulated 1F1B schedule per PP group (tp-cp-ep-dp-pp
layout); the truth ppagg must reproduce (pp_groups.csv, stragglers.csv) is
computed here independently.

usage: mkaggdb.py --db F --truth DIR --tp 2 --pp 4 --dp 2 --mb 8
                  [--iterations 15,16] [--straggler RANK:FACTOR]
                  [--fail RANK] [--drop RANK] [--kernels K] [--topology FILE]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

ap = argparse.ArgumentParser()
ap.add_argument("--db", required=True)
ap.add_argument("--truth")
ap.add_argument("--tp", type=int, default=1)
ap.add_argument("--pp", type=int, default=4)
ap.add_argument("--dp", type=int, default=2)
ap.add_argument("--mb", type=int, default=8)
ap.add_argument("--kernels", type=int, default=3, help="comp kernels per step")
ap.add_argument("--iterations", default="15")
ap.add_argument("--straggler", action="append", default=[])
ap.add_argument("--fail", type=int, action="append", default=[])
ap.add_argument("--drop", type=int, action="append", default=[])
ap.add_argument("--topology")
ap.add_argument("--pg", action="store_true", help="record process-group args on comm kernels")
a = ap.parse_args()

TP, PP, DP = a.tp, a.pp, a.dp
WORLD = TP * PP * DP
slow = {int(s.split(":")[0]): float(s.split(":")[1]) for s in a.straggler}
F, B, P2P = 1_000_000, 2_000_000, 50_000  # ns
BASE = 1_700_000_000_000_000_000


def coords(r):
    return r % TP, (r // TP) % DP, r // (TP * DP)  # tp, dp, pp


def pp_groups():
    return [[t + TP * (d + DP * p) for p in range(PP)] for d in range(DP) for t in range(TP)]


def write_topology(path):
    tp = [[TP * (d + DP * p) + t for t in range(TP)] for p in range(PP) for d in range(DP)]
    dp = [[t + TP * (d + DP * p) for d in range(DP)] for p in range(PP) for t in range(TP)]
    rule = "-" * 30 + "\n"

    def section(title, groups, first=1):
        f.write(title + "\n" + rule)
        for k, g in enumerate(groups):
            f.write(f"Group {k + first}: {g}\n")

    with open(path, "w") as f:
        f.write(f"TP Size: {TP}\nPP Size: {PP}\nCP Size: 1\nEP Size: 1\nWorld Size: {WORLD}\n\n")
        section("TENSOR PARALLEL (TP) GROUPS", tp)
        section("\nPIPELINE PARALLEL (PP) GROUPS", pp_groups())
        section("\nDATA PARALLEL (DP) GROUPS", dp)
        models = [sorted(t + TP * (d + DP * p) for p in range(PP) for t in range(TP)) for d in range(DP)]
        section("\nFULL MODEL RANK GROUPS (by DP Rank)\n" + rule + "legend", models, 0)


def schedule(it_off):
    """1F1B per PP group: start times of F(mb) and B(mb) per stage."""
    out = {}
    for g in pp_groups():
        fac = [max(slow.get(r, 1.0) for r in [g[s]]) for s in range(PP)]
        # the whole TP group runs at the speed of its slowest member's compute? no:
        # compute of a straggler is longer; others wait in comm (not compute).
        fs = [int(F * fac[s]) for s in range(PP)]
        bs = [int(B * fac[s]) for s in range(PP)]
        order = []
        for s in range(PP):
            w = min(PP - s - 1, a.mb)
            q = [("F", i) for i in range(w)]
            for k in range(a.mb - w):
                q += [("F", w + k), ("B", k)]
            q += [("B", i) for i in range(a.mb - w, a.mb)]
            order.append(q)
        done = {}
        t_dev = [BASE + it_off + 10_000 * s for s in range(PP)]
        pos = [0] * PP
        progress = True
        while progress:
            progress = False
            for s in range(PP):
                while pos[s] < len(order[s]):
                    kind, mb = order[s][pos[s]]
                    dep = (("F", s - 1, mb) if s > 0 else None) if kind == "F" else \
                        (("B", s + 1, mb) if s < PP - 1 else ("F", s, mb))
                    if dep and dep not in done:
                        break
                    start = max(t_dev[s], done[dep] + P2P if dep else 0)
                    dur = fs[s] if kind == "F" else bs[s]
                    done[(kind, s, mb)] = start + dur
                    t_dev[s] = start + dur
                    pos[s] += 1
                    progress = True
        for s, r in enumerate(g):
            out[r] = (done, s, fs[s], bs[s], t_dev[s])
    return out


def union(iv):
    iv = sorted(x for x in iv if x[1] > x[0])
    tot, cs, ce = 0, None, None
    for s, e in iv:
        if cs is None or s > ce:
            if cs is not None:
                tot += ce - cs
            cs, ce = s, e
        else:
            ce = max(ce, e)
    return tot + (ce - cs if cs is not None else 0)


from ppschema import CATS, PHASES, TYPES, create

db = create(a.db)
names, pgroups = {}, {}


def intern(d, key):
    if key not in d:
        d[key] = len(d) + 1
    return d[key]


next_trace = [1]
truth_pp, truth_strag = [], []
for ii, it in enumerate(int(x) for x in a.iterations.split(",")):
    folder = f"iteration_{it}"
    sched = schedule(ii * 100_000_000_000)
    per_rank = {}
    for r in range(WORLD):
        if r in a.drop:
            continue
        path = f"/data/{folder}/rank_{r:04d}_iter_{it}.pt.trace.json"
        if r in a.fail:
            db.execute("INSERT INTO traces(id, path, folder, iteration, rank, status, fail_kind, error) "
                       "VALUES (?,?,?,?,?,2,1,?)", (next_trace[0], path, folder, it, r,
                                                   "truncated <trace> & 'bad' \"json\""))
            next_trace[0] += 1
            continue
        done, s, fs, bs, tend = sched[r]
        tp_, dp_, pp_ = coords(r)
        ks, steps, npp = [], [], 0
        pgr = str([t + TP * (dp_ + DP * pp_) for t in range(TP)])
        pgp = str([tp_ + TP * (dp_ + DP * p) for p in range(PP)])
        for kind, ph, dur in (("F", "fwd", fs), ("B", "bwd", bs)):
            for mb in range(a.mb):
                end = done[(kind, s, mb)]
                st = end - dur
                n = a.kernels
                kd = dur // (n + 1)
                for k in range(n):
                    cat = "fwd_computation" if ph == "fwd" else "bwd_computation"
                    rec = 1 if (ph == "bwd" and k == 0) else 0
                    ks.append((cat, "comp", rec, ph, mb, "gemm", 7, st + k * kd, kd, None, None))
                # one TP comm kernel overlapping the last comp kernel
                ks.append((ph + "_communication", "comm", 0, ph, mb, "ncclDevKernel_AllReduce", 20,
                           st + (n - 1) * kd + kd // 2, kd, "TENSOR_MODEL_PARALLEL_GROUP" if a.pg else None,
                           pgr if a.pg else None))
                ks.append(("memory", "mem", 0, ph, mb, "Memcpy DtoD", 7, st + n * kd, kd // 2, None, None))
                # pp send after a forward (not last stage) / after a backward (not first)
                if (kind == "F" and s < PP - 1) or (kind == "B" and s > 0):
                    npp += 1
                    ks.append(("pp_communication", "comm", 0, "pp", npp - 1,
                               "ncclDevKernel_SendRecv", 24, end, P2P, "PIPELINE_MODEL_PARALLEL_GROUP" if a.pg else None,
                               pgp if a.pg else None))
        # dp + optimizer at the end
        ks.append(("dp_communication", "comm", 0, "dp", 0, "ncclDevKernel_ReduceScatter", 30, tend + 100_000, 3_000_000, None, None))
        ks.append(("optimizer_computation", "comp", 0, "opt", 0, "adam", 7, tend + 3_200_000, 500_000, None, None))
        ks.append(("other", "comp", 0, None, None, "orphan", 7, tend + 3_800_000, 10_000, None, None))
        tid = next_trace[0]
        next_trace[0] += 1
        iv = [(k[7], k[7] + k[8]) for k in ks]
        ws, we = min(x[0] for x in iv), max(x[1] for x in iv)
        db.executemany("INSERT INTO kernel_t(rowid, code, seq, name_id, stream, start, dur, correlation, pg_id) "
                       "VALUES (?,?,?,?,?,?,?,?,?)",
                       [((tid << 32) | i, CATS.index(k[0]) | TYPES[k[1]] << 4 | k[2] << 6 | PHASES[k[3]] << 7,
                         k[4], intern(names, k[5]), k[6], k[7] - ws, k[8], i,
                         intern(pgroups, (k[9], k[10])) if k[9] else None) for i, k in enumerate(ks)])
        busy = union(iv)
        nonpp = union([(k[7], k[7] + k[8]) for k in ks if k[0] != "pp_communication"])
        comp = union([(k[7], k[7] + k[8]) for k in ks if k[1] == "comp"])
        comm = union([(k[7], k[7] + k[8]) for k in ks if k[1] == "comm"])
        both = comp + comm - union([(k[7], k[7] + k[8]) for k in ks if k[1] != "mem"])
        db.execute("INSERT INTO traces(id, path, folder, iteration, rank, bytes, status, mode, window_start_ns, "
                   "window_end_ns, gpu_busy_ns, idle_ns, bubble_ns, comp_busy_ns, comm_busy_ns, overlap_ns, coverage) "
                   "VALUES (?,?,?,?,?,?,0,0,?,?,?,?,?,?,?,?,?)",
                   (tid, path, folder, it, r, 1000, ws, we, busy, we - ws - busy,
                    we - ws - nonpp, comp, comm, both, 0.99))
        cats = {}
        for k in ks:
            cats.setdefault(k[0], []).append(k)
        for c, l in sorted(cats.items()):
            db.execute("INSERT INTO category_t VALUES (?,?,?,?,?)",
                       (tid, CATS.index(c), len(l), sum(k[8] for k in l), union([(k[7], k[7] + k[8]) for k in l])))
        by_step = {}
        for k in ks:
            if k[3] and k[0] != "memory":
                by_step.setdefault((PHASES[k[3]], k[4]), []).append(k)
        for (phc, q), l in sorted(by_step.items()):
            if True:
                cs = [(k[7], k[7] + k[8]) for k in l if k[1] == "comp"]
                cm = [(k[7], k[7] + k[8]) for k in l if k[1] == "comm"]
                s0, e0 = min(k[7] for k in l), max(k[7] + k[8] for k in l)
                ov = union(cs) + union(cm) - union(cs + cm)
                db.execute("INSERT INTO step_t(trace_id, phase, seq, cpu_start_ns, cpu_end_ns, start_ns, end_ns, "
                           "comp_ns, comm_ns, overlap_ns, kernels) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                           (tid, phc, q, s0 - 5000, e0, s0, e0, union(cs), union(cm), ov, len(l)))
        per_rank[r] = (ws, we, busy, nonpp,
                       cats.get("fwd_computation") and union([(k[7], k[7] + k[8]) for k in cats["fwd_computation"]]) +
                       union([(k[7], k[7] + k[8]) for k in cats["bwd_computation"]]))
    for g, ranks in enumerate(pp_groups()):
        if any(r not in per_rank for r in ranks):
            continue
        gs = min(per_rank[r][0] for r in ranks)
        ge = max(per_rank[r][1] for r in ranks)
        for s, r in enumerate(ranks):
            truth_pp.append((it, g, s, r, gs, ge, ge - gs - per_rank[r][2], ge - gs - per_rank[r][3]))
    for r in sorted(slow):
        if slow[r] > 1.1 and r in per_rank:
            truth_strag.append((it, r))
db.executemany("INSERT INTO names(id, name) VALUES (?,?)", [(v, k) for k, v in names.items()])
db.executemany("INSERT INTO pgroups(id, descr, ranks) VALUES (?,?,?)", [(v, k[0], k[1]) for k, v in pgroups.items()])
db.commit()
if a.truth:
    os.makedirs(a.truth, exist_ok=True)
    with open(os.path.join(a.truth, "pp_groups.csv"), "w") as f:
        f.write("iteration,pp_group,stage,rank,group_window_start_ns,group_window_end_ns,group_idle_ns,group_bubble_ns\n")
        for row in truth_pp:
            f.write(",".join(str(x) for x in row) + "\n")
    with open(os.path.join(a.truth, "stragglers.csv"), "w") as f:
        f.write("iteration,rank\n")
        for row in truth_strag:
            f.write(",".join(str(x) for x in row) + "\n")
if a.topology:
    write_topology(a.topology)
