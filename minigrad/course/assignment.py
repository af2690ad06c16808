"""Assignments: which chapters (so which notebooks and exercises) a release hands out and a grade run scores.

``minigrad-course release --chapters 3`` writes ``DIR/assignment.json``; ``minigrad-course grade
--assignment DIR/assignment.json`` (or ``--chapters 3``) grades exactly those exercises, out of
their points. Without chapters, the assignment is the whole book.

A notebook's chapter is the number its file name starts with (``03_relu.ipynb`` is chapter 3),
or else the chapter of its exercise ids (``ch03-ex1``).
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

FORMAT = "minigrad-course assignment 1"
FILENAME = "assignment.json"


def parse_chapters(text: str | None) -> list[int] | None:
    """``"3"``, ``"3,4"``, ``"3-5"`` or ``"0, 3-4"`` -> sorted chapter numbers; None/"" -> None (the whole book)."""
    if text is None or not str(text).strip():
        return None
    out: set[int] = set()
    for piece in str(text).split(","):
        piece = piece.strip()
        m = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", piece)
        if not m:
            raise ValueError(f"--chapters {text!r}: {piece!r} is not a chapter number or a range such as 3-5")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            raise ValueError(f"--chapters {text!r}: the range {piece!r} runs backwards")
        out.update(range(lo, hi + 1))
    return sorted(out)


def notebook_chapter(name: str, exercise_ids=()) -> int | None:
    """``03_relu.ipynb`` -> 3; a notebook named otherwise: the chapter of its exercise ids, if one."""
    from .numbering import chapter_of_file, parse_id

    chapter = chapter_of_file(Path(name).name)
    if chapter is not None:
        return chapter
    chapters = {parse_id(e)[0] for e in exercise_ids if parse_id(e)}
    return chapters.pop() if len(chapters) == 1 else None


@dataclass
class Assignment:
    """What a release hands out and a grade run scores (``assignment.json``)."""

    title: str
    chapters: list | None                           # None: the whole book
    notebooks: list = field(default_factory=list)   # dicts: name, chapter, title, exercises (ids)
    exercises: list = field(default_factory=list)   # dicts: id, number, title, notebook, points, parts
    release_id: str = ""
    released_at: str = ""
    format: str = FORMAT

    @property
    def points(self) -> float:
        return float(sum(e["points"] for e in self.exercises))

    @property
    def exercise_ids(self) -> list[str]:
        return [e["id"] for e in self.exercises]

    @property
    def notebook_names(self) -> list[str]:
        return [n["name"] for n in self.notebooks]

    def points_of(self, exercise_id: str) -> float:
        return next(float(e["points"]) for e in self.exercises if e["id"] == exercise_id)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["points"] = self.points
        return {"format": d.pop("format"), **d}

    def write(self, folder: str | os.PathLike) -> Path:
        path = Path(folder) / FILENAME
        path.write_text(json.dumps(self.to_dict(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Assignment":
        path = Path(path)
        if path.is_dir():
            path = path / FILENAME
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise FileNotFoundError(f"no assignment file {path} (minigrad-course release --chapters N writes one "
                                    "into its --out folder)") from None
        except ValueError as e:
            raise ValueError(f"{path} is not valid JSON: {e}") from None
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise ValueError(f"{path} is not an assignment written by minigrad-course release "
                             f"(expected \"format\": \"{FORMAT}\")")
        try:
            return cls(title=str(d["title"]), chapters=d.get("chapters"), notebooks=list(d["notebooks"]),
                       exercises=list(d["exercises"]), release_id=str(d.get("release_id", "")),
                       released_at=str(d.get("released_at", "")))
        except (KeyError, TypeError) as e:
            raise ValueError(f"{path}: missing or malformed field {e}") from None


def _first_heading(nb) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return ""


def book_exercises(root: str | os.PathLike):
    """The book's notebooks with their gradable exercises: a list of (path, notebook, [ExerciseCells]).

    Gradable = registered as graded (or unregistered, with hidden tests) and with a check cell or
    hidden tests in the notebook: exactly what ``grade`` scores.
    """
    import nbformat

    from . import _load_exercises, registry
    from . import custom
    from .notebooks import parse_exercises
    from .release import book_notebooks

    _load_exercises()
    custom.load_folder(custom.book_checks_dir(root))
    out = []
    for path in book_notebooks(Path(root)):
        nb = nbformat.read(path, as_version=4)
        exs = [ex for ex in parse_exercises(nb)
               if (ex.check_cell is not None or ex.hidden_cells)
               and (registry[ex.id].graded if ex.id in registry else True)]
        out.append((path, nb, exs))
    return out


def build(root: str | os.PathLike, chapters: list[int] | None = None, *, title: str | None = None,
          book=None) -> Assignment:
    """The assignment of ``chapters`` (None: the whole book), from the book's notebooks and the registry."""
    from . import registry

    book = book if book is not None else book_exercises(root)
    available = sorted({c for c in (notebook_chapter(p.name, [e.id for e in exs]) for p, _, exs in book)
                        if c is not None})
    if chapters is not None:
        missing = [c for c in chapters if c not in available]
        if missing:
            raise ValueError(f"--chapters: the book has no chapter {', '.join(map(str, missing))} "
                             f"(its chapters: {', '.join(map(str, available)) or 'none'})")
    notebooks, exercises = [], []
    for path, nb, exs in book:
        chapter = notebook_chapter(path.name, [e.id for e in exs])
        if chapters is not None and chapter not in chapters:
            continue
        notebooks.append({"name": path.name, "chapter": chapter, "title": _first_heading(nb),
                          "exercises": [e.id for e in exs]})
        for ex in exs:
            reg = registry.get(ex.id)
            exercises.append({
                "id": ex.id, "number": reg.number if reg else ex.id, "title": reg.title if reg else ex.title,
                "notebook": path.name, "points": float(reg.points) if reg else 1.0,
                "parts": dict(reg.parts) if reg else {},
            })
    if title is None:
        if chapters is None:
            title = "All chapters"
        elif len(chapters) == 1 and len(notebooks) == 1 and notebooks[0]["title"]:
            title = f"Chapter {chapters[0]}: " + re.sub(r"^\d+\.\s*", "", notebooks[0]["title"])
        else:
            title = ("Chapter " if len(chapters) == 1 else "Chapters ") + ", ".join(map(str, chapters))
    a = Assignment(title=title, chapters=chapters, notebooks=notebooks, exercises=exercises)
    a.release_id = release_id(a)
    return a


