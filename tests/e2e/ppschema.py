"""ppschema.py — the pptrace schema for test databases written by Python
helpers: the SQL string literals of schema_sql[] in storage/schema.c (the one
definition), executed in order, and the code tables' names."""
import os
import sqlite3

CATS = ["fwd_computation", "fwd_communication", "bwd_computation", "bwd_communication",
        "pp_communication", "dp_communication", "optimizer_computation", "memory", "other",
        "computation", "communication", "bwd_computation_recompute", "bwd_communication_recompute"]
PHASES = {None: 0, "fwd": 1, "bwd": 2, "pp": 3, "dp": 4, "opt": 5}
TYPES = {"comp": 0, "comm": 1, "mem": 2}


def schema_sql():
    """The string literals of schema_sql[] in storage/schema.c, joined per statement."""
    import re
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    src = open(os.path.join(root, "storage", "schema.c")).read()
    body = src[src.index("schema_sql[] = {"):]
    body = body[:body.index("\n};")]
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    stmts, cur = [], ""
    for tok in re.findall(r'"((?:[^"\\]|\\.)*)"|(,)', body):
        if tok[1]:
            if cur:
                stmts.append(cur)
            cur = ""
        else:
            cur += tok[0].replace('\\"', '"')
    if cur:
        stmts.append(cur)
    return stmts


def create(path):
    """A new, empty database at path with the current schema."""
    if os.path.exists(path):
        os.unlink(path)
    db = sqlite3.connect(path)
    for stmt in schema_sql():
        db.execute(stmt)
    db.execute("PRAGMA user_version = 1")
    return db
