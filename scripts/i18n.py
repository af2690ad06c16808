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
    python scripts/i18n.py lint [--lang zh] [PAGE]       # translated units whose MyST structure differs
    python scripts/i18n.py build [--lang zh] [--check]   # write the edition's book zh/ (or check it is current)
    python scripts/i18n.py relink [SITE]                 # after both builds: language links of _build/html
    python scripts/i18n.py messages [--check]            # the check() feedback catalogue (.po -> .mo)

``lint`` compares each translated unit with its English unit: the same directives and fences
with the same options (``:label:``; prose options like ``:caption:`` and exercise titles are
translated), ``(label)=`` lines, heading levels, link targets, inline code spans, roles and
their targets, fenced code (comments aside), HTML tags, math ($$ blocks; inline $...$ exactly),
solution markers. It names each difference and exits 1 if there is any. It also flags two things
that render wrong in Chinese whatever the English says (``rendering_problems``): emphasis that
CommonMark cannot close or open next to full-width punctuation, and line breaks between Chinese
characters (shown as spaces).
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


def _section_slug(unit_id: str) -> str | None:
    """'s07-backward-returns' -> 'backward-returns' (a Markdown page's section, whatever its position)."""
    m = re.match(r"^s\d{2,}-(.+)$", unit_id)
    return m.group(1) if m else None


def matched(lang: str, page: Path) -> tuple[dict[str, Translation], list[Translation]]:
    """{English unit id: its translation}, and the translations that match no English unit.

    A unit is matched by its id; a section of a Markdown page whose position changed (a section
    added above it renumbers it: s07-x becomes s08-x) is matched by its heading's slug when that
    is unique on both sides, so that its translation is kept (and fresh if its English is the same)."""
    trs = read_translations(translation_file(lang, page))
    units = english_units(page)
    by_id = {t.id: t for t in trs}
    out = {u.id: by_id[u.id] for u in units if u.id in by_id}
    used = {t.id for t in out.values()}
    if page.suffix == ".md":
        def unique(items, key):
            counts: dict = {}
            for x in items:
                counts[key(x)] = counts.get(key(x), 0) + 1
            return {key(x): x for x in items if key(x) is not None and counts[key(x)] == 1}
        free_units = unique([u for u in units if u.id not in out], lambda u: _section_slug(u.id))
        free_trs = unique([t for t in trs if t.id not in used], lambda t: _section_slug(t.id))
        for slug, u in free_units.items():
            if slug in free_trs:
                out[u.id] = free_trs[slug]
                used.add(free_trs[slug].id)
    return out, [t for t in trs if t.id not in used]


def problems(lang: str, page: Path) -> list[tuple[str, str]]:
    """(unit id, reason) for each unit of the page that needs a translator."""
    have, orphans = matched(lang, page)
    out = []
    for u in english_units(page):
        t = have.get(u.id)
        if t is None:
            out.append((u.id, "missing"))
        elif t.todo:
            out.append((u.id, "not translated yet (todo)"))
        elif t.en_hash != u.hash:
            out.append((u.id, "English changed since translation"))
    out += [(t.id, "no such English unit any more") for t in orphans]
    return out


def skeleton(lang: str, page: Path) -> int:
    """Append the page's missing units, as todo with their English text, keeping the file's order."""
    path = translation_file(lang, page)
    have, orphans = matched(lang, page)
    parts = []
    for u in english_units(page):
        t = have.get(u.id)
        if t is None:
            parts.append((f"<!-- unit {u.id} en:{u.hash} todo -->", u.text.strip("\n")))
        else:  # under the English id now (a section that moved keeps its translation and hash)
            flag = " todo" if t.todo else ""
            parts.append((f"<!-- unit {u.id} en:{t.en_hash}{flag} -->", t.text))
    # translations of sections that no longer exist are kept at the end, for the translator to reuse
    parts += [(f"<!-- unit {t.id} en:{t.en_hash}{' todo' if t.todo else ''} -->", t.text) for t in orphans]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"<!-- i18n {lang}: translation of book/{page.name}; see scripts/i18n.py -->\n\n"
                    + "\n\n".join(f"{h}\n{b}" for h, b in parts) + "\n", encoding="utf-8")
    return sum(1 for u in english_units(page) if u.id not in have)


# --- lint: the MyST structure of a translated unit must match its English unit -------------------

OPEN_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
DIRECTIVE = re.compile(r"^\{(?P<name>[A-Za-z0-9_:.-]+)\}\s*(?P<arg>.*)$")
OPTION = re.compile(r"^\s*:(?P<key>[A-Za-z0-9_-]+):\s*(?P<value>.*?)\s*$")
LABEL = re.compile(r"^\s*\((?P<label>[^)\s]+)\)=\s*$")
HEADING = re.compile(r"^(?P<hashes>#{1,6})\s")
CODE_SPAN = re.compile(r"(?<!`)(?P<ticks>`+)(?!`)(?P<code>.+?)(?<!`)(?P=ticks)(?!`)", re.S)
ROLE = re.compile(r"\{(?P<role>[A-Za-z0-9_:.-]+)\}$")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\((?P<target><[^>]*>|[^)\s]*)(?:\s+\"[^\"]*\")?\)")
AUTOLINK = re.compile(r"<(?P<target>(?:https?|mailto|ftp):[^>\s]+)>")
BARE_URL = re.compile(r"(?<![(<\"'=\w])(?P<target>https?://[^\s)<>\]]+[^\s)<>\].,;:!?'\"])")
HTML_TAG = re.compile(r"<(?P<close>/?)(?P<name>[A-Za-z][A-Za-z0-9-]*)(?P<attrs>(?:\s[^<>]*)?)/?>")
HTML_ATTR = re.compile(r"(?P<key>href|src|id|class|name)\s*=\s*(?P<q>[\"'])(?P<value>.*?)(?P=q)")
INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)(?P<math>[^$\n]+?)(?<![\\\s])\$(?!\$)")
SOLUTION_MARKER = re.compile(r"### (?:BEGIN|END) (?:SOLUTION|HIDDEN TESTS)")
SUBSTITUTION = re.compile(r"\{\{\s*[^}]+?\s*\}\}")
FOOTNOTE = re.compile(r"\[\^[^\]]+\]")
# A directive's argument is kept as English wrote it, except where it is a title a reader reads.
TITLED_DIRECTIVES = {"exercise", "admonition", "figure", "table", "topic", "sidebar", "dropdown",
                     "card", "tab-item", "glossary", "epigraph", "margin"}
