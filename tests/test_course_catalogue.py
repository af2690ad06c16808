"""The exercise catalogue: the instructor guide's table is the registry's, and every exercise declares its fields."""
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("nbformat")

from minigrad.course import catalogue  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "book" / "instructor_guide.md"


@pytest.fixture(autouse=True)
def _registry_restored():
    """Checks loaded from a test's course/checks stay out of the registry that later tests (in the
    same process: pytest-xdist runs several files per worker) read."""
    from minigrad.course import _load_exercises, registry

    _load_exercises()  # the shipped exercises, registered once per process: kept by the restore below
    before = dict(registry)
    yield
    registry.clear()
    registry.update(before)


def test_guide_catalogue_matches_the_registry():
    """Fails when an exercise is added, removed or changed (points, minutes, objective, graded) without
    regenerating the guide's table: run `minigrad-course catalogue --write`."""
    rows = catalogue.entries(ROOT)
    in_guide = catalogue.guide_block(GUIDE.read_text(encoding="utf-8"))
    assert in_guide is not None, "book/instructor_guide.md has lost its catalogue markers"
    assert in_guide == catalogue.block(rows), (
        "book/instructor_guide.md's exercise catalogue differs from the exercise registry: "
        "run `minigrad-course catalogue --write` and commit the guide")
    ids = [r["id"] for r in rows]
    assert ids[:4] == ["ch00-ex1", "ch01-ex1", "ch01-ex2", "ch01-ex3"] and len(ids) == len(set(ids))
    assert all(r["graded"] == "yes" for r in rows), [r for r in rows if r["graded"] != "yes"]
    assert sum(r["points"] for r in rows if r["chapter"] == 3) == 7


def test_every_exercise_needs_minutes_and_objective(tmp_path):
    checks = tmp_path / "course" / "checks"
    checks.mkdir(parents=True)
    (checks / "late.py").write_text(
        "from minigrad.course import exercise\n\n"
        "@exercise('ch42-ex9', points=2, title='No fields yet')\n"
        "def _(answer):\n    return True\n")
    with pytest.raises(catalogue.CatalogueError) as e:
        catalogue.entries(tmp_path)
    msg = str(e.value)
    assert "ch42-ex9" in msg and str(checks / "late.py") in msg
    assert "minutes=<estimated minutes" in msg and 'objective="<what the learner can do' in msg


def test_a_new_chapter_is_picked_up(tmp_path):
    checks = tmp_path / "course" / "checks"
    checks.mkdir(parents=True)
    # chapter 42: a chapter the book does not have (the registry's own chapters would add their exercises)
    (checks / "ch42.py").write_text(
        "from minigrad.course import exercise\n\n"
        "@exercise('ch42-ex1', points=3, title='Double backward', minutes=30, objective='make it twice-differentiable',"
        " parts={'first': 1, 'second': 2})\n"
        "def _(answer):\n    return True\n\n"
        "@exercise('ch42-ex2', points=1, title='Warm-up', minutes=5, objective='practice', graded=False)\n"
        "def _(answer):\n    return True\n")
    rows = {r["id"]: r for r in catalogue.entries(tmp_path)}
    assert rows["ch42-ex1"]["graded"] == "no (in no notebook)" and rows["ch42-ex2"]["graded"] == "no (practice)"
    table = catalogue.render(list(rows.values()))
    assert "| 42.1 `ch42-ex1` | Double backward (course/checks) | 3 (first 1, second 2) | 30 |" in table
    assert "**Chapter 42**: 2 exercises, 0 graded points, about 35 minutes." in table


def test_catalogue_command_checks_and_writes(tmp_path):
    import shutil

    for name in ("_toc.yml", "_config.yml"):
        shutil.copy2(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "book", tmp_path / "book")
    guide = tmp_path / "book" / "instructor_guide.md"
    cmd = [sys.executable, "-m", "minigrad.course.cli", "catalogue", "--source", str(tmp_path)]
    assert subprocess.run(cmd + ["--check"], capture_output=True).returncode == 0
    guide.write_text(guide.read_text().replace("| Leaky ReLU |", "| Leaky ReLU (edited by hand) |"))
    stale = subprocess.run(cmd + ["--check"], capture_output=True, text=True)
    assert stale.returncode == 1 and "catalogue --write" in stale.stderr
    assert subprocess.run(cmd + ["--write"], capture_output=True).returncode == 0
    assert guide.read_text() == GUIDE.read_text()
