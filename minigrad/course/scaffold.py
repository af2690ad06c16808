"""``minigrad-course new-exercise``: the skeleton of an instructor's own exercise, in the book repository.

It writes ``course/checks/<id>.py`` (the check, registered with ``@exercise``) and appends the
exercise's cells to its chapter's notebook, after the chapter's last exercise: the task box,
the collapsed solution (with ``### BEGIN SOLUTION`` markers), the check cell and the hidden
tests. Every placeholder says what to write there. Nothing in the installed package changes.
"""
from __future__ import annotations

import os
from pathlib import Path

import nbformat

from . import EXERCISE_ID
from .custom import CHECKS_DIR
from .notebooks import parse_exercises

CHECK_TEMPLATE = '''"""{title} ({id}, Exercise {number}): the check that check() and the grader run."""
from minigrad.course import CheckFailed, exercise


@exercise("{id}", points={points:g}, title="{title}", minutes={minutes:g},
          objective="TODO: what the learner can do after this exercise")
def _check(answer):
    raise CheckFailed("the check of {id} is not written yet: edit {path}")
'''


def _chapter_notebook(root: Path, chapter: int) -> Path:
    from .assignment import notebook_chapter
    from .release import book_notebooks

    for p in book_notebooks(root):
        if notebook_chapter(p.name) == chapter:
            return p
    raise FileNotFoundError(f"no notebook of chapter {chapter} in {root / 'book'} (its files start with "
                            f"{chapter:02d}_)")


def _cell(kind: str, source: str, tags=()):
    make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
    cell = make(source)
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def exercise_cells(exercise_id: str, title: str, answer: str) -> list:
    return [
        _cell("markdown", f"```{{exercise}} {title}\n:label: {exercise_id}\nTODO: the task, in a few sentences: what "
                          f"to write (`{answer}`), how it is called, and the conventions the check expects.\n```"),
        _cell("markdown", f"```{{solution-start}} {exercise_id}\n:class: dropdown\n```", ["solution"]),
        _cell("code", f"### BEGIN SOLUTION\n{answer} = None  # TODO: the instructor's solution\n### END SOLUTION",
              ["solution"]),
        _cell("markdown", "```{solution-end}\n```", ["solution"]),
        _cell("code", f'check("{exercise_id}", {answer})', ["check", "minigrad-only"]),
        _cell("code", f"### BEGIN HIDDEN TESTS\nassert {answer} is not None, \"TODO: hidden tests, each assert with "
                      f"a message the student will read\"\n### END HIDDEN TESTS", ["hidden-tests", "remove-cell"]),
    ]


def new_exercise(exercise_id: str, title: str, answer: str, *, points: float = 1, minutes: float = 10,
                 source: str | os.PathLike | None = None, log=print) -> dict:
    from .release import find_source_root

    m = EXERCISE_ID.fullmatch(exercise_id)
    if not m:
        raise ValueError(f"{exercise_id!r}: an exercise id is 'chNN-exK', e.g. 'ch03-ex4' for Exercise 3.4")
    if not answer.isidentifier():
        raise ValueError(f"--answer {answer!r}: give the Python name the student defines, e.g. HardTanhFunction")
    root = find_source_root(source)
    chapter, number = int(m.group(1)), f"{int(m.group(1))}.{int(m.group(2))}"
    nb_path = _chapter_notebook(root, chapter)
    nb = nbformat.read(nb_path, as_version=4)
    parsed = parse_exercises(nb)
    if any(e.id == exercise_id for e in parsed):
        raise ValueError(f"{nb_path.name} already has an exercise {exercise_id}")
    check_path = root / CHECKS_DIR / f"{exercise_id.replace('-', '_')}.py"
    if check_path.exists():
        raise FileExistsError(f"{check_path} exists already")
    last = max((i for e in parsed for i in [*e.solution_cells, *e.hidden_cells,
                                             *([e.check_cell] if e.check_cell is not None else [])]), default=None)
    at = len(nb.cells) if last is None else last + 1
    nb.cells[at:at] = exercise_cells(exercise_id, title, answer)
    check_path.parent.mkdir(parents=True, exist_ok=True)
    rel = check_path.relative_to(root).as_posix()
    check_path.write_text(CHECK_TEMPLATE.format(id=exercise_id, number=number, title=title.replace('"', "'"),
                                                points=points, minutes=minutes, path=rel), encoding="utf-8")
    nbformat.write(nb, nb_path)
    log(f"wrote {rel} (the check) and added 6 cells for {exercise_id} to {nb_path.relative_to(root)} after cell "
        f"{at}: the task, the solution, the check and the hidden tests. Fill in every TODO.")
    return {"check": str(check_path), "notebook": str(nb_path), "first_cell": at}