# Options whose value is prose (translated); every other option must keep its English value.
PROSE_OPTIONS = {"caption", "title", "alt", "name-title"}
CODE_DIRECTIVES = {"code-block", "code", "code-cell", "sourcecode", "literalinclude", "math",
                   "raw", "mermaid", "csv-table", "list-table"}
COMMENT = re.compile(r"(^|\s)#(?!#* (?:BEGIN|END) ).*$")


@dataclass
class Structure:
    """What of a Markdown unit must survive translation unchanged (see `lint`)."""
    directives: list = None   # ("```{exercise}", arg or "") in order
    options: list = None      # ("exercise", ":label:", value) in order
    labels: list = None
    headings: list = None     # heading levels, in order
    links: set = None
    code: set = None          # inline code spans (roles excluded)
    roles: list = None        # ("ref", "target")
    code_blocks: list = None  # (info, code without comments) of fenced code
    html: list = None         # ("a", "href=..."), ("/a", "")
    display_math: int = 0
    inline_math: list = None
    markers: list = None
    substitutions: list = None
    footnotes: list = None


def _code_without_comments(info: str, code: str) -> str:
    """Fenced code compared with its comments dropped: a translator may translate comments."""
    lang = info.split()[-1] if info.split() else ""
    if lang in ("", "text", "markdown", "md", "myst", "console", "output", "none"):
        return ""          # prose-like blocks (diagrams, sample output with words): not compared
    out = []
    for line in code.splitlines():
        line = COMMENT.sub("", line).rstrip()
        if line:
            out.append(line)
    return "\n".join(out)


def _inline(text: str, st: Structure) -> None:
    """Collect the inline structure of prose lines (code spans first, so that `<x>` is code)."""
    st.markers += SOLUTION_MARKER.findall(text)
    pieces, last = [], 0
    for m in CODE_SPAN.finditer(text):
        before = text[last:m.start()]
        role = ROLE.search(before)
        code = m.group("code")
        if m.group("ticks") != "`" or (code.startswith(" ") and code.endswith(" ") and code.strip()):
            code = code.strip() if code.startswith(" ") and code.endswith(" ") else code
        if role:
            target = re.search(r"<([^<>]+)>\s*$", code)
            st.roles.append((role.group("role"), target.group(1) if target else code))
            before = before[:role.start()]
        else:
            st.code.add(code)
        pieces.append(before)
        pieces.append(" ")
        last = m.end()
    prose = "".join(pieces) + text[last:]
    for m in LINK.finditer(prose):
        st.links.add(m.group("target").strip("<>"))
    for m in AUTOLINK.finditer(prose):
        st.links.add(m.group("target"))
    no_links = AUTOLINK.sub(" ", LINK.sub(" ", prose))
    for m in BARE_URL.finditer(no_links):
        st.links.add(m.group("target"))
    st.inline_math += [re.sub(r"\s+", "", m.group("math")) for m in INLINE_MATH.finditer(prose)]
    for m in HTML_TAG.finditer(prose):
        attrs = " ".join(f'{a["key"]}="{a["value"]}"' for a in HTML_ATTR.finditer(m.group("attrs") or ""))
        st.html.append((m.group("close") + m.group("name").lower(), attrs))
    st.substitutions += SUBSTITUTION.findall(prose)
    st.footnotes += FOOTNOTE.findall(prose)


def structure(text: str) -> Structure:
    """The MyST structure of one unit: fences, directives and their options, labels, headings,
    links, inline code, roles, math, HTML tags and solution markers."""
    st = Structure([], [], [], [], set(), set(), [], [], [], 0, [], [], [], [])
    lines = text.splitlines()
    stack: list[tuple[str, str, bool]] = []   # (fence, directive name, body is code)
    code_lines: list[str] = []
    in_math = False
    para: list[str] = []

    def flush():
        if para:
            _inline("\n".join(para), st)
            para.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if stack and stack[-1][2]:                       # inside a code fence: wait for its end
            fence = stack[-1][0]
            if line.strip() == fence[0] * len(line.strip()) and len(line.strip()) >= len(fence):
                _, name, _ = stack.pop()
                st.code_blocks.append((name, _code_without_comments(name, "\n".join(code_lines))))
                code_lines = []
            else:
                code_lines.append(line)
            continue
        if in_math:
            if line.strip().endswith("$$"):
                in_math = False
            continue
        m = OPEN_FENCE.match(line)
        if m:
            fence, info = m.group("fence"), m.group("info").strip()
            if stack and not info and fence[0] == stack[-1][0][0] and len(fence) >= len(stack[-1][0]):
                flush()
                stack.pop()
                st.directives.append(("end " + fence, ""))
                continue
            if fence[0] == "`" and "`" in info:
                para.append(line)                        # an inline code span, not a fence
                continue
            flush()
            d = DIRECTIVE.match(info)
            if d:
                name, arg = d.group("name"), d.group("arg").strip()
                st.directives.append((f"{fence}{{{name}}}", "" if name in TITLED_DIRECTIVES else arg))
                while i < len(lines) and OPTION.match(lines[i]):
                    o = OPTION.match(lines[i])
                    i += 1
                    value = "" if o.group("key") in PROSE_OPTIONS else o.group("value")
                    st.options.append((name, f":{o.group('key')}:", value))
                is_code = name in CODE_DIRECTIVES
                stack.append((fence, arg if is_code else name, is_code))
            else:
                st.directives.append((fence + info, ""))
                stack.append((fence, info, True))
            continue
        if LABEL.match(line):
            flush()
            st.labels.append(LABEL.match(line).group("label"))
            continue
        h = HEADING.match(line)
        if h:
            flush()
            st.headings.append(len(h.group("hashes")))
            _inline(line[len(h.group("hashes")):], st)
            continue
        if line.strip().startswith("$$"):
            flush()
            st.display_math += 1
            rest = line.strip()[2:]
            if not rest.rstrip().endswith("$$"):
                in_math = True
            continue
        if not line.strip():
            flush()
            continue
        para.append(line)
    flush()
    if stack:
        st.directives.append(("unclosed " + stack[-1][0], stack[-1][1]))
    return st


