#!/usr/bin/env python3
"""check_layers.py — every #include stays within the layers it may use, and
the files of one folder do not depend on each other in a cycle.

    check_layers.py ROOT

The rules are two blocks of ROOT/docs/architecture.md. The ```layers block
has one line per folder, "folder: folders it may include from". A folder is
a directory of ROOT/pipeline/ or ROOT/storage. The ```cycles block names
the folders whose files may still depend on each other in a cycle. Prints
one line per violation:
  - a file that includes a header of a folder not listed for its own;
  - a folder-qualified include ("x/y.h") whose header does not exist;
  - a source folder that the rule does not mention (a new folder needs a
    rule before it has code);
  - in a folder not listed in ```cycles: headers that include each other
    (a.h -> b.h -> a.h), or .c files that depend on each other, a.c using a
    function or variable that b.c defines (declared in a header of the
    folder) and b.c, directly or through other files, one of a.c's. All the
    files of a folder share its headers, so their includes alone cannot show
    such a cycle; the names each file defines and uses do;
  - a folder listed in ```cycles that has no cycle any more.
cmd/ and tests/ may include anything. Exit status 0 when nothing is
reported; the number of includes checked goes to stderr.
"""
import os
import re
import sys

INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# A definition with external linkage, as clang-format lays it out: at the
# start of a line, not static, the name before "(" (a function, if a body
# follows) or before "[...] =", "=" or ";" (a variable).
FUNC = re.compile(r'^(?!static\b|typedef\b|extern\b)[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)\s*\(', re.M)
VAR = re.compile(r'^(?!static\b|typedef\b|extern\b|struct\s+\w+\s*[{;]|enum\b|union\b)'
                 r'[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)\s*(?:\[[^\]\n]*\]\s*)*(?:=|;)', re.M)
WORD = re.compile(r'[A-Za-z_]\w*')
NOISE = re.compile(r'__attribute__\s*\(\([^()]*(?:\([^()]*\)[^()]*)*\)\)[ \t]*|/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def block(text, name):
    m = re.search(r"```%s\n(.*?)```" % name, text, re.S)
    if not m:
        sys.exit("check_layers: no ```%s block in docs/architecture.md" % name)
    return m.group(1)


def rules(root):
    text = open(os.path.join(root, "docs", "architecture.md")).read()
    out = {}
    for line in block(text, "layers").splitlines():
        if line.strip():
            name, allowed = line.split(":", 1)
            out[name.strip()] = set(allowed.split())
    return out


def cycle_exceptions(root):
    text = open(os.path.join(root, "docs", "architecture.md")).read()
    return set(block(text, "cycles").split())


def code(src):
    """C source without comments, strings and characters."""
    return NOISE.sub(lambda m: '""' if m.group(0)[0] in "\"'" else
                     "" if m.group(0)[0] == "_" else " ", src)


def definitions(src):
    """Names a .c file defines with external linkage."""
    out = set()
    for m in FUNC.finditer(src):
        depth, i = 1, m.end()
        while i < len(src) and depth:
            depth += {"(": 1, ")": -1}.get(src[i], 0)
            i += 1
        rest = src[i:].lstrip()
        if rest.startswith("{"):
            out.add(m.group(1))
    for m in VAR.finditer(src):
        line = src[m.start():src.find("\n", m.start())]
        if "(" not in line.split("=")[0]:
            out.add(m.group(1))
    return out


def strongly_connected(graph):
    """The components of more than one node (Tarjan), each sorted."""
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return comps


def one_cycle(graph, comp):
    """A shortest cycle through the first node of comp: [a, b, ..., a]."""
    start, inside = comp[0], set(comp)
    prev, todo = {start: None}, [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(graph[v]):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return [start] + path[::-1][1:] + [start] if len(path) > 1 else [start, v, start]
            if w in inside and w not in prev:
                prev[w] = v
                todo.append(w)
    return comp + [comp[0]]


def folder_cycles(root, name, rel):
    """Lines describing the cycles between the files of one folder."""
    files = sorted(f for f in os.listdir(os.path.join(root, rel)) if f.endswith((".c", ".h")))
    raw = {f: open(os.path.join(root, rel, f), errors="replace").read() for f in files}
    src = {f: code(raw[f]) for f in files}
    out = []
    # Headers that include each other.
    inc = {f: set() for f in files if f.endswith(".h")}
    for f in inc:
        for m in INC.finditer(raw[f]):
            target = m.group(1)
            if target.startswith(name + "/"):
                target = target[len(name) + 1:]
            if target in inc:
                inc[f].add(target)
    for comp in strongly_connected(inc):
        out.append("%s/: headers include each other: %s" % (rel, " -> ".join(one_cycle(inc, comp))))
    # .c files that use each other's definitions.
    declared = set()
    for f in files:
        if f.endswith(".h"):
            declared |= set(WORD.findall(src[f]))
    cs = [f for f in files if f.endswith(".c")]
    defs = {f: definitions(src[f]) & declared for f in cs}
    words = {f: set(WORD.findall(src[f])) for f in cs}
    uses = {a: {b: sorted(defs[b] & words[a]) for b in cs if b != a and defs[b] & words[a]}
            for a in cs}
    graph = {a: set(uses[a]) for a in cs}
    for comp in strongly_connected(graph):
        path = one_cycle(graph, comp)
        steps = ", ".join("%s uses %s of %s" % (a, uses[a][b][0], b)
                          for a, b in zip(path, path[1:]))
        out.append("%s/: files depend on each other in a cycle (%s): %s"
                   % (rel, ", ".join(comp), steps))
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
    tangled = cycle_exceptions(root)
    dirs = folders(root)
    bad = checked = 0
    for name, rel in dirs.items():
        found = folder_cycles(root, name, rel)
        if name in tangled:
            if not found:
                print("%s/: listed in the cycles block of docs/architecture.md but has no "
                      "cycle: take it off the list" % rel)
                bad += 1
            continue
        for line in found:
            print(line)
            bad += 1
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
