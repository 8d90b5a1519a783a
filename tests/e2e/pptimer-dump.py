#!/usr/bin/env python3
"""Megatron PP-timer dumps (ppbatch --format pp-timer) from ppsim's --json.

    pptimer-dump.py SIM.json FOLDER P V [--dp N] [--drop RANK:KEY]

Writes FOLDER/event_times_PP{P}_VPP{V|None}_TPxCPxDP_rank_{dp}_pp_rank_{r}_rank_{r+P*dp}.json
for each pipeline rank r and data-parallel rank dp < N (default 1): each
forward and backward op of device r as "{forward|backward}[-CHUNK]-MB-start"
and "-end" times (the chunk when V > 1), shifted by 0.125 ms as a real dump's
clock, and "total-execution-time" the makespan. --drop removes one key of
pipeline rank RANK (an incomplete dump). The expected times are ppsim's own.
"""
import argparse
import json
import os


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sim")
    ap.add_argument("folder")
    ap.add_argument("P", type=int)
    ap.add_argument("V", type=int)
    ap.add_argument("--dp", type=int, default=1)
    ap.add_argument("--drop")
    a = ap.parse_args()
    sim = json.load(open(a.sim))
    drop = a.drop.split(":", 1) if a.drop else None
    os.makedirs(a.folder, exist_ok=True)
    for r in range(a.P):
        ev = {}
        for o in sim["ops"]:
            if o["device"] != r:
                continue
            name = "forward" if o["type"] == "F" else "backward"
            key = f"{name}-{o['stage'] // a.P}-{o['batch']}" if a.V > 1 else f"{name}-{o['batch']}"
            ev[key + "-start"] = o["start"] + 0.125
            ev[key + "-end"] = o["end"] + 0.125
        ev["total-execution-time"] = sim["makespan"]
        if drop and r == int(drop[0]):
            del ev[drop[1]]
        vname = a.V if a.V > 1 else "None"
        for dp in range(a.dp):
            path = (f"{a.folder}/event_times_PP{a.P}_VPP{vname}_TPxCPxDP_rank_{dp}"
                    f"_pp_rank_{r}_rank_{r + a.P * dp}.json")
            with open(path, "w") as f:
                json.dump(ev, f)


if __name__ == "__main__":
    main()