def _multiset_diff(kind: str, en: list, tr: list, show) -> list[str]:
    from collections import Counter
    a, b = Counter(en), Counter(tr)
    out = []
    for x in en:
        if a[x] > b[x]:
            n = a[x] - b[x]
            out.append(f"{kind} {show(x)} missing" + (f" ({n} of {a[x]})" if a[x] > 1 else ""))
            b[x] = a[x]
    for x in tr:
        if b[x] > a[x]:
            n = b[x] - a[x]
            out.append(f"{kind} {show(x)} not in the English" + (f" ({n} extra)" if n > 1 else ""))
            a[x] = b[x]
    if not out and list(en) != list(tr):
        out.append(f"{kind}s in a different order than in the English")
    return out


def compare(en_text: str, tr_text: str) -> list[str]:
    """Each difference between the structure of an English unit and of its translation, named."""
    if not tr_text.strip():
        return ["the translation is empty"]
    e, t = structure(en_text), structure(tr_text)
    out: list[str] = []
    out += _multiset_diff("directive", e.directives, t.directives,
                          lambda d: f"{d[0]} {d[1]}".strip() if not d[0].startswith("end ") else f"closing fence {d[0][4:]}")
    out += _multiset_diff("option", e.options, t.options, lambda o: f"{o[1]} {o[2]} (of {{{o[0]}}})".replace("  ", " "))
    out += _multiset_diff("label", e.labels, t.labels, lambda l: f"({l})=")
    if e.headings != t.headings:
        out.append(f"heading levels {e.headings} in English, {t.headings} here")
    out += [f"link target {x} missing" for x in sorted(e.links - t.links)]
    out += [f"link target {x} not in the English" for x in sorted(t.links - e.links)]
    out += [f"inline code `{x}` missing" for x in sorted(e.code - t.code)]
    # An English word the translation sets in code font (自定义 `Function`, as the terminology
    # table asks) is fine; a code span whose text the English unit does not contain is not.
    out += [f"inline code `{x}` not in the English" for x in sorted(t.code - e.code) if x not in en_text]
    out += _multiset_diff("role", e.roles, t.roles, lambda r: f"{{{r[0]}}}`{r[1]}`")
    en_blocks, tr_blocks = [b[0] for b in e.code_blocks], [b[0] for b in t.code_blocks]
    out += _multiset_diff("code block", en_blocks, tr_blocks, lambda b: f"```{b}".rstrip())
    if en_blocks == tr_blocks:
        for k, (a, b) in enumerate(zip(e.code_blocks, t.code_blocks), 1):
            if a[1] != b[1]:
                out.append(f"code block {k} (```{a[0]}) differs from the English (comments aside)")
    out += _multiset_diff("HTML tag", e.html, t.html, lambda h: f"<{h[0]}{' ' + h[1] if h[1] else ''}>")
    if e.display_math != t.display_math:
        out.append(f"{e.display_math} math block(s) $$ in English, {t.display_math} here")
    out += _multiset_diff("inline math", e.inline_math, t.inline_math, lambda m: f"${m}$")
    out += _multiset_diff("solution marker", e.markers, t.markers, lambda m: repr(m))
    out += _multiset_diff("substitution", e.substitutions, t.substitutions, str)
    out += _multiset_diff("footnote", e.footnotes, t.footnotes, str)
    # inline math and links: order does not matter in another language
    return [m for m in out if not m.startswith(("inline maths in a different order",
                                                "HTML tags in a different order",
                                                "roles in a different order",
                                                "substitutions in a different order",
                                                "footnotes in a different order"))]


def lint(lang: str, page: Path) -> list[tuple[str, str]]:
    """(unit id, difference) for every translated unit whose structure differs from its English unit."""
    have, _ = matched(lang, page)
    out = []
    for u in english_units(page):
        t = have.get(u.id)
        if t is None or t.todo:
            continue
        out += [(u.id, d) for d in compare(u.text, t.text)]
        out += [(u.id, d) for d in rendering_problems(t.text)]
    return out


# --- lint, rendering: Chinese text that MyST renders differently from what it looks like ---------
# (apart from the structure comparison above: these look at the translation alone)

