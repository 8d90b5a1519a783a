#!/usr/bin/env python3
"""check_layers.py — every #include stays within the layers it may use.

    check_layers.py ROOT

The rule is the ```layers block of ROOT/docs/architecture.md: one line per
folder, "folder: folders it may include from". A folder is a directory of
ROOT/pipeline/ or ROOT/storage. Prints one line per violation:
  - a file that includes a header of a folder not listed for its own;
  - a folder-qualified include ("x/y.h") whose header does not exist;
  - a source folder that the rule does not mention (a new folder needs a
    rule before it has code).
cmd/ and tests/ may include anything. Exit status 0 when nothing is
reported; the number of includes checked goes to stderr.
"""
import os
import re
import sys

INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def rules(root):
    text = open(os.path.join(root, "docs", "architecture.md")).read()
    m = re.search(r"```layers\n(.*?)```", text, re.S)
    if not m:
        sys.exit("check_layers: no ```layers block in docs/architecture.md")
    out = {}
    for line in m.group(1).splitlines():
        if line.strip():
            name, allowed = line.split(":", 1)
            out[name.strip()] = set(allowed.split())
    return out


def folders(root):
    """Folder name -> its path relative to root."""
    out = {"storage": "storage"}
    pdir = os.path.join(root, "pipeline")
    for d in sorted(os.listdir(pdir)) if os.path.isdir(pdir) else []:
        if os.path.isdir(os.path.join(pdir, d)):
            out[d] = os.path.join("pipeline", d)
    return out


def main():
    root = sys.argv[1]
    allow = rules(root)
    dirs = folders(root)
    bad = checked = 0
    for name, rel in dirs.items():
        if name not in allow:
            print("%s/: no rule in docs/architecture.md" % rel)
            bad += 1
            continue
        for fn in sorted(os.listdir(os.path.join(root, rel))):
            if not fn.endswith((".c", ".h")):
                continue
            path = os.path.join(rel, fn)
            src = open(os.path.join(root, path), errors="replace").read()
            for m in INC.finditer(src):
                inc = m.group(1)
                line = src.count("\n", 0, m.start()) + 1
                checked += 1
                if "/" not in inc:
                    target = name  # same folder (or a system-like header)
                    if not os.path.exists(os.path.join(root, rel, inc)):
                        continue
                else:
                    target = inc.split("/")[0]
                    if target not in dirs or not os.path.exists(
                            os.path.join(root, dirs[target], inc.split("/", 1)[1])):
                        print("%s:%d: includes \"%s\", which does not exist"
                              % (path, line, inc))
                        bad += 1
                        continue
                if target not in allow[name]:
                    print("%s:%d: %s/ may not include from %s/ (\"%s\"; docs/architecture.md)"
                          % (path, line, name, target, inc))
                    bad += 1
    print("# %d includes checked in %d folders" % (checked, len(dirs)), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
