#!/usr/bin/env python3
"""truthdb.py — loads a ppgen tree's truth (.truth/ranks.csv,
category_stats.csv, steps.csv) into a pptrace database, as ppbatch would
store a perfect analysis (no kernels). ppagg's numbers on it must equal the
truth's pp_groups.csv and stragglers.csv: a test of ppagg against ppgen's
independent arithmetic, without ppbatch's analysis (ppbatch only creates
the empty database).

usage: truthdb.py TRUTH_DIR DB
"""
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ppschema import CATS, PHASES, create  # noqa: E402

truth, path = sys.argv[1], sys.argv[2]
db = create(path)


def rows(name):
    with open(os.path.join(truth, name)) as f:
        yield from csv.DictReader(f)


def val(v):
    return None if v == "" else int(v)


ids = {}
for r in rows("ranks.csv"):
    tid = len(ids) + 1
    ids[(r["iteration"], r["rank"])] = tid
    it = int(r["iteration"])
    db.execute("INSERT INTO traces(id, path, folder, iteration, rank, bytes, status, mode, window_start_ns,"
               " window_end_ns, gpu_busy_ns, idle_ns, bubble_ns, comp_busy_ns, comm_busy_ns, overlap_ns,"
               " coverage) VALUES (?,?,?,?,?,0,0,?,?,?,?,?,?,?,?,?,?)",
               (tid, f"/truth/iteration_{it}/rank_{r['rank']}.json", f"iteration_{it}", it, int(r["rank"]),
                0 if r["mode"] == "megatron" else 1, val(r["window_start_ns"]), val(r["window_end_ns"]),
                val(r["gpu_busy_ns"]), val(r["idle_ns"]), val(r["bubble_ns"]), val(r["comp_busy_ns"]),
                val(r["comm_busy_ns"]), val(r["overlap_ns"]), float(r["coverage"] or 0)))
for r in rows("category_stats.csv"):
    db.execute("INSERT INTO category_t VALUES (?,?,?,?,?)",
               (ids[(r["iteration"], r["rank"])], CATS.index(r["category"]), int(r["kernels"]),
                int(r["sum_ns"]), int(r["busy_ns"])))
for r in rows("steps.csv"):
    db.execute("INSERT INTO step_t(trace_id, phase, seq, cpu_start_ns, cpu_end_ns, start_ns, end_ns, comp_ns,"
               " comm_ns, overlap_ns, kernels) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
               (ids[(r["iteration"], r["rank"])], PHASES[r["phase"]], int(r["seq"]), val(r["cpu_start_ns"]),
                val(r["cpu_end_ns"]), val(r["start_ns"]), val(r["end_ns"]), int(r["comp_ns"]),
                int(r["comm_ns"]), int(r["overlap_ns"]), int(r["kernels"])))
db.commit()