import unicodedata  # noqa: E402  (only this part needs it)

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef\u2018\u2019\u201c\u201d\u2026\u2014\u00b7"
# a line ending in a CJK character, maybe inside emphasis or a link's text: 中文**, [中文](target)
_CJK_END = re.compile(rf"[{_CJK}][*_]*(?:\]\([^()\s]*\))?[*_]*$")
_CJK_START = re.compile(rf"^[*_]*\[?[*_]*[{_CJK}]")    # and a line starting with one: **中文, [中文
_BLOCK_START = re.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|#|>|\||:{3,}|`{3,}|~{3,}|\$\$|<|\(\S+\)=|:\w[\w-]*:)")
_MASKED_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)|(?<![\\$])\$(?!\$)[^$\n]+?(?<![\\\s])\$(?!\$)")
_STARS = re.compile(r"(?<![\\*])\*+(?!\*)")


def _is_space(ch: str) -> bool:
    return ch == "" or ch.isspace()


def _is_punct(ch: str) -> bool:
    return ch != "" and unicodedata.category(ch)[0] in "PS"


def rendering_problems(text: str) -> list[str]:
    """Two ways Chinese Markdown renders wrong although its structure matches the English:

    - an emphasis delimiter that CommonMark cannot use: ``**当作网站阅读。**每个`` shows literal
      asterisks, because a closing ``**`` right after punctuation must be followed by a space or
      punctuation (the same for an opening ``**`` right before punctuation, after a letter);
      write ``**当作网站阅读**。每个`` or put a space after the ``**``;
    - a line break between two Chinese characters inside a paragraph, which the browser shows as
      a space: join the two lines.
    """
    out: list[str] = []
    lines = text.splitlines()
    fence, in_math = None, False
    para: list[str] = []

    def paragraph_done() -> None:
        if not para:
            return
        for a, b in zip(para, para[1:]):
            if _CJK_END.search(a.rstrip()) and _CJK_START.search(b.lstrip()) and not _BLOCK_START.match(b):
                out.append(f"line break between Chinese characters (shows as a space): "
                           f"{a.rstrip()[-12:]!r} / {b.lstrip()[:12]!r}: join the lines")
        _emphasis(" ".join(para), out)
        para.clear()

    for line in lines:
        m = OPEN_FENCE.match(line)
        if fence:
            if m and m.group("fence")[0] == fence[0] and len(m.group("fence")) >= len(fence) \
                    and not m.group("info").strip():
                fence = None
            continue
        if in_math:
            in_math = not line.strip().endswith("$$")
            continue
        info = m.group("info").strip() if m else ""
        d = DIRECTIVE.match(info)
        if m and m.group("fence")[0] in "`~" and "`" not in info and (not d or d.group("name") in CODE_DIRECTIVES):
            paragraph_done()
            fence = m.group("fence")
            continue
        if line.strip().startswith("$$"):
            paragraph_done()
            in_math = not (len(line.strip()) > 2 and line.strip().endswith("$$"))
            continue
        if not line.strip() or HEADING.match(line) or LABEL.match(line) or OPEN_FENCE.match(line) \
                or OPTION.match(line):
            paragraph_done()
            if HEADING.match(line):
                _emphasis(line, out)
            continue
        if para and _BLOCK_START.match(line):
            paragraph_done()
        para.append(line)
    paragraph_done()
    return out


def _emphasis(text: str, out: list[str]) -> None:
    """Flag each ``*`` run meant to open (or close) emphasis that CommonMark's flanking rules refuse."""
    masked = _MASKED_SPAN.sub(lambda m: m.group(0)[0] + "x" * (len(m.group(0)) - 2) + m.group(0)[-1], text)
    masked = re.sub(r"(?m)^\s*[*+-]\s", lambda m: " " * len(m.group(0)), masked)   # list bullets
    open_runs: set[int] = set()
    for m in _STARS.finditer(masked):
        before = masked[m.start() - 1] if m.start() else ""
        after = masked[m.end()] if m.end() < len(masked) else ""
        if _is_space(before) and _is_space(after):
            continue                                     # a lone * between spaces: literal
        left = not _is_space(after) and (not _is_punct(after) or _is_space(before) or _is_punct(before))
        right = not _is_space(before) and (not _is_punct(before) or _is_space(after) or _is_punct(after))
        n = len(m.group(0))
        where = text[max(0, m.start() - 8):m.end() + 8].replace("\n", " ")
        if n in open_runs:
            open_runs.discard(n)
            if not right:
                out.append(f"{'*' * n} cannot close here (CommonMark: after punctuation it needs a space or "
                           f"punctuation next): {where!r}: move it before the punctuation or add a space")
        else:
            open_runs.add(n)
            if not left:
                out.append(f"{'*' * n} cannot open here (CommonMark: before punctuation it needs a space or "
                           f"punctuation before it): {where!r}: move it after the punctuation or add a space")


# --- build: the other edition's book, generated ---------------------------------------------------

EDITION_TITLES = {"zh": "深入 autograd.Function"}
SPHINX_LANGUAGES = {"zh": "zh_CN"}       # Sphinx's language: <html lang="zh-CN">, its own labels
SEARCH_LANGUAGES = {"zh": "zh"}          # Sphinx's search splitter for zh uses jieba
LINK_LABELS = {"zh": "中文", "en": "English"}
CODE_PROMPTS = {"zh": {"nb_code_prompt_show": "显示代码单元格", "nb_code_prompt_hide": "隐藏代码单元格"}}
HTML_LANGS = {"zh": "zh-CN", "en": "en"}
PROGRESS = {"zh": ("翻译进度",
                   "中文版仍在翻译中。以下页面尚未译完（或英文原文已更新），暂时链接到英文版：",
                   "（英文）")}
MD_LINK = re.compile(r"(?<![!\\])\[(?P<text>(?:[^\[\]]|\[[^\]]*\])*)\]\((?P<target>[^)\s]+)\)")
HTML_HREF = re.compile(r"(?P<attr>\b(?:href|src))=(?P<q>[\"'])(?P<url>\.\./[^\"']*)(?P=q)")


