#!/usr/bin/env python3
"""check_sql.py — no SQL is ever built from trace or path text.

    check_sql.py ROOT

Scans cmd/ pipeline/ storage/ *.c and prints one line per violation:
  - a sqlite3_prepare*/sqlite3_exec call whose SQL argument is not provably
    constant: a string literal, a macro or `const char` object initialised
    with literals in the same file, a function-like macro made of literals
    and its parameters given constants, an element or member of a `static const`
    table, a parameter of a static helper whose every call in the file
    passes such a constant, a parameter of a function the files share
    (storage/db_read.c's db_read_prepare()) whose every call in cmd/
    pipeline/ storage/ passes one in its own file, or an element of the sql member of a `const
    struct db_write_table *` (storage/db_write.c's writer) when every
    struct db_write_table in the tree is a `static const` whose sql is such
    a constant;
  - any use of sqlite3_mprintf/vmprintf/snprintf/sqlite3_str_* (SQL text
    assembled at run time);
  - a printf-style format string that holds an SQL keyword and a %
    conversion (SQL built with snprintf/strbuf_addf).
Exit status 0 when there is nothing to report.
"""
import os
import re
import sys

CALL = re.compile(r"\b(sqlite3_prepare(?:_v2|_v3|16(?:_v2|_v3)?)?|sqlite3_exec)\s*\(")
LIT = re.compile(r'^(\s*"(?:[^"\\]|\\.)*"\s*)+$', re.S)
BANNED = re.compile(r"\b(sqlite3_v?mprintf|sqlite3_v?snprintf|sqlite3_str_\w+)\s*\(")
FMT = re.compile(r"\b(v?snprintf|v?asprintf|strbuf_v?addf|fprintf)\s*\(([^;]*)", re.S)
SQLKW = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|PRAGMA|ATTACH|REPLACE\s+INTO)\b")


def strip_comments(src):
    src = re.sub(r"/\*.*?\*/", lambda m: " " * len(m.group(0)) if "\n" not in m.group(0)
                 else "\n" * m.group(0).count("\n"), src, flags=re.S)
    src = re.sub(r"//[^\n]*", "", src)
    return src.replace("\\\n", " \n")


def args_of(src, start, stop=None):
    """Split the argument list that starts after the '(' at src[start-1]
    (or, with stop, the text up to the top-level stop character)."""
    depth, i, cur, out, s = 0, start, [], [], None
    while i < len(src):
        c = src[i]
        if s:
            cur.append(c)
            if c == "\\":
                cur.append(src[i + 1])
                i += 1
            elif c == s:
                s = None
        elif c in "\"'":
            s = c
            cur.append(c)
        elif c in "([{":
            depth += 1
            cur.append(c)
        elif c in ")]}":
            if depth == 0:
                out.append("".join(cur).strip())
                return out
            depth -= 1
            cur.append(c)
        elif stop and c == stop and depth == 0:
            out.append("".join(cur).strip())
            return out
        elif c == "," and depth == 0 and not stop:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    return out


TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[A-Za-z_]\w*|\d+|\S')


def macro_constant(name, src, seen):
    m = re.search(r"^\s*#\s*define\s+%s\s+(.*)$" % re.escape(name), src, re.M)
    return bool(m) and name not in seen and constant(m.group(1), src, seen + (name,))


def fmt_args_constant(args, src, seen):
    """snprintf(buf, size, "literal", ARGS...): literal format, constant args."""
    if len(args) < 3 or not LIT.match(args[2]):
        return False
    return all(re.match(r"^\d+$", a) or re.match(r"^[A-Z][A-Z0-9_]*$", a) and
               (macro_constant(a, src, seen) or
                re.search(r"\b%s\s*=\s*\d+" % a, src)) for a in args[3:])


def items_constant(init, src, seen):
    items = [x for x in args_of(init.strip()[1:] + ")", 0) if x]
    items = [re.sub(r"^(\[[^\]]*\]|\.\w+)\s*=\s*", "", x) for x in items]
    return all(constant(x, src, seen) for x in items)


def stringify_macros(src):
    """Function-like macros that turn their argument into a literal (#x),
    directly or through another such macro: STR(SCHEMA_VERSION)."""
    names, defs = set(), re.findall(r"^\s*#\s*define\s+(\w+)\((\w+)\)\s+(.*)$", src, re.M)
    for _ in range(3):
        for name, arg, body in defs:
            body = body.strip()
            if body == "#" + arg or re.match(r"^(\w+)\(\s*%s\s*\)$" % arg, body) and \
                    re.match(r"^(\w+)", body).group(1) in names:
                names.add(name)
    return names


# Set by main(): each .c file of the tree as (its text, its text with the
# headers), comments stripped: where the calls of a shared function are.
TREE = []