def release_id(a: Assignment, when: _dt.datetime | None = None) -> str:
    """``ch03-20260501-1a2b3c``: the chapters, the day, and a hash of the exercises and points."""
    when = when or _dt.datetime.now(_dt.timezone.utc)
    a.released_at = when.replace(microsecond=0).isoformat()
    slug = "book" if a.chapters is None else "-".join(f"ch{c:02d}" for c in a.chapters)
    digest = hashlib.sha256(json.dumps([a.notebooks, a.exercises], sort_keys=True).encode()).hexdigest()[:6]
    return f"{slug}-{when:%Y%m%d}-{digest}"


def for_grading(root: str | os.PathLike, *, chapters: list[int] | None = None,
                assignment: str | os.PathLike | None = None, log=print) -> Assignment | None:
    """The assignment a grade run scores: from ``--assignment FILE``, from ``--chapters``, or None (the whole book)."""
    if assignment is not None and chapters is not None:
        raise ValueError("give either --chapters or --assignment, not both")
    if assignment is None:
        return None if chapters is None else build(root, chapters)
    a = Assignment.load(assignment)
    now = build(root, a.chapters)
    now_ids = {e["id"]: e for e in now.exercises}
    gone = [e["id"] for e in a.exercises if e["id"] not in now_ids]
    if gone:
        raise ValueError(f"{assignment} lists {', '.join(gone)}, which the book's notebooks no longer have "
                         "(or which are no longer graded): restore them, or release the assignment again")
    for e in a.exercises:
        if float(now_ids[e["id"]]["points"]) != float(e["points"]):
            log(f"note: {e['id']} is worth {now_ids[e['id']]['points']:g} points in the registry but "
                f"{e['points']:g} in {Path(assignment).name} (release {a.release_id}): graded out of "
                f"{e['points']:g}, as released")
    return a


def restrict(sources: list, a: Assignment | None) -> list:
    """The grader's source notebooks (grade.SourceNotebook) cut down to the assignment's exercises,
    each out of the assignment's points (earned points are scaled if the registry's differ)."""
    if a is None:
        return sources
    wanted = set(a.exercise_ids)
    out = []
    for src in sources:
        exs = []
        for ex in src.exercises:
            if ex["id"] in wanted:
                pts = a.points_of(ex["id"])
                exs.append({**ex, "max_points": pts, "registry_points": ex["max_points"]})
        if exs:
            src.exercises = exs
            out.append(src)
    return out