def edition_root(lang: str) -> Path:
    """The generated book of an edition: <lang>/_config.yml, <lang>/_toc.yml, <lang>/book/."""
    return ROOT / lang


def publishable(lang: str, page: Path) -> list[str]:
    """Why the page cannot be published yet (empty: every unit translated, fresh and lint-clean)."""
    return ([f"unit {u}: {r}" for u, r in problems(lang, page)]
            + [f"unit {u}: {d}" for u, d in lint(lang, page)])


def _english_toc() -> dict:
    import yaml
    return yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))


def _toc_stems(toc) -> list[str]:
    out = []
    if isinstance(toc, dict):
        for k, v in toc.items():
            if k in ("file", "root") and isinstance(v, str):
                out.append(Path(v).name)
            else:
                out += _toc_stems(v)
    elif isinstance(toc, list):
        for v in toc:
            out += _toc_stems(v)
    return out


def labels_by_page() -> dict[str, str]:
    """Every (label)= and directive :label: of the English book -> the stem of its page."""
    out = {}
    for page in pages():
        for u in english_units(page):
            for m in re.finditer(r"^\s*\(([^)\s]+)\)=\s*$|^\s*:label:\s*(\S+)", u.text, re.M):
                out.setdefault(m.group(1) or m.group(2), page.stem)
    return out


def _md_inline_to_html(text: str) -> str:
    import html
    out, last = [], 0
    for m in CODE_SPAN.finditer(text):
        out.append(html.escape(text[last:m.start()], quote=False))
        out.append(f"<code>{html.escape(m.group('code').strip(), quote=False)}</code>")
        last = m.end()
    out.append(html.escape(text[last:], quote=False))
    return "".join(out)


def localize_links(text: str, published: set[str], labels: dict[str, str]) -> str:
    """Links of a translated unit, as they must read in the edition (one folder deeper):

    - to a page (or a label on a page) that the edition has not published yet: to the English
      page, as an HTML link (MyST would warn about a document it does not have);
    - raw ``../x`` links out of book/ (the wheel's download page): one more ``../``.
    Code (fences and inline) is left alone."""
    def fix_md(m: re.Match, unmask) -> str:
        target = m.group("target")
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            return m.group(0)                         # http:, mailto: ...
        path, _, anchor = target.partition("#")
        stem = Path(path).stem if path else labels.get(anchor)
        if path and not path.endswith((".ipynb", ".md")):
            if path.startswith("../"):
                return f'<a href="../{target}">{_md_inline_to_html(unmask(m.group("text")))}</a>'
            return m.group(0)
        if stem is None or stem in published:
            return m.group(0)
        url = f"../../book/{stem}.html" + (f"#{anchor}" if anchor else "")
        return f'<a href="{url}">{_md_inline_to_html(unmask(m.group("text")))}</a>'

    out, stack = [], []                               # open fences: (fence, body is code)
    for line in text.splitlines(keepends=True):
        f = OPEN_FENCE.match(line.rstrip("\n"))
        if stack and stack[-1][1]:
            if f and not f.group("info").strip() and f.group("fence")[0] == stack[-1][0][0] \
                    and len(f.group("fence")) >= len(stack[-1][0]):
                stack.pop()
            out.append(line)
            continue
        if f and not (f.group("fence")[0] == "`" and "`" in f.group("info")):
            info = f.group("info").strip()
            if not info and stack and f.group("fence")[0] == stack[-1][0][0]:
                stack.pop()
            else:
                d = DIRECTIVE.match(info)
                stack.append((f.group("fence"), not d or d.group("name") in CODE_DIRECTIVES))
            out.append(line)
            continue
        codes: list[str] = []                         # inline code is masked, not rewritten

        def mask(m: re.Match) -> str:
            codes.append(m.group(0))
            return f"\x00{len(codes) - 1}\x00"

        def unmask(t: str) -> str:
            return re.sub(r"\x00(\d+)\x00", lambda m: codes[int(m.group(1))], t)

        masked = CODE_SPAN.sub(mask, line)
        masked = HTML_HREF.sub(lambda m: f'{m.group("attr")}={m.group("q")}../{m.group("url")}{m.group("q")}',
                               masked)
        masked = MD_LINK.sub(lambda m: fix_md(m, unmask), masked)
        out.append(unmask(masked))
    return "".join(out)


def _nb_json(nb: dict) -> str:
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def _page_title(page: Path) -> str:
    for u in english_units(page):
        m = re.search(r"^#\s+(.+)$", u.text, re.M)
        if m:
            return m.group(1).strip()
    return page.stem


def edition_notebook(lang: str, page: Path, published: set[str], labels: dict[str, str]) -> str:
    """The edition's notebook: the English notebook with each Markdown cell's source replaced by
    its translation. Code cells, outputs, cell metadata (tags), the notebook's metadata (widget
    state) are the English ones, unchanged; the notebook metadata gains ``i18n`` (language, source)."""
    nb = json.loads(page.read_text(encoding="utf-8"))
    tr = {t.id: t.text for t in read_translations(translation_file(lang, page))}
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            text = localize_links(tr[cell["id"]], published, labels)
            cell["source"] = text.splitlines(keepends=True)
    nb["metadata"]["i18n"] = {"language": lang, "source": f"book/{page.name}"}
    return _nb_json(nb)


def edition_markdown(lang: str, page: Path, published: set[str], labels: dict[str, str]) -> str:
    """The edition's Markdown page: its translated sections, in the English order."""
    tr = {i: t.text for i, t in matched(lang, page)[0].items()}
    parts = [localize_links(tr[u.id], published, labels).strip("\n") for u in english_units(page)]
    return "\n\n".join(parts) + "\n"


