#!/usr/bin/env python
"""Translation sources of the book's other editions, and what in them is missing or stale.

A translation lives in one Markdown file per English page, ``i18n/<lang>/<page>.md``
(``i18n/zh/03_relu.md`` translates ``book/03_relu.ipynb``). It is a list of units, each
headed by one comment line that names the English unit it translates and the hash of that
unit's English text when it was translated:

    <!-- unit ch03-004 en:3f2a9c0d1b7e -->
    中文的 Markdown 单元……

- In a notebook, a unit is a Markdown cell, named by its cell id. Code cells are never
  translated: the other edition copies them, with their outputs, from the English notebook.
- In a Markdown page (``intro.md``, ``glossary.md``, ...), a unit is a section: a heading
  and what follows it up to the next heading (a ``(label)=`` line goes with the heading
  under it). It is named by its position and heading, ``s03-backward-returns``.
- ``en:`` is the first 12 hex digits of the SHA-256 of the English unit's text. When the
  English changes, the hash no longer matches and the unit is *stale*.
- A unit whose header ends in `` todo`` is not translated yet (``skeleton`` writes them so,
  with the English text as its body); the translator removes ``todo`` when done.

    python scripts/i18n.py status [--lang zh]           # per page: translated / todo / stale / missing
    python scripts/i18n.py todo [--lang zh] [PAGE]       # every unit that needs work, with its reason
    python scripts/i18n.py skeleton [--lang zh] PAGE     # add the missing units (as todo) to PAGE's file
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
I18N = ROOT / "i18n"
HEADER = re.compile(r"^<!-- unit (?P<id>[A-Za-z0-9_.-]+) en:(?P<hash>[0-9a-f]{12})(?P<todo> todo)? -->$")
FENCE = re.compile(r"^\s*(```|~~~)")


def text_hash(text: str) -> str:
    """The hash a translation records of the English text it translates."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class Unit:
    id: str
    text: str

    @property
    def hash(self) -> str:
        return text_hash(self.text)


@dataclass(frozen=True)
class Translation:
    id: str
    en_hash: str
    todo: bool
    text: str


def pages() -> list[Path]:
    """Every English page that an edition translates (the book's notebooks and Markdown pages)."""
    return sorted(p for p in BOOK.iterdir() if p.suffix in (".ipynb", ".md") and p.is_file())


def page_path(page: str) -> Path:
    """'03_relu', '03_relu.ipynb' or 'book/03_relu.ipynb' -> the English page."""
    stem = Path(page).stem
    for p in pages():
        if p.stem == stem:
            return p
    raise SystemExit(f"i18n: no English page named {page!r} in book/ (have: {', '.join(p.stem for p in pages())})")


def _slug(heading: str) -> str:
    words = re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")
    return "-".join(words.split("-")[:5]) or "section"


def markdown_sections(text: str) -> list[Unit]:
    """A Markdown page cut at its headings (outside code fences); a (label)= line joins the next heading."""
    lines = text.splitlines(keepends=True)
    starts, in_fence = [0], False
    for i, line in enumerate(lines):
        if FENCE.match(line):
            in_fence = not in_fence
        if in_fence or i == 0 or not line.startswith("#"):
            continue
        start = i - 1 if i > 0 and re.match(r"^\([^)]+\)=\s*$", lines[i - 1]) else i
        if start > starts[-1]:
            starts.append(start)
    units = []
    for k, (a, b) in enumerate(zip(starts, starts[1:] + [len(lines)])):
        chunk = "".join(lines[a:b])
        heading = next((l.lstrip("#").strip() for l in lines[a:b] if l.startswith("#")), "")
        units.append(Unit(f"s{k:02d}-{_slug(heading)}", chunk))
    return units


def english_units(page: Path) -> list[Unit]:
    """The translatable units of an English page, in page order."""
    if page.suffix == ".ipynb":
        nb = json.loads(page.read_text(encoding="utf-8"))
        return [Unit(c["id"], "".join(c["source"])) for c in nb["cells"] if c["cell_type"] == "markdown"]
    return markdown_sections(page.read_text(encoding="utf-8"))


