"""Helpers shared by the grader's tests: the fixture course and submissions made from it."""
from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import nbformat

from minigrad.course.notebooks import fill_solutions, make_student_notebook

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "course"
FIXTURE_NB = FIXTURE / "book" / "99_fixture.ipynb"
NAME = "99_fixture.ipynb"


def editions():
    """(instructor notebook, student edition, student edition with the instructor's solutions)."""
    instructor = nbformat.read(FIXTURE_NB, as_version=4)
    student = make_student_notebook(instructor)
    return instructor, student, fill_solutions(student, instructor)


def stub_cell(nb, ex_id):
    return next(c for c in nb.cells if c.get("metadata", {}).get("minigrad_course", {}).get("exercise") == ex_id
                and c.metadata["minigrad_course"]["role"] == "stub")


def variant(base, *, before: str = "", **edits):
    """A copy of ``base``; ``edits`` map ``ch99_ex1`` to a function of that stub cell's source; ``before``
    is a code cell inserted after the first code cell (the imports)."""
    nb = nbformat.from_dict(json.loads(json.dumps(base)))
    for ex_id, fn in edits.items():
        cell = stub_cell(nb, ex_id.replace("_", "-"))
        cell.source = fn(cell.source)
    if before:
        first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
        nb.cells.insert(first + 1, nbformat.v4.new_code_cell(before))
    return nb


def write_class(subs: Path, notebooks: dict) -> None:
    for who, nb in notebooks.items():
        (subs / who).mkdir(parents=True, exist_ok=True)
        if isinstance(nb, (str, bytes)):
            (subs / who / NAME).write_bytes(nb.encode() if isinstance(nb, str) else nb)
        else:
            nbformat.write(nb, subs / who / NAME)


def tree(root: Path) -> dict:
    return {str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir")
            for p in sorted(root.rglob("*"))}


def processes_with(marker: str) -> list[int]:
    """Pids of the processes whose command line contains ``marker`` (any user)."""
    found = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit() or int(p.name) == os.getpid():
            continue
        try:
            cmd = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmd:
            found.append(int(p.name))
    return found


def processes_under(folder) -> list[int]:
    """Pids of the processes whose working directory is in ``folder`` (a notebook's kernel works in its copy)."""
    root = os.path.realpath(folder)
    found = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit() or int(p.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(p / "cwd")
        except OSError:
            continue
        if cwd == root or cwd.startswith(root + os.sep):
            found.append(int(p.name))
    return found


def wait_until(pred, timeout: float, step: float = 0.2) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step)
    return bool(pred())
