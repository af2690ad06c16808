"""The instructor guide, followed literally: assign chapter 3, grade three submissions, import into an LMS.

In an empty folder, this runs the commands of the guide's section "Assign one chapter: the whole
path" as they are written there (the installed `minigrad-course`, the book found as an
instructor's clone would be), with the submissions the guide shows: a correct notebook saved
under a renamed file, an untouched stub, and a buggy one. Then it checks what the guide promises:
totals out of 7, the Canvas and Moodle files, the feedback lines, the log, and a student website
with no solutions, no hidden tests and no button to the instructor's repository.
"""
import csv
import json
import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")

from guide_blocks import blocks, commands, run_command as _run, section  # noqa: E402

from minigrad.course.notebooks import fill_solutions, solution_lines  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _buggy(nb):
    """ReLU6 whose mask includes both kinks (x >= 0, x <= 6): right away from them, wrong at them."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    cell = next(c for c in nb.cells if "class ReLU6Function" in c.source)
    assert "(input > 0) & (input < 6)" in cell.source
    cell.source = cell.source.replace("(input > 0) & (input < 6)", "(input >= 0) & (input <= 6)")
    return nb


def test_assign_chapter_3_as_the_guide_says(tmp_path):
    steps = blocks(section("Assign one chapter: the whole path"))
    bash = [b for b in steps if b.lang == "bash"]
    tree = next(b for b in steps if b.lang == "text" and b.body.startswith("submissions/"))
    roster = next(b for b in steps if b.caption == "roster.csv")
    assert len(bash) == 2, "the walk-through has two commands: release, then grade"

    # 1. release chapter 3
    (release_cmd,) = commands(bash[0])
    assert "--chapters 3" in release_cmd
    _run(release_cmd, tmp_path)
    rel = tmp_path / "release"
    assert sorted(p.name for p in (rel / "notebooks").glob("*.ipynb")) == ["03_relu.ipynb"]
    assignment = json.loads((rel / "assignment.json").read_text())
    assert assignment["points"] == 7 and assignment["chapters"] == [3]
    assert [e["id"] for e in assignment["exercises"]] == ["ch03-ex1", "ch03-ex2", "ch03-ex3"]

    # the student website: chapter 3 only, no solution, no hidden test, no way to the instructor's notebooks
    site = rel / "site"
    instructor = nbformat.read(ROOT / "book" / "03_relu.ipynb", as_version=4)
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html") if "_static" not in p.parts)
    assert "book/03_relu.html" in pages and not any(re.search(r"book/0[0124]_", p) for p in pages), pages
    assert not any("instructor_guide" in p for p in pages)
    secrets = solution_lines(instructor)
    for p in site.rglob("*"):
        if p.is_file() and p.suffix in (".html", ".ipynb", ".js", ".txt", ".md"):
            text = p.read_text(errors="replace")
            assert "BEGIN HIDDEN TESTS" not in text and "### BEGIN SOLUTION" not in text, p
            if "_static" not in p.parts:  # no launch button, no repository button: no way to the instructor's files
                assert "mybinder.org" not in text and "colab.research.google.com" not in text, f"{p}: a launch button"
                assert 'href="https://github.com' not in text, f"{p}: a repository link"
            leaked = [s for s in secrets if s in text]
            assert not leaked, (p, leaked[:3])
    page = (site / "book" / "03_relu.html").read_text()
    assert "Solution to" not in page and "collapsed solution" not in page
    assert re.findall(r'href="([^"]*\.ipynb)"', page) == ["../_sources/book/03_relu.ipynb"]  # the download button
    downloads = sorted(p.name for p in (site / "_sources").rglob("*.ipynb"))
    assert downloads == ["03_relu.ipynb"]
    student_copy = json.loads(next((site / "_sources").rglob("03_relu.ipynb")).read_text())
    assert student_copy["metadata"]["minigrad_course"]["edition"] == "student"

    # 2. the submissions the guide shows: a correct one renamed, a stub, a buggy one
    files = dict(re.match(r"\s*(\w+)/(.+\.ipynb)\s*$", line).groups() for line in tree.body.splitlines()[1:] if line.strip())
    assert list(files) == ["alice", "bob", "carol"] and files["alice"] != "03_relu.ipynb"
    student = nbformat.read(rel / "notebooks" / "03_relu.ipynb", as_version=4)
    correct = fill_solutions(student, instructor)
    for who, nb in (("alice", correct), ("bob", student), ("carol", _buggy(correct))):
        (tmp_path / "submissions" / who).mkdir(parents=True)
        nbformat.write(nb, tmp_path / "submissions" / who / files[who])

    # 3. the roster, as printed
    (tmp_path / "roster.csv").write_text(roster.body)

    # 4. grade
    (grade_cmd,) = commands(bash[1])
    assert "--assignment release/assignment.json" in grade_cmd and "--roster roster.csv" in grade_cmd
    _run(grade_cmd, tmp_path)
    book = tmp_path / "gradebook"

    totals = list(csv.DictReader(open(book / "totals.csv", newline="")))
    assert [(t["student"], t["points"], t["max_points"]) for t in totals] == [
        ("alice", "7", "7"), ("bob", "0", "7"), ("carol", "4", "7")]
    rows = json.loads((book / "grades.json").read_text())["rows"]
    assert len(rows) == 9 and {r["exercise"] for r in rows} == {"ch03-ex1", "ch03-ex2", "ch03-ex3"}
    fb = {(r["student"], r["exercise"]): " ".join(r["feedback"].split()) for r in rows}  # feedback wraps at 79
    assert all(fb[("alice", e)].startswith("✓") for e in ("ch03-ex1", "ch03-ex2", "ch03-ex3"))
    for e in ("ch03-ex1", "ch03-ex2", "ch03-ex3"):
        assert "replace the `raise NotImplementedError()` stub" in fb[("bob", e)], fb[("bob", e)]
    assert ("at exactly x = 0 its gradient is 1 times grad_output; the convention there is 0 (PyTorch's relu6"
            in fb[("carol", "ch03-ex3")]), fb[("carol", "ch03-ex3")]
    assert fb[("carol", "ch03-ex1")].startswith("✓")

    # 5. the LMS files
    canvas = list(csv.reader(open(book / "canvas.csv", newline="")))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                         "Chapter 3: ReLU as a custom Function"]
    assert canvas[1] == ["Points Possible", "", "", "", "", "7"]
    assert canvas[2:] == [["Doe, Alice", "1001", "S1001", "adoe", "Section 1", "7"],
                          ["Roe, Bob", "1002", "S1002", "broe", "Section 1", "0"],
                          ["Poe, Carol", "1003", "S1003", "cpoe", "Section 1", "4"]]
    moodle = list(csv.reader(open(book / "moodle.csv", newline="")))
    assert moodle == [["Email address", "Chapter 3: ReLU as a custom Function"], ["adoe@example.edu", "7"],
                      ["broe@example.edu", "0"], ["cpoe@example.edu", "4"]]
    assert (book / "grading_log.txt").read_text() == "nothing to report\n"
    assert not list((tmp_path / "submissions").rglob(".grading-*")) and not list(book.glob(".grading-*"))
