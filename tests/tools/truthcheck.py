#!/usr/bin/env python3
"""truthcheck.py DIR [--vpp V] — recompute every number of ppgen's DIR/.truth/ from the
written trace text, independently of ppgen's C code, and compare.

It parses each trace itself (json with exact decimal times, BOM stripped, raw
control characters allowed), applies docs/semantics.md §4–6 and docs/contracts.md §2/§4
(thread roles from fwdbwd flows, root-most steps by GLOB patterns,
attribution rules 0-5, unions and overlaps), parses the topology file for
the PP groups, and checks the straggler list with the 10 % rule. It derives
the what-if op table (ops.csv) from the trace text by the mapping rules of
docs/contracts.md §4 and checks optrace.csv against it and the clock offsets.
The why truth (p2p.csv, p2p_kernels.csv, collectives.csv: waits that only
the generator knows) is checked for consistency with the traces: every p2p
kernel of a written rank is there with its start and duration, every wait +
transfer is the kernel's duration, every instance's last arriver has the
kernel it names. Python 3 standard library only. Exit status 0 when everything matches.
"""
import bisect
import csv
import fnmatch
import glob
import gzip
import json
import os
import re
import statistics
import sys
from decimal import Decimal

PATTERNS = {
    "comm_kernel": ["*nccl*", "*mccl*"],
    "mem_kernel": ["*memcpy*", "*Memcpy*", "*memset*", "*Memset*"],
    "forward_step": ["*forward_step*"],
    "backward_step": ["*backward_step*"],
    "pp_comm": ["*send_forward*", "*recv_forward*", "*send_backward*", "*recv_backward*",
                "*send_forward_recv_backward*", "*send_backward_recv_forward*"],
    "dp_comm": ["*start_grad_sync*", "*finish_grad_sync*", "*start_param_sync*",
                "*finish_param_sync*", "*finalize_model_grads*", "*optimizer*",
                "*pretrain*loss_func*"],
    "optimizer": ["*optimizer*"],
    "recompute": ["*recomupte*forward*", "*recompute*forward*", "*custom_forward*"],
}
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


def glob_any(name, pats):
    return any(fnmatch.fnmatchcase(name, p) for p in pats)


def to_ns(v):
    """µs value (Decimal/int from the text) -> int ns, exact."""
    return int(Decimal(v) * 1000)


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    text = data.decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    return json.loads(text, strict=False, parse_float=Decimal)


def union(iv):
    tot, cs, ce = 0, None, None
    for s, e in sorted(x for x in iv if x[1] > x[0]):
        if cs is None or s > ce:
            if cs is not None:
                tot += ce - cs
            cs, ce = s, e
        elif e > ce:
            ce = e
    if cs is not None:
        tot += ce - cs
    return tot


def merged(iv):
    out = []
    for s, e in sorted(x for x in iv if x[1] > x[0]):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def overlap(a, b):
    a, b = merged(a), merged(b)
    i = j = tot = 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if e > s:
            tot += e - s
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tot


def root_most(slices):
    """slices: list of (ts, end, idx, thread) matching one set -> root-most ones."""
    roots = []
    by_thread = {}
    for s in slices:
        by_thread.setdefault(s[3], []).append(s)
    for th, lst in by_thread.items():
        lst.sort(key=lambda s: (s[0], -s[1], s[2]))
        cur = None
        for s in lst:
            if cur is not None and s[0] >= cur[0] and s[1] <= cur[1]:
                continue
            cur = s
            roots.append(s)
    roots.sort(key=lambda s: (s[0], s[2]))
    return roots


PHYSICS_ERRORS = []


def physics(path, gpu, launches, flow_ids):
    """What any real trace satisfies: no overlap on one stream, kernels start
    after their launch starts, fwdbwd flows exactly paired."""
    def err(msg):
        if len(PHYSICS_ERRORS) < 20:
            PHYSICS_ERRORS.append("%s: %s" % (os.path.basename(path), msg))
    streams = {}
    for g in gpu:
        streams.setdefault(g["stream"], []).append(g)
        la = launches.get(g["corr"])
        if la is not None and g["ts"] < la[0]:
            err("kernel at %d starts before its launch at %d" % (g["ts"], la[0]))
    for st, lst in streams.items():
        lst.sort(key=lambda g: (g["ts"], g["dur"]))
        for a, b in zip(lst, lst[1:]):
            if b["ts"] < a["ts"] + a["dur"]:
                err("stream %s: overlap at %d" % (st, b["ts"]))
    for fid, phs in flow_ids.items():
        if sorted(phs) != ["f", "s"]:
            err("fwdbwd flow %s is not one s and one f: %s" % (fid, phs))


