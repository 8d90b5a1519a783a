#!/usr/bin/env python3
"""check_hostile.py — judge a ppbatch run over a mkhostile.py tree.

    check_hostile.py BASE DB STDERR_FILE

Prints one line per check: "PASS<TAB>what" or "FAIL<TAB>what<TAB>why".
Reads the database with bound parameters only (paths contain newlines).
"""
import ast
import os
import sqlite3
import sys


def main():
    base, db, errfile = sys.argv[1:4]
    stderr = open(errfile, "rb").read().decode("utf-8", "replace")
    cases = []
    with open(os.path.join(base, "cases.tsv")) as f:
        for line in f:
            rank, expect, fname, what = line.rstrip("\n").split("\t")
            cases.append((int(rank), expect, ast.literal_eval(fname), what))
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    con.text_factory = lambda b: b.decode("utf-8", "surrogateescape")
    rows = {}
    for rank, status, error, path in con.execute(
            "SELECT rank, status, error, path FROM ranks WHERE iteration = ?", (1,)):
        rows.setdefault(rank, []).append((status, error, path))

    def out(ok, what, why=""):
        print("%s\t%s\t%s" % ("PASS" if ok else "FAIL", what, why.replace("\n", "\\n")[:300]))

    for rank, expect, fname, what in cases:
        r = rows.get(rank, [])
        label = "rank %d: %s (%s)" % (rank, what, expect)
        if len(r) > 1:
            out(False, label, "%d rows for one file: %r" % (len(r), r))
            continue
        if not r:
            if expect == "fail" and fname in stderr:
                out(True, label + " [reported on stderr]")
            else:
                out(False, label, "no ranks row and no error naming %r on stderr" % fname)
            continue
        status, error, path = r[0]
        if path is None or not path.endswith(fname):
            out(False, label, "path %r does not end with the file name %r" % (path, fname))
        elif expect == "ok":
            out(status == "ok", label, "status %r error %r" % (status, error))
        elif expect == "fail":
            out(status == "failed" and bool(error), label,
                "status %r error %r" % (status, error))
        else:
            good = status in ("ok", "partial") or (status == "failed" and bool(error))
            out(good, label + " -> %s%s" % (status, ": " + error[:80] if error else ""),
                "status %r error %r" % (status, error))

    # The two valid traces around the hostile ones: exact results.
    for rank in (0, 99):
        n = con.execute("SELECT count(*), coalesce(sum(dur_ns), -1) FROM kernels "
                        "WHERE iteration = ? AND rank = ?", (1, rank)).fetchone()
        out(tuple(n) == (1, 100000), "rank %d: one kernel of 100000 ns stored" % rank,
            "got %r" % (n,))
    # A kernel name full of SQL and quoting hazards is stored verbatim.
    names = [r[0] for r in con.execute(
        "SELECT name FROM kernels WHERE iteration = ? AND rank = ?", (1, 13))]
    out(len(names) == 1 and names[0].startswith('q"uo\\te\nnew\nline\ttab\x01ctl ') and
        "\ufffd\ufffd\ufffd\ufffd bad utf8 \ufffd '; DROP TABLE kernels; -- " in names[0],
        "rank 13: hostile kernel name stored with bound values, bad bytes as U+FFFD",
        "names %r" % names)
    bad = [r for r in con.execute("SELECT DISTINCT name FROM kernels")
           if any("\udc80" <= ch <= "\udcff" for ch in r[0] or "")]
    out(not bad, "every stored kernel name is valid UTF-8 (bad bytes become U+FFFD)",
        "names %r" % bad[:3])
    ok = con.execute("PRAGMA integrity_check").fetchone()[0]
    out(ok == "ok", "database integrity_check", ok)


if __name__ == "__main__":
    main()
