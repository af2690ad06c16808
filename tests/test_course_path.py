"""The landing page's path through the course: its table is what the chapters and the registry say."""
import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("nbformat")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import course_path  # noqa: E402


def test_intro_table_is_current():
    """Fails when a chapter or an exercise is added, renamed or moved without regenerating the table:
    run `python scripts/course_path.py --write` and commit book/intro.md."""
    text = course_path.INTRO.read_text(encoding="utf-8")
    shown = course_path.current_block(text)
    assert shown is not None, "book/intro.md has lost its course-path markers"
    assert shown == course_path.block(), (
        "book/intro.md's course path differs from the chapters and the exercise registry: "
        "run `python scripts/course_path.py --write` and commit book/intro.md")


def test_every_chapter_is_in_the_table_and_described_by_hand():
    text = course_path.INTRO.read_text(encoding="utf-8")
    chapters = course_path.chapters()
    assert [p.name for p in chapters] == sorted(p.name for p in chapters), "the table follows _toc.yml's order"
    block = course_path.current_block(text)
    described = set(re.findall(r"^(\d+)\. ", text.split(course_path.BEGIN)[0], re.M))
    for path in chapters:
        n = str(int(path.name[:2]))
        assert f"]({path.name})" in block, f"{path.name} is missing from the table"
        assert n in described, f"chapter {n} has no hand-written description in book/intro.md's list"
        assert f"]({path.name})" in text.split(course_path.BEGIN)[0], (
            f"book/intro.md's list describes chapter {n} but does not link {path.name}")


def test_table_counts_every_exercise_of_each_chapter():
    import nbformat

    from minigrad.course.notebooks import parse_exercises

    rows = {line.split("|")[1].strip(): line for line in course_path.render().splitlines()
            if line.startswith("| ") and "](" in line}
    total = 0
    for path in course_path.chapters():
        ids = [e.id for e in parse_exercises(nbformat.read(path, as_version=4))]
        total += len(ids)
        row = next(r for k, r in rows.items() if f"]({path.name})" in k)
        cell = row.split("|")[3]
        assert cell.count("<br>") + 1 == len(ids) if ids else "none" in cell, row
    assert f"and {total} exercises" in course_path.render()


def test_reading_time_is_a_positive_multiple_of_five():
    for path in course_path.chapters():
        minutes = course_path.reading_minutes(path)
        assert minutes >= 5 and minutes % 5 == 0, (path.name, minutes)