def analyse(path):
    d = load(path)
    base = int(d.get("baseTimeNanoseconds", 0) or 0)
    evs = d["traceEvents"]
    gpu, launches, slices = [], {}, []
    flows, flow_ids = {}, {}
    for n, e in enumerate(evs):
        ph = e.get("ph")
        cat = str(e.get("cat", "")).lower()
        if ph in ("s", "f") and cat == "fwdbwd":
            key = (e.get("pid"), e.get("tid"))
            c = flows.setdefault(key, [0, 0])
            c[0 if ph == "s" else 1] += 1
            flow_ids.setdefault(e.get("id"), []).append(ph)
            continue
        if ph != "X":
            continue
        ts = base + to_ns(e["ts"])
        dur = to_ns(e.get("dur", 0))
        args = e.get("args") or {}
        if cat in GPU_CATS:
            gpu.append(dict(name=e.get("name", ""), cat=cat, ts=ts, dur=dur,
                            corr=args.get("correlation"), n=n,
                            stream=(e.get("pid"), e.get("tid")),
                            coll=args.get("Collective name", ""),
                            pg=args.get("Process Group Description", "")))
            continue
        th = (e.get("pid"), e.get("tid"))
        if "correlation" in args:
            launches[args["correlation"]] = (ts, th)
        slices.append((ts, ts + dur, n, th, e.get("name", "")))
    # Thread roles (docs/semantics.md §4): the two threads with most fwdbwd endpoints.
    top = sorted(flows.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))[:2]
    if len(top) == 2:
        share = [kv[1][0] / (kv[1][0] + kv[1][1]) for kv in top]
        fwd_th, bwd_th = (top[0][0], top[1][0]) if share[0] >= share[1] else (top[1][0], top[0][0])
    else:
        fwd_th = next((s[3] for s in slices if glob_any(s[4], PATTERNS["forward_step"])), None)
        bwd_th = fwd_th
    sets = {}
    for key in ("forward_step", "backward_step", "pp_comm", "dp_comm", "optimizer", "recompute"):
        sets[key] = root_most([s for s in slices if glob_any(s[4], PATTERNS[key])])
    phases = {
        "fwd": [s for s in sets["forward_step"] if s[3] == fwd_th],
        "bwd": [s for s in sets["backward_step"] if s[3] == fwd_th],
        "pp": sets["pp_comm"], "dp": sets["dp_comm"], "opt": sets["optimizer"],
    }
    rec = [s for s in sets["recompute"] if s[3] == bwd_th]

    # Index for speed: steps sorted by ts; linear scan is fine for test sizes
    # but use bisect over starts to stay fast on bigger traces.
    def finder(lst):
        starts = [s[0] for s in lst]

        def f(t, th=None):
            i = bisect.bisect_right(starts, t) - 1
            # steps of one phase may nest across threads; scan back while plausible
            k = i
            while k >= 0 and k > i - 64:
                s = lst[k]
                if s[0] <= t <= s[1] and (th is None or s[3] == th):
                    return k
                k -= 1
            return None
        return f

    find = {p: finder(lst) for p, lst in phases.items()}
    find_rec = finder(rec)
    kernels = []
    for g in gpu:
        name = g["name"]
        if g["cat"] in ("gpu_memcpy", "gpu_memset"):
            typ = "mem"
        elif glob_any(name, PATTERNS["comm_kernel"]):
            typ = "comm"
        elif glob_any(name, PATTERNS["mem_kernel"]):
            typ = "mem"
        else:
            typ = "comp"
        la = launches.get(g["corr"]) if g["corr"] is not None else None
        cat, phase, seq, rc = "other", None, None, 0
        lt, lth = la if la is not None else (None, None)
        if la is not None:
            lt, lth = la
            fwd = find["fwd"](lt, fwd_th) if lth == fwd_th else None
            bwd = find["bwd"](lt) if lth == bwd_th else None
            pp, dp, opt = find["pp"](lt), find["dp"](lt), find["opt"](lt)
            if typ == "mem":
                cat = "memory"
                for p, v in (("fwd", fwd), ("bwd", bwd), ("pp", pp), ("dp", dp), ("opt", opt)):
                    if v is not None:
                        phase, seq = p, v
                        break
            elif typ == "comm" and dp is not None:
                cat, phase, seq = "dp_communication", "dp", dp
            elif fwd is not None:
                cat = "fwd_computation" if typ == "comp" else "fwd_communication"
                phase, seq = "fwd", fwd
            elif bwd is not None:
                cat = "bwd_computation" if typ == "comp" else "bwd_communication"
                phase, seq = "bwd", bwd
                if find_rec(lt, bwd_th) is not None:
                    rc = 1
            elif typ == "comm" and pp is not None:
                cat, phase, seq = "pp_communication", "pp", pp
            elif typ == "comp" and opt is not None:
                cat, phase, seq = "optimizer_computation", "opt", opt
        kernels.append(dict(ts=g["ts"], end=g["ts"] + g["dur"], dur=g["dur"], type=typ,
                            cat=cat, phase=phase, seq=seq, rc=rc, lt=lt, lth=lth,
                            coll=g["coll"], pg=g["pg"]))
    physics(path, gpu, launches, flow_ids)
    rank = (d.get("distributedInfo") or {}).get("rank")
    if rank is None:
        m = re.search(r"rank[_-]?(\d+)[._]", os.path.basename(path))
        rank = int(m.group(1))
    helpers = any(s[4].endswith("_step_helper") for s in slices)
    return rank, kernels, phases, helpers, dict(slices=slices, bwd_th=bwd_th)


