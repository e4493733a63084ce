"""Check the built documentation site for what a reader should never see.

    python tools/check_docs.py SITE_DIR

Run by ``tools/build_docs.sh`` after Sphinx (so CI checks every build);
exit status 1 and one line per problem if

- an API summary line (autosummary's tables) is cut mid-citation: more
  ``(`` than ``)``, or ending in an abbreviation such as "Alg." or "Thm.";
- a gallery or performance page shows the repr of a matplotlib object
  (``<matplotlib.legend.Legend object at 0x...>``);
- a page speaks of "this README" (the site includes the README's
  sections: on the site they are not the README).

Standard library only (``tests/test_docs.py`` runs it on small pages).
"""

from __future__ import annotations

import html
import pathlib
import re
import sys
from html.parser import HTMLParser

#: A summary line ending in one of these was cut at its period.
ABBREVIATIONS = ("Alg.", "Algs.", "Sec.", "Secs.", "Thm.", "eq.", "eqs.", "Eq.", "Fig.",
                 "Figs.", "e.g.", "i.e.", "cf.", "vs.")


class _Summaries(HTMLParser):
    """The text of the second cell of each row of autosummary's tables."""

    def __init__(self):
        super().__init__()
        self.depth = 0      # inside an autosummary table: its nesting depth
        self.cell = -1      # index of the current cell in its row
        self.text = None    # the summary being read
        self.found = []

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            classes = (dict(attrs).get("class") or "").split()
            if self.depth or "autosummary" in classes:
                self.depth += 1
        elif self.depth and tag == "tr":
            self.cell = -1
        elif self.depth and tag == "td":
            self.cell += 1
            if self.cell == 1:
                self.text = []

    def handle_endtag(self, tag):
        if tag == "table" and self.depth:
            self.depth -= 1
        elif self.depth and tag == "td" and self.text is not None:
            self.found.append(" ".join("".join(self.text).split()))
            self.text = None

    def handle_data(self, data):
        if self.text is not None:
            self.text.append(data)


def cut_summary(text: str) -> bool:
    """Whether an API summary line was cut mid-citation."""
    return text.count("(") > text.count(")") or text.endswith(
        tuple(" " + a for a in ABBREVIATIONS))


def problems(site: pathlib.Path) -> list[str]:
    """One line per problem found in the HTML pages under `site`."""
    out = []
    for page in sorted(site.rglob("*.html")):
        name = page.relative_to(site).as_posix()
        text = page.read_text(encoding="utf-8")
        parser = _Summaries()
        parser.feed(text)
        out += [f"{name}: summary line cut mid-citation: {s!r}"
                for s in parser.found if cut_summary(s)]
        plain = html.unescape(re.sub(r"<[^>]+>", "", text))
        if name.startswith(("auto_gallery/", "auto_performance/")):
            out += [f"{name}: the repr of a matplotlib object: {m!r}"
                    for m in sorted(set(re.findall(r"<matplotlib\.[\w.]+ object at 0x[0-9a-f]+>",
                                                   plain)))]
        if re.search(r"\bthis README\b", plain, re.I):
            out.append(f"{name}: speaks of 'this README' (the site is not the README)")
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not pathlib.Path(args[0]).is_dir():
        print("usage: python tools/check_docs.py SITE_DIR", file=sys.stderr)
        return 2
    found = problems(pathlib.Path(args[0]))
    for line in found:
        print(line)
    if not found:
        print(f"{args[0]}: no problem found")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
