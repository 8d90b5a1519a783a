#!/usr/bin/env python3
"""check_docs.py — the README and docs/ say what is true now, and their links work.

    check_docs.py ROOT

Prints one line per problem:
  - a relative link or image of README.md or docs/*.md whose file does not
    exist, or whose #anchor is no heading of its page (GitHub's rule: the
    heading in lower case, without punctuation, blanks as '-');
  - a commit id (7 to 12 hex digits with a letter and a digit) or a date
    (YYYY-MM-DD) in a reference page, outside docs/history.md, the one
    history file; code blocks and `code spans` are examples and not checked,
    and EXTERNAL lists the commits of outside projects a page may pin;
  - "issue N" (a tracker outside the repository) in code, scripts or tests,
    and a dated history ("up to <date>", "since <date>") in a comment.
Exit status 0 when nothing is reported; the number of links and files
checked goes to stderr.
"""
import os
import re
import sys

HISTORY = "docs/history.md"
# Commits of other projects that reference pages pin, with the project.
EXTERNAL = {
    "1dd92bf": "PP-Schedule-Visualization, which ppsim --model reference reproduces",
    "8efcd7f": "ByteDance-Seed/StragglerAnalysis, the what-if analysis's reference",
}
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HASH = re.compile(r"(?<![\w/.-])([0-9a-f]{7,12})(?![\w/-])")
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
ISSUE = re.compile(r"\bissues? #?\d+", re.I)
DATED = re.compile(r"\b(up to|until|since|before|after|as of)\s+20\d\d-[01]\d-[0-3]\d", re.I)
CODE_DIRS = ("cmd", "pipeline", "storage", "scripts", "tests")
SKIP_DIRS = ("tests/fuzz/corpus", "tests/fuzz/regress", "tests/fixtures/real")
CODE_EXT = (".c", ".h", ".sh", ".py", ".awk", ".ini", "README", "Makefile")


def slug(heading):
    h = re.sub(r"`", "", heading.strip()).lower()
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def prose(text):
    """The text without fenced code blocks and code spans."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def anchors(path):
    seen, out = {}, set()
    text = re.sub(r"^```.*?^```", "", open(path, encoding="utf-8").read(), flags=re.S | re.M)
    for m in re.finditer(r"^#{1,6}\s+(.*)$", text, re.M):
        s = slug(m.group(1))
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    return out


def pages(root):
    out = ["README.md"]
    for f in sorted(os.listdir(os.path.join(root, "docs"))):
        if f.endswith(".md"):
            out.append("docs/" + f)
    return out


def check_links(root, rel, report):
    n = 0
    path = os.path.join(root, rel)
    text = re.sub(r"^```.*?^```", "", open(path, encoding="utf-8").read(), flags=re.S | re.M)
    for m in LINK.finditer(text):
        target = m.group(1)
        if re.match(r"[a-z]+:", target):
            continue
        n += 1
        file, _, frag = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        if not os.path.exists(dest):
            report(f"{rel}: link to {target}: no such file")
        elif frag and dest.endswith(".md") and frag not in anchors(dest):
            report(f"{rel}: link to {target}: no heading #{frag} there")
    return n


def check_present(root, rel, report):
    text = prose(open(os.path.join(root, rel), encoding="utf-8").read())
    for i, line in enumerate(text.splitlines(), 1):
        for m in HASH.finditer(line):
            h = m.group(1)
            if re.search(r"[a-f]", h) and re.search(r"\d", h) and h not in EXTERNAL:
                report(f"{rel}: a commit id in reference text ({h}): history goes in {HISTORY}")
        for m in DATE.finditer(line):
            report(f"{rel}: a date in reference text ({m.group(0)}): history goes in {HISTORY}")
        for m in ISSUE.finditer(line):
            report(f"{rel}: '{m.group(0)}' names a tracker outside the repository")


def check_code(root, report):
    n = 0
    for top in CODE_DIRS:
        for dirpath, dirs, files in os.walk(os.path.join(root, top)):
            relp = os.path.relpath(dirpath, root)
            if relp.startswith(SKIP_DIRS):
                dirs[:] = []
                continue
            for f in sorted(files):
                if not (f.endswith(CODE_EXT) or "." not in f):
                    continue
                rel = os.path.join(relp, f)
                try:
                    text = open(os.path.join(root, rel), encoding="utf-8").read()
                except (UnicodeDecodeError, OSError):
                    continue
                n += 1
                for m in ISSUE.finditer(text):
                    line = text.count("\n", 0, m.start()) + 1
                    report(f"{rel}:{line}: '{m.group(0)}' names a tracker outside the repository")
                for m in DATED.finditer(text):
                    line = text.count("\n", 0, m.start()) + 1
                    report(f"{rel}:{line}: a dated history ('{m.group(0)}'): say what is checked now")
    return n


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_docs.py ROOT")
    root = sys.argv[1]
    problems = []
    links = 0
    for rel in pages(root):
        links += check_links(root, rel, problems.append)
        if rel != HISTORY:
            check_present(root, rel, problems.append)
    files = check_code(root, problems.append)
    for p in problems:
        print(p)
    print(f"# {links + files} links and files checked ({links} links of README.md and docs/, "
          f"{files} files of code and tests)", file=sys.stderr)
    return 1 if problems else 0


sys.exit(main())