def rank_rows(it, rank, kernels, phases, helpers):
    iv = lambda ks: [(k["ts"], k["end"]) for k in ks]
    rows = {}
    ws = min(k["ts"] for k in kernels)
    we = max(k["end"] for k in kernels)
    busy = union(iv(kernels))
    nonpp = union(iv([k for k in kernels if k["cat"] != "pp_communication"]))
    named = union(iv([k for k in kernels if k["cat"] != "other"]))
    comp = [k for k in kernels if k["type"] == "comp"]
    comm = [k for k in kernels if k["type"] == "comm"]
    rows["ranks"] = [[it, rank, "megatron", ws, we, busy, we - ws - busy, we - ws - nonpp,
                      union(iv(comp)), union(iv(comm)), overlap(iv(comp), iv(comm)),
                      "%.6f" % (named / busy if busy else 0.0)]]
    cats = {}
    for k in kernels:
        cats.setdefault(k["cat"], []).append(k)
        if k["rc"]:
            cats.setdefault(k["cat"] + "_recompute", []).append(k)
    rows["category_stats"] = [[it, rank, c, len(ks), sum(k["dur"] for k in ks), union(iv(ks))]
                              for c, ks in sorted(cats.items())]
    want = {"fwd": ("fwd_computation", "fwd_communication"),
            "bwd": ("bwd_computation", "bwd_communication"),
            "pp": ("pp_communication",), "dp": ("dp_communication",),
            "opt": ("optimizer_computation",)}
    steps = []
    for p in sorted(phases):
        for seq, s in enumerate(phases[p]):
            ks = [k for k in kernels if k["phase"] == p and k["seq"] == seq and k["cat"] in want[p]]
            if not ks:
                steps.append([it, rank, p, seq, s[0], s[1], "", "", 0, 0, 0, 0, 0])
                continue
            st, en = min(k["ts"] for k in ks), max(k["end"] for k in ks)
            a = iv([k for k in ks if k["type"] == "comp"])
            b = iv([k for k in ks if k["type"] == "comm"])
            steps.append([it, rank, p, seq, s[0], s[1], st, en, en - st, union(a), union(b),
                          overlap(a, b), len(ks)])
    rows["steps"] = steps
    gpu_span = {}
    for r in steps:
        if r[2] in ("fwd", "bwd") and r[6] != "":
            gpu_span[(r[2], r[3])] = (r[6], r[7])
    summary = dict(ws=ws, we=we, busy=busy, nonpp=nonpp, span=gpu_span,
                   nfwd=len(phases["fwd"]), helpers=helpers,
                   compute=sum(union(iv([k for k in kernels if k["cat"] == c]))
                               for c in ("fwd_computation", "bwd_computation")))
    return rows, summary