def progress_section(lang: str, missing: list[Path]) -> str:
    """What the landing page says about the pages not published yet (links to the English ones)."""
    if not missing:
        return ""
    title, lead, mark = PROGRESS[lang]
    items = "\n".join(f'- <a href="../../book/{p.stem}.html">{_md_inline_to_html(_page_title(p))}</a>{mark}'
                      for p in missing)
    return f"\n\n(i18n-progress)=\n## {title}\n\n{lead}\n\n{items}\n"


LANDING_STUB = {"zh": ("本页（课程简介）的中文译文正在更新。请先阅读"
                       '<a href="../../book/intro.html">英文版的课程简介</a>；已译完的各章见左侧目录。')}


def landing_stub(lang: str) -> str:
    """The landing page while the intro itself is not translated (or not fresh): the title, a
    pointer to the English intro; the chapters are in the sidebar, the rest in the progress list."""
    return f"# {EDITION_TITLES[lang]}\n\n{LANDING_STUB[lang]}\n"


def edition_config(lang: str) -> str:
    """The edition's _config.yml: the English one, with paths to the shared _ext/, _theme/ and
    _assets/ (one folder up, not copied), no execution (outputs come from the English notebooks),
    the edition's language, title and search splitter."""
    import yaml
    cfg = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    cfg["title"] = EDITION_TITLES[lang]
    cfg["exclude_patterns"] = ["_build", "**/.ipynb_checkpoints", ".*", "**/.*"]
    cfg["execute"] = {"execute_notebooks": "off"}
    cfg["html"]["favicon"] = "../" + cfg["html"]["favicon"]
    sph = cfg["sphinx"]
    sph["local_extensions"] = {k: "../" + v for k, v in sph["local_extensions"].items()}
    conf = sph["config"]
    conf["html_static_path"] = ["../" + p for p in conf["html_static_path"]]
    conf["language"] = SPHINX_LANGUAGES[lang]
    conf["html_search_language"] = SEARCH_LANGUAGES[lang]
    if (I18N / f"{lang}-search-words.txt").is_file():   # jieba's user dictionary: the course's terms
        conf["html_search_options"] = {"dict": f"i18n/{lang}-search-words.txt"}  # (whole words: 反向传播)
    conf.update(CODE_PROMPTS[lang])     # myst-nb's "Show code cell source" toggles
    conf["course_counterpart"] = {"root": "../", "toc": "../_toc.yml", "label": LINK_LABELS["en"],
                                  "lang": HTML_LANGS["en"]}
    head = (f"# GENERATED by `python scripts/i18n.py build` from ../_config.yml: do not edit.\n"
            f"# The {lang} edition: notebooks not executed (their outputs are the English ones),\n"
            f"# _ext/, _theme/ and _assets/ shared with the English book (one folder up).\n")
    return head + yaml.safe_dump(cfg, allow_unicode=True, sort_keys=False, width=100)


def edition_toc(lang: str, published: list[Path]) -> str:
    """The edition's _toc.yml: the English one without the pages not published yet."""
    import yaml
    keep = {p.stem for p in published}

    def prune(node):
        if isinstance(node, dict):
            if "file" in node and Path(node["file"]).name not in keep:
                return None
            return {k: (prune(v) if k != "file" else v) for k, v in node.items()}
        if isinstance(node, list):
            return [x for x in (prune(v) for v in node) if x is not None]
        return node

    toc = prune(_english_toc())
    head = (f"# GENERATED by `python scripts/i18n.py build`: the English _toc.yml without the pages\n"
            f"# whose translation is not complete and fresh (see `python scripts/i18n.py status`).\n")
    return head + yaml.safe_dump(toc, allow_unicode=True, sort_keys=False)


def edition_files(lang: str) -> dict[str, str]:
    """Every file `build` writes (path relative to the repository root -> its text)."""
    in_toc = _toc_stems(_english_toc())
    order = {s: i for i, s in enumerate(in_toc)}
    english = sorted((p for p in pages() if p.stem in order), key=lambda p: order[p.stem])
    ready = [p for p in english if not publishable(lang, p)]
    root_stem = Path(_english_toc()["root"]).name
    published = {p.stem for p in ready} | {root_stem}
    labels = labels_by_page()
    base = edition_root(lang).relative_to(ROOT)
    files = {f"{base}/_config.yml": edition_config(lang)}
    toc_pages = [p for p in english if p.stem in published]
    files[f"{base}/_toc.yml"] = edition_toc(lang, toc_pages)
    missing = [p for p in english if p.stem not in published]
    for p in toc_pages:
        rel = f"{base}/book/{p.name}"
        if p.stem == root_stem:
            body = (edition_markdown(lang, p, published, labels) if p in ready else landing_stub(lang))
            files[rel] = body.rstrip("\n") + progress_section(lang, missing) + ("\n" if not missing else "")
        elif p.suffix == ".ipynb":
            files[rel] = edition_notebook(lang, p, published, labels)
        else:
            files[rel] = edition_markdown(lang, p, published, labels)
    return files


def build(lang: str, check: bool = False) -> list[str]:
    """Write the edition's book (or, with check, list the files that differ from what it would write).
    Also brings the feedback catalogue up to date (its exercise titles come from the translations)."""
    if not check and lang in GETTEXT_LOCALES:
        messages(lang)
    files = edition_files(lang)
    book = edition_root(lang) / "book"
    stale = [str(f.relative_to(ROOT)) for f in (sorted(book.iterdir()) if book.is_dir() else [])
             if f.is_file() and str(f.relative_to(ROOT)) not in files]
    changed = [rel for rel, text in files.items()
               if not (ROOT / rel).is_file() or (ROOT / rel).read_text(encoding="utf-8") != text]
    if check:
        return changed + [f"{s} (not published: should not exist)" for s in stale]
    for rel in changed:
        (ROOT / rel).parent.mkdir(parents=True, exist_ok=True)
        (ROOT / rel).write_text(files[rel], encoding="utf-8")
    for s in stale:
        (ROOT / s).unlink()
    return changed + stale


