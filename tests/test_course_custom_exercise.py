"""The guide's "Add an exercise in 10 minutes", followed step by step on a copy of the book repository.

Each step uses the guide's own text: its commands, the check file and the three cells it prints.
Then: the learner's check() in the running chapter accepts the solution, the catalogue lists the
new exercise, the student edition ships the check and no secret, and the grader gives full marks
to the solution and 1 of 2 points (forward right, backward wrong) to a half-right submission.
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

from guide_blocks import blocks, commands, run_command as _run, section  # noqa: E402

from minigrad.course.notebooks import fill_solutions, parse_exercises  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _copy_repository(dst: Path) -> None:
    """What an instructor's clone holds for the course tools: the book and its configuration."""
    shutil.copytree(ROOT / "book", dst / "book", ignore=shutil.ignore_patterns(".ipynb_checkpoints", "_build"))
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(ROOT / name, dst / name)


def _cells_of(nb, exercise_id):
    ex = next(e for e in parse_exercises(nb) if e.id == exercise_id)
    task = next(c for c in nb.cells if c.cell_type == "markdown" and f":label: {exercise_id}" in c.source)
    return task, nb.cells[ex.solution_cells[0]], nb.cells[ex.hidden_cells[0]], nb.cells[ex.check_cell]


def test_add_an_exercise_in_ten_minutes(tmp_path):
    repo = tmp_path / "course-repo"
    _copy_repository(repo)
    steps = blocks(section("Add an exercise in 10 minutes"))
    by_caption = {b.caption: b for b in steps if b.caption}
    bash = [b for b in steps if b.lang == "bash"]

    # 1. the skeleton
    (scaffold,) = commands(bash[0])
    _run(scaffold, repo)
    check_file = repo / "course" / "checks" / "ch03_ex4.py"
    assert check_file.exists() and "TODO" in check_file.read_text()
    nb_path = repo / "book" / "03_relu.ipynb"
    nb = nbformat.read(nb_path, as_version=4)
    task, solution, hidden, check_cell = _cells_of(nb, "ch03-ex4")
    assert check_cell.source == 'check("ch03-ex4", HardTanhFunction)'
    ids = [e.id for e in parse_exercises(nb)]
    assert ids == ["ch03-ex1", "ch03-ex2", "ch03-ex3", "ch03-ex4"]

    # 2. the check, as the guide prints it
    check_file.write_text(by_caption["course/checks/ch03_ex4.py"].body)
    # 3. the cells, as the guide prints them
    task.source = by_caption["book/03_relu.ipynb, the task cell"].body.strip()
    solution.source = by_caption["book/03_relu.ipynb, the solution cell"].body.strip()
    hidden.source = by_caption["book/03_relu.ipynb, the hidden-tests cell"].body.strip()
    nbformat.write(nb, nb_path)

    # 4. try it: the chapter runs top to bottom and the new check passes, in the learner's check()
    ran = nbformat.read(nb_path, as_version=4)
    env_before = os.environ.pop("MINIGRAD_COURSE_EXTRA_EXERCISES", None)
    try:
        nbclient.NotebookClient(ran, timeout=300, kernel_name="python3",
                                resources={"metadata": {"path": str(repo / "book")}}).execute()
    finally:
        if env_before is not None:
            os.environ["MINIGRAD_COURSE_EXTRA_EXERCISES"] = env_before
    out = "".join(o.get("text", "") for o in _cells_of(ran, "ch03-ex4")[3].outputs)
    assert out.startswith("✓ Exercise 3.4 (Hard tanh): 2/2 points"), out
    assert "✓ forward [1/1]" in out and "✓ backward [1/1]" in out

    # 5. catalogue, release, grade
    catalogue_cmd, release_cmd, grade_cmd = commands(bash[1])
    _run(catalogue_cmd, repo)
    guide = (repo / "book" / "instructor_guide.md").read_text()
    row = next(line for line in guide.splitlines() if line.startswith("| 3.4 `ch03-ex4`"))
    assert "Hard tanh (course/checks)" in row and "| 2 (forward 1, backward 1) | 15 |" in row and row.endswith("| yes |")
    assert "**Chapter 3. ReLU as a custom Function**: 4 exercises, 9 graded points, about 75 minutes." in guide

    _run(release_cmd, repo)
    rel = repo / "release"
    shipped = rel / "notebooks" / "course" / "checks" / "ch03_ex4.py"
    assert shipped.read_text() == check_file.read_text()
    assert json.loads((rel / "assignment.json").read_text())["points"] == 9
    student = nbformat.read(rel / "notebooks" / "03_relu.ipynb", as_version=4)
    text = json.dumps(student)
    assert "BEGIN HIDDEN TESTS" not in text and "the gradient is 0 at -1 and at 1" not in text
    assert "inside = (input > -1) & (input < 1)" not in text
    stub = next(c for c in student.cells if "class HardTanhFunction" in c.source)
    assert stub.source.count("raise NotImplementedError()") == 2

    # the student's check() finds the shipped check next to the released notebook
    probe = subprocess.run([sys.executable, "-c", "from minigrad.course import run_check\n"
                            "print(run_check('ch03-ex4', None).message.splitlines()[0])"],
                           cwd=rel / "notebooks", capture_output=True, text=True,
                           env={k: v for k, v in os.environ.items() if k != "MINIGRAD_COURSE_EXTRA_EXERCISES"})
    assert probe.stdout.startswith("✗ Exercise 3.4 (Hard tanh): 0/2 points"), probe.stdout + probe.stderr

    instructor = nbformat.read(nb_path, as_version=4)
    full = fill_solutions(student, instructor)
    half = nbformat.from_dict(json.loads(json.dumps(full)))
    cell = next(c for c in half.cells if "class HardTanhFunction" in c.source)
    wrong = re.sub(r"return torch\.where\(inside, grad_output,\s*torch\.zeros_like\(grad_output\)\)",
                   "return -grad_output", cell.source)  # backward: wrong sign, no mask
    assert wrong != cell.source
    cell.source = wrong
    for who, book in (("full", full), ("half", half)):
        (repo / "submissions" / who).mkdir(parents=True)
        nbformat.write(book, repo / "submissions" / who / "03_relu.ipynb")
    # a student who hands in the whole released folder, checks included: graded as any other
    shutil.copytree(rel / "notebooks" / "course", repo / "submissions" / "full" / "course")
    _run(grade_cmd, repo)
    rows = list(csv.DictReader(open(repo / "gradebook" / "grades.csv", newline="")))
    got = {(r["student"], r["exercise"]): r for r in rows}
    assert [got[("full", f"ch03-ex{k}")]["points"] for k in (1, 2, 3, 4)] == ["2", "2", "3", "2"]
    half_row = got[("half", "ch03-ex4")]
    assert (half_row["points"], half_row["max_points"], half_row["parts"]) == ("1", "2", "forward 1/1; backward 0/1")
    feedback = " ".join(half_row["feedback"].split())
    assert "✗ backward [0/1]" in feedback and "the gradient is 0 at -1 and at 1" in feedback
    totals = {r["student"]: (r["points"], r["max_points"]) for r in csv.DictReader(open(repo / "gradebook" / "totals.csv"))}
    assert totals == {"full": ("9", "9"), "half": ("8", "9")}
