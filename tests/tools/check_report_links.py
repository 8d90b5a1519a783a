#!/usr/bin/env python3
"""Checks that ppagg's pages link only to what exists (docs/ppagg.md, "Pages").

usage: check_report_links.py OUT_DIR

Reads every *.html of OUT_DIR (index.html and the iteration pages) and
follows each relative href and src: its file must exist under OUT_DIR, and
a fragment (#r5, #pp3, #iter-15) must name an id of the page it points to.
Prints one line per broken link and exits 1 when there is one; on stderr,
"# N links checked". External URLs (a scheme) are not followed.
"""
import html.parser
import os
import sys
import urllib.parse


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links = []
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if name in ("href", "src") and value:
                self.links.append(value)


def parse(path):
    p = Page()
    with open(path, encoding="utf-8") as f:
        p.feed(f.read())
    return p


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = os.path.abspath(sys.argv[1])
    pages = {}
    bad, n = [], 0
    names = sorted(f for f in os.listdir(out) if f.endswith(".html"))
    if not names:
        sys.exit(f"check_report_links: no page in {out}")
    for name in names:
        pages[os.path.join(out, name)] = parse(os.path.join(out, name))
    for page, p in pages.items():
        for link in p.links:
            u = urllib.parse.urlsplit(link)
            if u.scheme or u.netloc:
                continue
            n += 1
            target = os.path.normpath(
                os.path.join(os.path.dirname(page), urllib.parse.unquote(u.path))
            ) if u.path else page
            if not target.startswith(out + os.sep) and target != out:
                bad.append(f"{os.path.basename(page)}: {link}: outside the report")
            elif not os.path.isfile(target):
                bad.append(f"{os.path.basename(page)}: {link}: no such file")
            elif u.fragment and target.endswith(".html"):
                if target not in pages:
                    pages[target] = parse(target)
                if u.fragment not in pages[target].ids:
                    bad.append(f"{os.path.basename(page)}: {link}: no id '{u.fragment}'")
    for line in bad:
        print(line)
    print(f"# {n} links checked", file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