# --- the exercises' feedback: gettext catalogue of minigrad/course ---------------------------------

COURSE = ROOT / "minigrad" / "course"
GETTEXT_DOMAIN = "minigrad-course"
GETTEXT_LOCALES = {"zh": "zh_CN"}


def po_path(lang: str) -> Path:
    return COURSE / "locale" / GETTEXT_LOCALES[lang] / "LC_MESSAGES" / f"{GETTEXT_DOMAIN}.po"


def code_messages() -> dict[str, str]:
    """Every literal ``_("...")`` in minigrad/course -> where it is (file:line), in source order."""
    import ast
    out: dict[str, str] = {}
    for f in sorted(COURSE.rglob("*.py")):
        tree = ast.parse(f.read_text(encoding="utf-8"))
        constants = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
                     and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
                     for t in n.targets if isinstance(t, ast.Name)}   # _(_STABLE): a module's constant
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("_", "N_")
                    and node.args):
                continue
            arg = node.args[0]
            text = (arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                    else constants.get(arg.id) if isinstance(arg, ast.Name) else None)
            if text is not None:
                out.setdefault(text, f"{f.relative_to(ROOT)}:{node.lineno}")
    return out


def exercise_titles(lang: str) -> dict[str, str]:
    """English exercise title -> its translation, from the ``{exercise} Title`` lines of the book and
    of its translation (the same box, in the same unit): the checks' feedback names an exercise as
    the page does."""
    out = {}
    title = re.compile(r"^\s*```+\{exercise\}\s*(.+?)\s*$", re.M)
    for page in pages():
        tr = {t.id: t for t in read_translations(translation_file(lang, page))}
        for u in english_units(page):
            t = tr.get(u.id)
            if not t or t.todo:
                continue
            for en, zh in zip(title.findall(u.text), title.findall(t.text)):
                out.setdefault(en, zh)
    return out


def _po_unquote(s: str) -> str:
    return json.loads(s)