def megatron_order(P, V, nsteps, forward):
    """(chunk, micro-batch) of each fwd or bwd step in program order, by
    Megatron's interleaved schedule (V = 1: plain 1F1B order)."""
    out = []
    for k in range(nsteps):
        in_group = k % (P * V)
        c = in_group // P
        out.append((c if forward else V - 1 - c, k // (P * V) * P + in_group % P))
    return out


# docs/contracts.md §4: the op types each p2p_communication function names.
FN_DIRS = {
    "recv_forward": ["forward-recv"], "send_forward": ["forward-send"],
    "recv_backward": ["backward-recv"], "send_backward": ["backward-send"],
    "send_forward_recv_backward": ["forward-send", "backward-recv"],
    "send_backward_recv_forward": ["backward-send", "forward-recv"],
    "send_forward_recv_forward": ["forward-send", "forward-recv"],
    "send_backward_recv_backward": ["backward-send", "backward-recv"],
    "send_forward_backward_recv_forward_backward":
        ["forward-send", "backward-send", "forward-recv", "backward-recv"],
}


def ops_rows(it, rank, dp, stage, P, V, kernels, phases, ctx):
    """The what-if op rows of one rank (docs/contracts.md §4), from the text."""
    slices, bwd_th = ctx["slices"], ctx["bwd_th"]
    rows = []  # [type, start, end, mc, gmc, mb]

    def inside(lst, t, th=None):
        return t is not None and any(
            x[0] <= t <= x[1] and (th is None or x[3] == th) for x in lst)

    want = {"fwd": ("fwd_computation", "fwd_communication"),
            "bwd": ("bwd_computation", "bwd_communication"), "pp": ("pp_communication",)}

    def span(p, seq):
        ks = [k for k in kernels if k["phase"] == p and k["seq"] == seq and k["cat"] in want[p]]
        return (min(k["ts"] for k in ks), max(k["end"] for k in ks)) if ks else None

    order = {p: megatron_order(P, V, len(phases[p]), p == "fwd") for p in ("fwd", "bwd")}
    for p, typ in (("fwd", "forward-compute"), ("bwd", "backward-compute")):
        for seq in range(len(phases[p])):
            sp = span(p, seq)
            if sp:
                c, mb = order[p][seq]
                rows.append([typ, sp[0], sp[1], c, c * P + stage, mb])
    gc = max(r[2] for r in rows)
    for seq, sl in enumerate(phases["pp"]):
        sp = span("pp", seq)
        if sp:
            for typ in FN_DIRS[sl[4].rsplit(": ", 1)[-1]]:
                rows.append([typ, sp[0], sp[1], -1, -1, -1])
    fin = [x for x in slices if x[4].endswith(": finalize_model_grads")]
    finish = sorted(x for x in slices if x[4].endswith(": finish_grad_sync"))
    clip_frames = [x for x in slices if "clip_grad" in x[4] or "grad_norm" in x[4]]
    acc = {k: [] for k in ("ln", "emb", "clip", "opt")}
    overlapped, any_ag, rs_ends = False, False, []
    for k in kernels:
        lt = k["lt"]
        if k["type"] == "comm" and k["pg"] == "DATA_PARALLEL_GROUP" and "reduce_scatter" in k["coll"]:
            b = [i for i, x in enumerate(phases["bwd"])
                 if k["lth"] == bwd_th and x[0] <= lt <= x[1]]
            if b:
                mc = order["bwd"][b[0]][0]
                overlapped = True
            else:
                mc = next(i for i, x in enumerate(finish) if x[0] <= lt <= x[1])
            rows.append(["grads-reduce-scatter", k["ts"], k["end"], mc, -1, -1])
            rs_ends.append(k["end"])
        elif k["type"] == "comm" and k["pg"] == "DATA_PARALLEL_GROUP" and "allgather" in k["coll"]:
            if inside(phases["opt"], lt):
                acc["opt"].append(k)
            else:
                f = next(i for i, x in enumerate(phases["fwd"]) if x[0] <= lt <= x[1])
                rows.append(["params-all-gather", k["ts"], k["end"], order["fwd"][f][0], -1, -1])
                any_ag = True
        elif k["type"] == "comm" and k["pg"] == "TENSOR_MODEL_PARALLEL_GROUP" and inside(fin, lt):
            acc["ln"].append(k)
        elif k["type"] == "comm" and k["pg"] == "EMBEDDING_GROUP" and inside(fin, lt):
            acc["emb"].append(k)
        elif k["type"] != "mem" and inside(phases["opt"], lt) and inside(clip_frames, lt):
            acc["clip"].append(k)
        elif k["cat"] == "optimizer_computation":
            acc["opt"].append(k)
    first = min(r[1] for r in rows)

    def whole(ks):
        return (min(k["ts"] for k in ks), max(k["end"] for k in ks)) if ks else None
    for typ, key in (("optimizer-clip-main-grad", "clip"), ("optimizer", "opt")):
        if acc[key]:
            rows.append([typ, *whole(acc[key]), -1, -1, -1])
    rows.append(["gc", gc, gc, -1, -1, -1])
    ln = whole(acc["ln"])
    if not ln:
        t = max([gc] + (rs_ends if overlapped else []))
        ln = (t, t)
    rows.append(["layernorm-grads-all-reduce", ln[0], ln[1], -1, -1, -1])
    fin_end = ln[1]
    if stage in (0, P - 1):
        emb = whole(acc["emb"]) or (ln[1], ln[1])
        rows.append(["embedding-grads-all-reduce", emb[0], emb[1], -1, -1, -1])
        fin_end = max(fin_end, emb[1])
    if overlapped:
        rows.append(["separate-grads-all-reduce", fin_end, fin_end, -1, -1, -1])
    if rs_ends and not any_ag:
        rows.append(["params-all-gather", first, first, 0, -1, -1])
    rows = [r + [i] for i, r in enumerate(rows)]
    rows.sort(key=lambda r: (r[0], r[1], r[6]))
    out, seq = [], {}
    for typ, a, e, mc, gmc, mb, _ in rows:
        n = seq.get(typ, 0)
        seq[typ] = n + 1
        out.append([it, rank, dp, stage, typ, n, mc, gmc, mb, a, e])
    return out


def causality(it, ranks, ss, vpp):
    """Micro-batch b's forward on virtual stage v starts after it ended on
    v - 1; its backward on v starts after it ended on v + 1 (the receive
    waited for the data). Virtual stage v = chunk * P + stage. Without
    --vpp, traces with *_step_helper frames (interleaved) are skipped."""
    P = len(ranks)
    if vpp is None:
        if any(x["helpers"] for x in ss):
            return
        vpp = 1
    if len({x["nfwd"] for x in ss}) != 1:
        return
    where = {}  # (phase, vstage, mb) -> (start, end)
    for st in range(P):
        n = ss[st]["nfwd"]
        for ph in ("fwd", "bwd"):
            for seq, (c, b) in enumerate(megatron_order(P, vpp, n, ph == "fwd")):
                span = ss[st]["span"].get((ph, seq))
                if span:
                    where[(ph, c * P + st, b)] = (span, ranks[st])
    for (ph, v, b), (me, rank) in where.items():
        other = where.get((ph, v - 1 if ph == "fwd" else v + 1, b))
        if other:  # compare in true time: take each rank's clock offset off
            me = (me[0] - OFFSETS.get(rank, 0), me[1] - OFFSETS.get(rank, 0))
            other = ((other[0][0] - OFFSETS.get(other[1], 0),
                      other[0][1] - OFFSETS.get(other[1], 0)), other[1])
        if other and me[0] < other[0][1]:
            PHYSICS_ERRORS.append("iteration %d: %s of micro-batch %d (virtual stage %d) starts on "
                                  "rank %d at %d before rank %d ends it at %d"
                                  % (it, ph, b, v, rank, me[0], other[1], other[0][1]))


def parse_topology(path):
    groups, section, dashes = {}, None, 0
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        if line.startswith("---"):
            dashes += 1
            continue
        m = re.match(r"Group (\d+): \[(.*)\]", line)
        if m and section:
            groups.setdefault(section, []).append([int(x) for x in m.group(2).split(",") if x.strip()])
        elif not m and ":" not in line or "GROUPS" in line:
            section, dashes = line, 0
    return groups


OFFSETS = {}  # rank -> clock offset (clock_offsets.csv)


def secs(ns):
    return "%d.%09d" % (ns // 1000000000, ns % 1000000000)


def optrace_rows(it, ops, offsets, reps):
    """optrace.csv rows of one step: the representatives' ops in true time,
    seconds from the step's first start."""
    mine = [r for r in ops if r[1] in reps]
    if not mine:
        return []
    t0 = min(r[9] - offsets.get(r[1], 0) for r in mine)
    return [[dp, st, rank, i, typ, secs(a - offsets.get(rank, 0) - t0), secs(e - a), seq, mc, mb, gmc]
            for i, rank, dp, st, typ, seq, mc, gmc, mb, a, e in mine]


def why_check(tdir, pp_kernels, coll_kernels):
    """The why truth against the traces: pp_kernels[(it, rank)] the rank's
    pp_communication kernels in time order, coll_kernels[(it, rank)] its
    (pg description, start, dur) of collective kernels; times in true time."""
    bad = []
    _, rows = read_csv(os.path.join(tdir, "p2p_kernels.csv"))
    seen = {}
    for it, rank, k, start, dur, wait, transfer, who in rows:
        it, rank, k = int(it), int(rank), int(k)
        ks = pp_kernels.get((it, rank), [])
        seen[(it, rank)] = seen.get((it, rank), 0) + 1
        if k >= len(ks) or (ks[k]["ts"] - OFFSETS.get(rank, 0), ks[k]["dur"]) != (int(start), int(dur)):
            bad.append("p2p_kernels.csv: kernel %d of rank %d (iteration %d) is not the trace's" % (k, rank, it))
        if int(wait) + int(transfer) != int(dur) or not 0 <= int(wait) <= int(dur):
            bad.append("p2p_kernels.csv: kernel %d of rank %d: wait + transfer != dur" % (k, rank))
    for key, ks in pp_kernels.items():
        if len(ks) != seen.get(key, 0):
            bad.append("p2p_kernels.csv: rank %d (iteration %d) has %d p2p kernels, the truth %d"
                       % (key[1], key[0], len(ks), seen.get(key, 0)))
    _, rows = read_csv(os.path.join(tdir, "p2p.csv"))
    for r in rows:
        it, rank, k = int(r[0]), int(r[1]), int(r[2])
        ks = pp_kernels.get((it, rank), [])
        if k >= len(ks) or ks[k]["dur"] != int(r[9]) or int(r[10]) + int(r[11]) != int(r[9]):
            bad.append("p2p.csv: transfer of kernel %d of rank %d is not consistent" % (k, rank))
    _, rows = read_csv(os.path.join(tdir, "collectives.csv"))
    for it, desc, ranks, seq, size, first, last, skew, fr, lr, tied, xfer in rows:
        it, lr = int(it), int(lr)
        mine = [x for x in coll_kernels.get((it, lr), []) if x[0] == desc]
        if (str(lr) not in tied.split() or int(skew) != int(last) - int(first)
                or len(ranks.split()) != int(size)
                or (desc, int(last), int(xfer)) not in mine):
            bad.append("collectives.csv: %s %s #%s: last rank %d has no such kernel"
                       % (desc, ranks, seq, lr))
    return bad[:20]


def read_csv(path):
    with open(path, newline="") as f:
        r = list(csv.reader(f))
    return r[0], r[1:]


def main():
    args = sys.argv[1:]
    vpp = None
    if len(args) == 3 and args[1] == "--vpp":
        vpp = int(args[2])
        args = args[:1]
    if len(args) != 1:
        print("usage: truthcheck.py DIR [--vpp V]", file=sys.stderr)
        return 2
    base = args[0]
    tdir = os.path.join(base, ".truth")
    got = {k: [] for k in ("ranks", "category_stats", "steps", "pp_groups", "ops")}
    sums = {}
    ntraces = 0
    topo = parse_topology(glob.glob(os.path.join(base, "unique_parallel_groups_*.txt"))[0])
    pp_groups = next(v for k, v in topo.items() if k.startswith("PIPELINE"))
    dp_groups = next(v for k, v in topo.items() if k.startswith("DATA"))
    tp_groups = next(v for k, v in topo.items() if k.startswith("TENSOR"))
    stage_of = {r: i for g in pp_groups for i, r in enumerate(g)}
    dp_of = {r: i for g in dp_groups for i, r in enumerate(g)}
    P = len(pp_groups[0])
    # The representative of (dp, stage): tensor, context and expert rank 0,
    # i.e. the lowest rank of its cell (the ranks of a replica on one stage).
    cells = {}
    for r in stage_of:
        cells.setdefault((dp_of[r], stage_of[r]), []).append(r)
    reps = {min(v) for v in cells.values()}
    offs_path = os.path.join(tdir, "clock_offsets.csv")
    if os.path.exists(offs_path):
        OFFSETS.update((int(a), int(b)) for a, b in read_csv(offs_path)[1])
    got["optrace"] = []
    pp_kernels, coll_kernels = {}, {}
    for itdir in sorted(glob.glob(os.path.join(base, "iteration_*")),
                        key=lambda p: int(p.rsplit("_", 1)[1])):
        it = int(itdir.rsplit("_", 1)[1])
        per = []
        for path in glob.glob(os.path.join(itdir, "*.pt.trace.json*")):
            rank, kernels, phases, helpers, ctx = analyse(path)
            rows, summary = rank_rows(it, rank, kernels, phases, helpers)
            V = vpp if vpp is not None else (None if helpers else 1)
            if V is None:
                print("MISMATCH ops.csv: interleaved traces need --vpp to label chunks")
                return 1
            rows["ops"] = ops_rows(it, rank, dp_of[rank], stage_of[rank], P, V, kernels,
                                   phases, ctx)
            per.append((rank, rows))
            sums[(it, rank)] = summary
            off = OFFSETS.get(rank, 0)
            pp_kernels[(it, rank)] = sorted((k for k in kernels if k["cat"] == "pp_communication"),
                                            key=lambda k: k["ts"])
            coll_kernels[(it, rank)] = [(k["pg"], k["ts"] - off, k["dur"]) for k in kernels
                                        if k["type"] == "comm" and k["pg"]]
            ntraces += 1
        it_ops = []
        for rank, rows in sorted(per, key=lambda x: x[0]):
            for k in ("ranks", "category_stats", "steps", "ops"):
                got[k].extend(rows[k])
            it_ops.extend(rows["ops"])
        # The op trace needs every representative: check it when all are written.
        if reps <= {r for r, _ in per}:
            got["optrace"].extend(optrace_rows(it, it_ops, OFFSETS, reps))
        else:
            got.pop("optrace", None)
    its = sorted({it for it, _ in sums})
    flagged = []
    for it in its:
        for g, ranks in enumerate(pp_groups):
            if not all((it, r) in sums for r in ranks):
                continue
            gs = min(sums[(it, r)]["ws"] for r in ranks)
            ge = max(sums[(it, r)]["we"] for r in ranks)
            for stage, r in enumerate(ranks):
                s = sums[(it, r)]
                got["pp_groups"].append([it, g, stage, r, gs, ge, ge - gs - s["busy"],
                                         ge - gs - s["nonpp"]])
            causality(it, ranks, [sums[(it, r)] for r in ranks], vpp)
        for ranks in dp_groups:
            if len(ranks) < 2 or not all((it, r) in sums for r in ranks):
                continue
            med = statistics.median(sums[(it, r)]["compute"] for r in ranks)
            flagged += [[it, r] for r in ranks if sums[(it, r)]["compute"] > 1.10 * med]
    got["stragglers"] = sorted(flagged)
    bad = 0
    for msg in PHYSICS_ERRORS:
        print("PHYSICS", msg)
        bad = 1
    for msg in why_check(tdir, pp_kernels, coll_kernels):
        print("MISMATCH", msg)
        bad = 1
    for name, rows in got.items():
        header, want = read_csv(os.path.join(tdir, name + ".csv"))
        rows = [[str(x) for x in r] for r in rows]
        if name == "stragglers":
            want = sorted([int(a), int(b)] for a, b in want)
            rows = sorted([int(a), int(b)] for a, b in rows)
        if rows != want:
            bad += 1
            print("MISMATCH %s.csv (%d rows expected, %d recomputed)" % (name, len(want), len(rows)))
            shown = 0
            for i in range(max(len(rows), len(want))):
                a = want[i] if i < len(want) else None
                b = rows[i] if i < len(rows) else None
                if a != b:
                    print("  truth:      %s\n  recomputed: %s" % (a, b))
                    shown += 1
                    if shown >= 5:
                        break
    if bad:
        return 1
    print("truthcheck: %s: %d traces, every truth file matches" % (base, ntraces))
    return 0


if __name__ == "__main__":
    sys.exit(main())