# Set by main(): every struct db_write_table of the tree is a static const
# whose sql member is a constant (write_table_violations() finds none).
WRITE_TABLES_CONSTANT = False
WRITE_TABLE = re.compile(r"\bstruct\s+db_write_table\b")


def write_table_violations(path, src):
    """Each struct db_write_table of src that is neither a pointer to const
    nor a static const initialised with constant SQL: (line, text)."""
    out = []
    for m in WRITE_TABLE.finditer(src):
        line = src.count("\n", 0, m.start()) + 1
        after = src[m.end():]
        if re.match(r"\s*\*", after) and re.search(r"\bconst\s+$", src[:m.start()]):
            continue
        d = re.match(r"\s*(\w+)\s*=\s*\{", after)
        if d and re.search(r"\bstatic\s+const\s+$", src[:m.start()]):
            items = args_of(after[d.end():] + ")", 0)
            named = [re.sub(r"^\.sql\s*=\s*", "", x) for x in items if re.match(r"^\.sql\s*=", x)]
            first = named[0] if named else items[0] if items and not items[0].startswith(".") else ""
            if first and constant(first, src):
                continue
        out.append((line, src[m.start():m.start() + 60].split("\n")[0]))
    return out


def constant(expr, src, seen=()):
    """True when expr is SQL text fixed at compile time (see the module doc)."""
    expr = expr.strip()
    w = re.match(r"^(\w+)\s*->\s*sql\s*\[[^\]]*\]$", expr)
    if w and WRITE_TABLES_CONSTANT and \
            re.search(r"\bconst\s+struct\s+db_write_table\s*\*\s*%s\b" % w.group(1), src):
        return True
    for name in stringify_macros(src):
        expr = re.sub(r"\b%s\s*\(\s*\w+\s*\)" % name, '""', expr)
    while expr.startswith("(") and expr.endswith(")"):
        expr = expr[1:-1].strip()
    if expr.startswith("{"):
        return items_constant(expr, src, seen)
    if expr == "NULL" or re.match(r"^\d+$", expr) or LIT.match(expr):
        return True
    # NAME(args) of a function-like macro whose body is literals and its
    # parameters: constant when every argument is
    call = re.match(r"^([A-Za-z_]\w*)\s*\((.*)\)$", expr, re.S)
    if call and call.group(1) not in seen:
        d = re.search(r"^\s*#\s*define\s+%s\(([\w\s,]*)\)(.*)$" % re.escape(call.group(1)),
                      src, re.M)
        if d:
            params = [x.strip() for x in d.group(1).split(",") if x.strip()]
            # The body's continued lines end in the blank strip_comments()
            # left of their backslash (clang-format leaves no other).
            text, end = d.group(2), d.end()
            while text.endswith(" ") and end < len(src):
                nxt = src.find("\n", end + 1)
                nxt = len(src) if nxt < 0 else nxt
                text, end = text + src[end + 1:nxt], nxt
            body = TOKEN.findall(text)
            args = args_of(call.group(2) + ")", 0)
            return len(args) == len(params) and \
                all(t.startswith('"') or t in params for t in body) and \
                all(constant(a, src, seen + (call.group(1),)) for a in args)
    toks = TOKEN.findall(expr)
    # "text" MACRO "text": literals and macros that expand to literals
    if len(toks) > 1 and all(t.startswith('"') or re.match(r"^[A-Za-z_]\w*$", t) for t in toks):
        return all(t.startswith('"') or macro_constant(t, src, seen) for t in toks)
    m = re.match(r"^(\*|&)?\s*([A-Za-z_]\w*)\s*(\[[^\]]*\])?\s*((\.|->)\s*\w+)?$", expr)
    if not m:
        return False
    root = m.group(2)
    if root in seen:
        return False
    seen = seen + (root,)
    if macro_constant(root, src, seen[:-1]):
        return True
    # const char *const X[] = {...}; const char X[] = "..."; const char *s = Y[i]
    for d in re.finditer(r"\bconst\s+char\s*(?:\*\s*(?:const\s*)?)*%s\s*(\[[^\]]*\])*\s*=\s*"
                         % re.escape(root), src):
        init = args_of(src + ")", d.end(), stop=";")
        return constant(init[0] if init else "", src, seen)
    # a const table of structs (their string fields are literals)
    if re.search(r"\bconst\s+struct\s+\w+\s*(\{[^}]*\})?\s*%s\s*\[" % re.escape(root), src):
        return True
    # a local buffer only ever filled by snprintf with constant arguments
    if re.search(r"\bchar\s+%s\s*\[[^\]]*\]\s*;" % re.escape(root), src):
        writes = list(re.finditer(r"\b(\w+)\s*\(\s*%s\s*," % re.escape(root), src))
        return bool(writes) and all(
            c.group(1) == "snprintf" and
            fmt_args_constant(args_of(src, src.index("(", c.start()) + 1), src, seen)
            for c in writes)
    # a parameter of a static helper: every call site must pass a constant
    fn = re.search(r"\bstatic\s+[\w\s\*]+?\b(\w+)\s*\(([^)]*\bconst\s+char\s*\*\s*%s\b[^)]*)\)\s*\{"
                   % re.escape(root), src)
    if fn:
        name, params = fn.group(1), fn.group(2)
        idx = [p.strip() for p in params.split(",")]
        pos = next(i for i, p in enumerate(idx) if re.search(r"\b%s$" % re.escape(root), p))
        calls = [c for c in re.finditer(r"\b%s\s*\(" % re.escape(name), src)
                 if c.start() != fn.start(1)]
        if not calls:
            return False
        for c in calls:
            a = args_of(src, c.end())
            if len(a) <= pos or not constant(a[pos], src, seen):
                return False
        return True
    # a parameter of a function the files share: every call in the tree,
    # each checked in its own file, must pass a constant
    fn = re.search(r"^(?!static\b)\w[\w\s\*]*?\b(\w+)\s*\(([^)]*\bconst\s+char\s*\*\s*%s\b"
                   r"[^)]*)\)\s*\{" % re.escape(root), src, re.M)
    if fn and fn.group(1) not in seen:
        name, params = fn.group(1), fn.group(2)
        idx = [p.strip() for p in params.split(",")]
        pos = next(i for i, p in enumerate(idx) if re.search(r"\b%s$" % re.escape(root), p))
        n = 0
        for text, full in TREE:
            for c in re.finditer(r"\b%s\s*\(" % re.escape(name), text):
                if full == src and c.start() == fn.start(1):
                    continue  # the definition
                a = args_of(text, c.end())
                if len(a) <= pos or not constant(a[pos], full, seen + (name,)):
                    return False
                n += 1
        return n > 0
    return False