def translation_file(lang: str, page: Path) -> Path:
    return I18N / lang / f"{page.stem}.md"


def read_translations(path: Path) -> list[Translation]:
    """The units of a translation file, in file order (text without the blank line before the next header)."""
    if not path.exists():
        return []
    out: list[Translation] = []
    head, body = None, []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(keepends=True), 1):
        m = HEADER.match(line.rstrip("\n"))
        if m:
            if head:
                out.append(Translation(head["id"], head["hash"], bool(head["todo"]), "".join(body).strip("\n")))
            head, body = m, []
        elif line.startswith("<!-- unit"):
            raise SystemExit(f"i18n: {path}:{n}: malformed unit header {line.strip()!r} "
                             "(expected '<!-- unit ID en:HASH12 -->', optionally ' todo' before '-->')")
        elif head:
            body.append(line)
        elif line.strip() and not line.startswith("<!--"):
            raise SystemExit(f"i18n: {path}:{n}: text before the first unit header")
    if head:
        out.append(Translation(head["id"], head["hash"], bool(head["todo"]), "".join(body).strip("\n")))
    seen = set()
    for t in out:
        if t.id in seen:
            raise SystemExit(f"i18n: {path}: unit {t.id} appears twice")
        seen.add(t.id)
    return out


def problems(lang: str, page: Path) -> list[tuple[str, str]]:
    """(unit id, reason) for each unit of the page that needs a translator."""
    have = {t.id: t for t in read_translations(translation_file(lang, page))}
    units = english_units(page)
    out = []
    for u in units:
        t = have.get(u.id)
        if t is None:
            out.append((u.id, "missing"))
        elif t.todo:
            out.append((u.id, "not translated yet (todo)"))
        elif t.en_hash != u.hash:
            out.append((u.id, "English changed since translation"))
    known = {u.id for u in units}
    out += [(i, "no such English unit any more") for i in have if i not in known]
    return out


def skeleton(lang: str, page: Path) -> int:
    """Append the page's missing units, as todo with their English text, keeping the file's order."""
    path = translation_file(lang, page)
    have = {t.id: t for t in read_translations(path)}
    parts = []
    for u in english_units(page):
        t = have.get(u.id)
        if t is None:
            parts.append((f"<!-- unit {u.id} en:{u.hash} todo -->", u.text.strip("\n")))
        else:
            flag = " todo" if t.todo else ""
            parts.append((f"<!-- unit {t.id} en:{t.en_hash}{flag} -->", t.text))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"<!-- i18n {lang}: translation of book/{page.name}; see scripts/i18n.py -->\n\n"
                    + "\n\n".join(f"{h}\n{b}" for h, b in parts) + "\n", encoding="utf-8")
    return sum(1 for u in english_units(page) if u.id not in have)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["status", "todo", "skeleton"])
    ap.add_argument("page", nargs="?")
    ap.add_argument("--lang", default="zh")
    a = ap.parse_args(argv)
    if a.command == "skeleton":
        if not a.page:
            ap.error("skeleton needs a PAGE")
        page = page_path(a.page)
        n = skeleton(a.lang, page)
        print(f"{translation_file(a.lang, page).relative_to(ROOT)}: {n} unit(s) added as todo")
        return 0
    todo = [page_path(a.page)] if a.page else pages()
    bad = 0
    for page in todo:
        probs = problems(a.lang, page)
        bad += len(probs)
        if a.command == "status":
            n = len(english_units(page))
            kinds = {r: sum(1 for _, x in probs if x == r) for _, r in probs}
            detail = ", ".join(f"{k}: {v}" for k, v in kinds.items()) or "complete"
            print(f"{page.name:34} {n - len(probs):3}/{n:<3} {detail}")
        else:
            for uid, reason in probs:
                print(f"{page.stem} unit {uid}: {reason}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
