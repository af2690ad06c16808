"""The exercise catalogue: one table of every exercise, generated from the exercise registry.

Each exercise declares its catalogue fields where it is registered (``@exercise(..., minutes=,
objective=, graded=)``), in ``minigrad/course/exercises/chNN.py`` or in the book's
``course/checks/``. A new chapter module is picked up by itself. ``minigrad-course catalogue
--write`` puts the table into ``book/instructor_guide.md`` between two markers;
``tests/test_course_catalogue.py`` fails when the guide's copy and the registry differ.
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

BEGIN = ("<!-- BEGIN EXERCISE CATALOGUE: generated from the exercise registry by "
         "`minigrad-course catalogue --write`; do not edit by hand -->")
END = "<!-- END EXERCISE CATALOGUE -->"
GUIDE = Path("book") / "instructor_guide.md"


class CatalogueError(ValueError):
    """An exercise cannot be catalogued (missing fields): the message says which, and where."""


def _package_exercise_dir() -> Path:
    return Path(__file__).resolve().parent / "exercises"


def _chapter_titles(root: Path) -> dict[int, str]:
    import json

    from .assignment import notebook_chapter
    from .release import book_notebooks

    titles: dict[int, str] = {}
    for path in book_notebooks(root):
        ch = notebook_chapter(path.name)
        if ch is None or ch in titles:
            continue
        try:
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        except (OSError, ValueError, KeyError):
            continue
        for cell in cells:
            src = "".join(cell.get("source", "")) if cell.get("cell_type") == "markdown" else ""
            m = re.search(r"^#\s+(?:\d+\.\s*)?(.+)$", src, re.M)
            if m:
                titles[ch] = m.group(1).strip()
                break
    return titles


def _in_notebooks(root: Path) -> dict[str, str]:
    """exercise id -> the notebook whose check cell or hidden tests grade it."""
    import nbformat

    from .notebooks import parse_exercises
    from .release import book_notebooks

    out = {}
    for path in book_notebooks(root):
        for ex in parse_exercises(nbformat.read(path, as_version=4)):
            if ex.check_cell is not None or ex.hidden_cells:
                out.setdefault(ex.id, path.name)
    return out


def entries(root: str | os.PathLike) -> list[dict]:
    """Every exercise of the package's chapters and of the book's own checks, in chapter order."""
    from . import _load_exercises, custom, registry

    root = Path(root)
    _load_exercises()
    custom.load_folder(custom.book_checks_dir(root))
    homes = [_package_exercise_dir(), custom.book_checks_dir(root).resolve()]
    chosen = [ex for ex in registry.values()
              if ex.origin and any(Path(ex.origin.rsplit(":", 1)[0]).resolve().is_relative_to(h) for h in homes)]
    problems = []
    for ex in chosen:
        missing = ex.missing_metadata()
        if missing:
            problems.append(f"{ex.id} ({ex.origin}): add " + " and ".join(
                {"minutes": "minutes=<estimated minutes, a number>",
                 "objective": "objective=\"<what the learner can do after it, one line>\""}[m] for m in missing)
                + " to its @exercise(...)")
    if problems:
        raise CatalogueError("the exercise catalogue needs every exercise's minutes and objective, declared where "
                             "it is registered:\n  " + "\n  ".join(problems))
    titles = _chapter_titles(root)
    where = _in_notebooks(root)
    rows = []
    for ex in sorted(chosen, key=lambda e: (e.chapter, int(e.id.rsplit("ex", 1)[1]))):
        if not ex.graded:
            graded = "no (practice)"
        elif ex.id not in where:
            graded = "no (in no notebook)"
        else:
            graded = "yes"
        rows.append({"id": ex.id, "number": ex.number, "chapter": ex.chapter,
                     "chapter_title": titles.get(ex.chapter, ""), "title": ex.title, "points": ex.points,
                     "parts": dict(ex.parts), "minutes": ex.minutes, "objective": ex.objective, "graded": graded,
                     "notebook": where.get(ex.id, ""),
                     "custom": Path(ex.origin.rsplit(":", 1)[0]).resolve().is_relative_to(homes[1])})
    return rows


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(rows: list[dict]) -> str:
    """The catalogue as Markdown: per chapter, a line with its totals and a table of its exercises
    (id, title, points, estimated minutes, learning objective, graded)."""
    out = []
    for ch in sorted({r["chapter"] for r in rows}):
        rs = [r for r in rows if r["chapter"] == ch]
        pts = sum(r["points"] for r in rs if r["graded"] == "yes")
        mins = sum(r["minutes"] for r in rs)
        name = f"Chapter {ch}" + (f". {rs[0]['chapter_title']}" if rs[0]["chapter_title"] else "")
        count = f"{len(rs)} exercise{'s' if len(rs) != 1 else ''}"
        out += [f"**{_cell(name)}**: {count}, {pts:g} graded point{'s' if pts != 1 else ''}, "
                f"about {mins:g} minutes.", "",
                "| Exercise | Title | Points | Minutes | Learning objective | Graded |", "|---|---|---|---|---|---|"]
        for r in rs:
            pts_cell = f"{r['points']:g}"
            if r["parts"]:
                pts_cell += " (" + ", ".join(f"{k} {v:g}" for k, v in r["parts"].items()) + ")"
            title = r["title"] + (" (course/checks)" if r["custom"] else "")
            out.append(f"| {r['number']} `{r['id']}` | {_cell(title)} | {pts_cell} | {r['minutes']:g} | {_cell(r['objective'])} "
                       f"| {r['graded']} |")
        out.append("")
    return "\n".join(out).rstrip()


def block(rows: list[dict]) -> str:
    return f"{BEGIN}\n\n{render(rows)}\n\n{END}"


def guide_block(text: str) -> str | None:
    """The catalogue block as it stands in the guide (None if the markers are missing)."""
    i, j = text.find(BEGIN), text.find(END)
    return None if i < 0 or j < i else text[i: j + len(END)]


def update(text: str, rows: list[dict]) -> str:
    old = guide_block(text)
    if old is None:
        raise CatalogueError(f"the guide has no catalogue markers: put the two lines\n{BEGIN}\n{END}\n"
                             "where the table belongs")
    return text.replace(old, block(rows))


def main(source=None, *, write: bool = False, check: bool = False) -> int:
    from .release import find_source_root

    root = find_source_root(source)
    rows = entries(root)
    guide = root / GUIDE
    if not (write or check):
        print(render(rows))
        return 0
    text = guide.read_text(encoding="utf-8")
    new = update(text, rows)
    if check:
        if new != text:
            print(f"{guide}: the exercise catalogue is stale; run `minigrad-course catalogue --write`", file=sys.stderr)
            return 1
        print(f"{guide}: the exercise catalogue is current ({len(rows)} exercises)")
        return 0
    if new != text:
        guide.write_text(new, encoding="utf-8")
    print(f"{guide}: exercise catalogue written ({len(rows)} exercises)")
    return 0
