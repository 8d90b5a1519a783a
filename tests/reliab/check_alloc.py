#!/usr/bin/env python3
"""check_alloc.py — allocation failure ends the process (docs/contracts.md §7).

    check_alloc.py ROOT

Scans cmd/ pipeline/ storage/ *.c and *.h, except pipeline/util/pp.[ch]
(which implement xmalloc() and the others and define PP_ENOMEM), and prints
one line per violation:
  - a call of malloc, calloc, realloc, strdup, strndup, posix_memalign,
    aligned_alloc, asprintf or vasprintf: library code
    allocates with xmalloc/xcalloc/xrealloc/xstrdup/xstrndup, which never
    return NULL;
  - a use of PP_ENOMEM: nothing of ours reports it, so nothing checks it.
Comments and string literals are not code. A line that truly needs one of
them carries a comment "pp-alloc-ok: <why>" (the reason is required).
Exit status 0 when there is nothing to report; the number of files checked
goes to stderr.
"""
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_sql import sources, strip_comments  # noqa: E402

RAW = re.compile(
    r"(?<![\w.>])(malloc|calloc|realloc|strdup|strndup|posix_memalign|aligned_alloc|v?asprintf)\s*\("
)
ENOMEM = re.compile(r"\bPP_ENOMEM\b")
STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"' + r"|'(?:[^'\\\n]|\\.)+'")
EXEMPT = re.compile(r"pp-alloc-ok:[ \t]*\w")
IMPLEMENTATION = {os.path.join("pipeline", "util", "pp.c"), os.path.join("pipeline", "util", "pp.h")}


def main():
    root = sys.argv[1]
    bad = nfiles = 0
    for path in sources(root, ("cmd", "pipeline", "storage"), ".c") + \
            sources(root, ("cmd", "pipeline", "storage"), ".h"):
        if path in IMPLEMENTATION:
            continue
        nfiles += 1
        raw = open(os.path.join(root, path), errors="replace").read()
        # Same line count as raw: comments keep their newlines, literals
        # never span lines.
        code = STRING.sub('""', strip_comments(raw)).split("\n")
        lines = raw.split("\n")
        for i, line in enumerate(code):
            if EXEMPT.search(lines[i] if i < len(lines) else ""):
                continue
            for m in RAW.finditer(line):
                print("%s:%d: %s() can return NULL: use x%s() (docs/contracts.md §7)"
                      % (path, i + 1, m.group(1), m.group(1)))
                bad += 1
            if ENOMEM.search(line):
                print("%s:%d: PP_ENOMEM: an allocation failure ends the process, nothing "
                      "reports or checks it (docs/contracts.md §7)" % (path, i + 1))
                bad += 1
    print("# %d source files checked" % nfiles, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