def sources(root, subs, ext):
    """Every file ending in ext below root/sub (recursively), as a path
    relative to root, in a stable order."""
    out = []
    for sub in subs:
        for dirpath, dirs, files in os.walk(os.path.join(root, sub)):
            dirs.sort()
            out += [os.path.relpath(os.path.join(dirpath, f), root)
                    for f in sorted(files) if f.endswith(ext)]
    return out


def main():
    root = sys.argv[1]
    bad = 0
    headers = ""
    for path in sources(root, ("pipeline", "storage"), ".h"):
        headers += strip_comments(open(os.path.join(root, path), errors="replace").read())
    nprep = 0
    for path in sources(root, ("cmd", "pipeline", "storage"), ".c"):
        src = strip_comments(open(os.path.join(root, path), errors="replace").read())
        TREE.append((src, src + "\n" + headers))
    global WRITE_TABLES_CONSTANT
    WRITE_TABLES_CONSTANT = True
    for path in sources(root, ("cmd", "pipeline", "storage"), ".c"):
        src = strip_comments(open(os.path.join(root, path), errors="replace").read())
        for line, text in write_table_violations(path, src + "\n" + headers):
            if line <= src.count("\n") + 1:
                print("%s:%d: a db_write_table whose SQL is not a static constant: %s"
                      % (path, line, text))
                bad += 1
                WRITE_TABLES_CONSTANT = False
    for path in sources(root, ("cmd", "pipeline", "storage"), ".c"):
        src = strip_comments(open(os.path.join(root, path), errors="replace").read())
        scan, src = src, src + "\n" + headers
        for m in CALL.finditer(scan):
            line = src.count("\n", 0, m.start()) + 1
            a = args_of(src, m.end())
            if len(a) < 2:
                continue
            nprep += 1
            if not constant(a[1], src):
                print("%s:%d: %s with SQL that is not a constant: %s"
                      % (path, line, m.group(1), a[1][:80]))
                bad += 1
        for m in BANNED.finditer(scan):
            print("%s:%d: %s builds SQL text at run time"
                  % (path, src.count("\n", 0, m.start()) + 1, m.group(1)))
            bad += 1
        for m in FMT.finditer(scan):
            fmt = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(2)))
            if SQLKW.search(fmt) and re.search(r"%[-+ #0-9.]*[a-z]", fmt) and \
                    not fmt_args_constant(args_of(src, src.index("(", m.start()) + 1), src, ()):
                print("%s:%d: SQL built with %s: \"%s\""
                      % (path, src.count("\n", 0, m.start()) + 1, m.group(1), fmt[:80]))
                bad += 1
    print("# %d sqlite3_prepare/exec calls checked" % nprep, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