def _po_quote(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def read_po(path: Path) -> dict[str, str]:
    """msgid -> msgstr of a .po file (single-line or continued strings; comments ignored)."""
    out, key, cur, field = {}, None, [], None
    if not path.exists():
        return out

    def flush():
        nonlocal key
        if field == "msgstr" and key is not None:
            out[key] = "".join(cur)

    msgid = None
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line.startswith("msgid "):
            flush()
            field, cur = "msgid", [_po_unquote(line[6:])]
        elif line.startswith("msgstr "):
            key = "".join(cur)
            field, cur = "msgstr", [_po_unquote(line[7:])]
        elif line.startswith('"') and field:
            cur.append(_po_unquote(line))
        elif not line or line.startswith("#"):
            flush()
            field, key = None, None
    flush()
    return out


def write_po(lang: str, entries: dict[str, tuple[str, str]]) -> str:
    """The .po text: a header, then each msgid with its source comment and msgstr."""
    head = ("# Chinese (zh_CN) feedback of the course's exercises (minigrad.course).\n"
            "# Updated by `python scripts/i18n.py messages` (msgids from the code's _(\"...\") and the\n"
            "# book's exercise titles); translate the empty msgstr, then run it again to compile the .mo.\n"
            'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n'
            f'"Language: {GETTEXT_LOCALES[lang]}\\n"\n\n')
    body = []
    for msgid, (where, msgstr) in entries.items():
        body.append(f"#: {where}\nmsgid {_po_quote(msgid)}\nmsgstr {_po_quote(msgstr)}\n")
    return head + "\n".join(body)


def compile_mo(catalog: dict[str, str]) -> bytes:
    """GNU .mo bytes (little-endian, no hash table) of msgid -> msgstr, as msgfmt writes them."""
    import struct
    items = sorted((k.encode("utf-8"), v.encode("utf-8")) for k, v in catalog.items() if v or k == "")
    ids = b"".join(k + b"\0" for k, _ in items)
    strs = b"".join(v + b"\0" for _, v in items)
    n = len(items)
    start = 7 * 4 + n * 16
    koffsets, voffsets, pos = [], [], 0
    for k, _ in items:
        koffsets += [len(k), start + pos]
        pos += len(k) + 1
    pos = 0
    for _, v in items:
        voffsets += [len(v), start + len(ids) + pos]
        pos += len(v) + 1
    header = struct.pack("<7I", 0x950412DE, 0, n, 7 * 4, 7 * 4 + n * 8, 0, 0)
    return header + struct.pack(f"<{2 * n}I", *koffsets) + struct.pack(f"<{2 * n}I", *voffsets) + ids + strs


def messages(lang: str, check: bool = False) -> list[str]:
    """Bring the .po up to date (new msgids added, titles from the book) and compile the .mo.
    With check: only list what is missing or out of date."""
    po = po_path(lang)
    have = read_po(po)
    titles = exercise_titles(lang)
    entries: dict[str, tuple[str, str]] = {}
    for msgid, where in code_messages().items():
        entries[msgid] = (where, have.get(msgid, ""))
    from importlib import import_module
    sys.path.insert(0, str(ROOT))
    course = import_module("minigrad.course")
    course._load_exercises()
    # the package's own exercises only: a process that also loaded an instructor's or the tests'
    # extra checks (MINIGRAD_COURSE_EXTRA_EXERCISES) keeps them in the registry
    shipped = Path(import_module("minigrad.course.exercises").__file__).resolve().parent
    for ex in sorted(course.registry.values(), key=lambda e: e.id):
        if not Path(ex.origin.rpartition(":")[0]).resolve().is_relative_to(shipped):
            continue
        if ex.title and ex.id.startswith("ch") and ex.title not in entries:
            entries[ex.title] = (f"exercise {ex.id} (title from the book)", have.get(ex.title) or titles.get(ex.title, ""))
    text = write_po(lang, entries)
    catalog = {"": f"Content-Type: text/plain; charset=UTF-8\nLanguage: {GETTEXT_LOCALES[lang]}\n"}
    catalog.update({k: v for k, (_, v) in entries.items() if v})
    mo = compile_mo(catalog)
    # an exercise title gets its translation from the book when its chapter is translated; until
    # then the feedback names the exercise in English (not an error); a message of the code must
    # be translated by hand
    problems = [f"{po.relative_to(ROOT)}: no translation for {k!r} ({w})" for k, (w, v) in entries.items()
                if not v and "title from the book" not in w]
    if check:
        if not po.exists() or po.read_text(encoding="utf-8") != text:
            problems.append(f"{po.relative_to(ROOT)}: not up to date (run: python scripts/i18n.py messages)")
        mo_path = po.with_suffix(".mo")
        if not mo_path.exists() or mo_path.read_bytes() != mo:
            problems.append(f"{mo_path.relative_to(ROOT)}: not compiled from the .po (run: python scripts/i18n.py messages)")
        return problems
    po.parent.mkdir(parents=True, exist_ok=True)
    po.write_text(text, encoding="utf-8")
    po.with_suffix(".mo").write_bytes(mo)
    return problems


SWITCH = re.compile(r'(<a class="[^"]*\bcourse-language-switch\b[^"]*" href=")([^"]*)("\s+data-counterpart-page=")([^"]*)(")')


def relink(site: Path, lang: str = "zh") -> int:
    """Point every page's language link at its counterpart if the other edition has it, else at
    the other edition's landing page (an English page is not rebuilt when a Chinese page is
    published, so its link is refreshed here, after both builds). Returns the links changed."""
    site = Path(site)
    changed = 0
    editions = [(site, site / lang, f"{lang}/"), (site / lang, site, "../")]
    for here, other, root in editions:
        if not other.is_dir() or not here.is_dir():
            continue
        for page in here.rglob("*.html"):
            rel = page.relative_to(here)
            if here == site and rel.parts[0] == lang:
                continue                               # the other edition's own pages
            text = page.read_text(encoding="utf-8")

            def fix(m: re.Match) -> str:
                target = m.group(4)
                if not (other / f"{target}.html").is_file():
                    target = "book/intro"
                href = "../" * (len(rel.parts) - 1) + root + target + ".html"
                return m.group(1) + href + m.group(3) + m.group(4) + m.group(5)

            new = SWITCH.sub(fix, text)
            if new != text:
                page.write_text(new, encoding="utf-8")
                changed += 1
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["status", "todo", "skeleton", "lint", "build", "relink", "messages"])
    ap.add_argument("page", nargs="?")
    ap.add_argument("--lang", default="zh")
    ap.add_argument("--check", action="store_true", help="build: only list the files that are not up to date")
    a = ap.parse_args(argv)
    if a.command == "messages":
        probs = messages(a.lang, check=a.check)
        for pr in probs:
            print(pr)
        if not a.check:
            print(f"{po_path(a.lang).relative_to(ROOT)} and its .mo written; {len(probs)} message(s) to translate")
        return 1 if probs else 0
    if a.command == "relink":
        site = Path(a.page or ROOT / "_build" / "html")
        print(f"i18n relink: {relink(site, a.lang)} page(s) of {site} now link to their counterpart")
        return 0
    if a.command == "build":
        files = build(a.lang, check=a.check)
        toc = edition_files(a.lang)[f"{a.lang}/_toc.yml"]
        n = len(_toc_stems(__import__("yaml").safe_load(toc)))
        if a.check:
            for f in files:
                print(f"{f}: not up to date (run: python scripts/i18n.py build)")
            return 1 if files else 0
        print(f"{a.lang}/: {n} page(s) published, {len(files)} file(s) written or removed"
              + "".join(f"\n  {f}" for f in files))
        return 0
    if a.command == "skeleton":
        if not a.page:
            ap.error("skeleton needs a PAGE")
        page = page_path(a.page)
        n = skeleton(a.lang, page)
        print(f"{translation_file(a.lang, page).relative_to(ROOT)}: {n} unit(s) added as todo")
        return 0
    todo = [page_path(a.page)] if a.page else pages()
    bad = 0
    if a.command == "lint":
        for page in todo:
            for uid, diff in lint(a.lang, page):
                bad += 1
                print(f"{page.stem} unit {uid}: {diff}")
        n = sum(1 for page in todo for t in read_translations(translation_file(a.lang, page)) if not t.todo)
        print(f"lint: {n} translated unit(s) checked, {bad} difference(s)", file=sys.stderr)
        return 1 if bad else 0
    for page in todo:
        probs = problems(a.lang, page)
        bad += len(probs)
        if a.command == "status":
            n = len(english_units(page))
            n_ok = n - len({u for u, r in probs if r != "no such English unit any more"})
            kinds = {r: sum(1 for _, x in probs if x == r) for _, r in probs}
            detail = ", ".join(f"{k}: {v}" for k, v in kinds.items()) or "complete"
            if not probs:
                n_lint = len(lint(a.lang, page))
                bad += n_lint
                detail = f"lint: {n_lint} difference(s), not published" if n_lint else "complete, published"
            else:
                detail += ", not published"
            print(f"{page.name:34} {n_ok:3}/{n:<3} {detail}")
        else:
            for uid, reason in probs:
                print(f"{page.stem} unit {uid}: {reason}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
