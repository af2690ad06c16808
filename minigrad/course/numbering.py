"""One numbering for exercises: check id ``chNN-exK`` = Sphinx label = gradebook row = "Exercise N.K".

A learner sees "Exercise 3.1" in the box on the page, in the text ("see Exercise 3.1"), in the
solution's title and in the header of ``check()``'s feedback; the notebook calls
``check("ch03-ex1", ...)`` and the gradebook has a row ``ch03-ex1``. The number is *computed*
from the id, here, by the Sphinx extension ``_ext/exercise_numbers.py`` (the website) and by
``check()`` (the feedback), so the two cannot disagree; ``tests/test_exercise_numbering.py``
fails when an id does not match its chapter file or its position in the chapter, or when the
text refers to an exercise that does not exist.
"""
from __future__ import annotations

import re

__all__ = ["EXERCISE_ID", "TEXT_REFERENCE", "parse_id", "exercise_number", "display_name", "chapter_of_file"]

EXERCISE_ID = re.compile(r"ch(\d{2})-ex([1-9]\d*)")
#: how the text refers to an exercise: "Exercise 3.1" / "exercise 3.1" (also "Exercises 3.1 and 3.2")
TEXT_REFERENCE = re.compile(r"\b[Ee]xercises?\s+(\d+)\.(\d+)\b")
_CHAPTER_FILE = re.compile(r"(\d{2})_")


def parse_id(exercise_id: str) -> tuple[int, int] | None:
    """``"ch03-ex1"`` -> ``(3, 1)``; ``None`` for an id that does not follow the convention."""
    m = EXERCISE_ID.fullmatch(exercise_id)
    return (int(m.group(1)), int(m.group(2))) if m else None


def exercise_number(exercise_id: str) -> str | None:
    """``"ch03-ex1"`` -> ``"3.1"``, the number a learner sees (``None`` if the id is not ``chNN-exK``)."""
    parsed = parse_id(exercise_id)
    return f"{parsed[0]}.{parsed[1]}" if parsed else None


def display_name(exercise_id: str) -> str:
    """``"ch03-ex1"`` -> ``"Exercise 3.1"``; any other id is shown as it is."""
    number = exercise_number(exercise_id)
    return f"Exercise {number}" if number else exercise_id


def chapter_of_file(name: str) -> int | None:
    """``"03_relu.ipynb"`` (or a Sphinx docname ``"book/03_relu"``) -> ``3``."""
    m = _CHAPTER_FILE.match(name.rsplit("/", 1)[-1])
    return int(m.group(1)) if m else None
