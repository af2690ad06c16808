"""Course tooling for "Inside autograd.Function": self-checking exercises and the instructor's CLI.

In a chapter notebook::

    from minigrad.course import check
    check("ch03-ex1", LeakyReLU)

prints specific feedback (a line starting with "✓" when the answer is right) and returns a
:class:`CheckResult` (``passed``, ``points``, ``max_points``, ``message``).

Chapter writers register exercises in ``minigrad/course/exercises/chNN.py``::

    from minigrad.course import exercise
    from minigrad.course.diagnose import diagnose_function

    @exercise("ch03-ex1", points=2, title="Leaky ReLU as a Function")
    def _(answer):
        return diagnose_function(answer, reference=lambda x: ..., inputs=[(4, 5)], kinks=[0.0])

The engine (``minigrad`` itself) never imports this package. See ``API.md`` next to this file.
"""
from __future__ import annotations

import importlib
import textwrap
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

from .numbering import display_name

__all__ = ["check", "exercise", "CheckResult", "CheckFailed", "registry", "get_exercise", "diagnose_function"]

PASS_MARK = "✓"
FAIL_MARK = "✗"


class CheckFailed(Exception):
    """Raise from a registered check to fail it with this message as the feedback."""


@dataclass
class CheckResult:
    """What ``check`` returns (and the diagnose helpers produce)."""

    passed: bool
    message: str
    points: float = 0.0
    max_points: float = 0.0
    exercise_id: str = ""
    title: str = ""
    details: dict = field(default_factory=dict)
    _printed: bool = field(default=False, repr=False, compare=False)

    def __bool__(self) -> bool:
        return bool(self.passed)

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return (f"CheckResult(exercise_id={self.exercise_id!r}, passed={self.passed}, "
                f"points={self.points:g}/{self.max_points:g})")

    def _ipython_display_(self) -> None:  # check() already printed the feedback: show it only once
        if not self._printed:
            print(self.message)

    def as_dict(self) -> dict:
        return {"exercise": self.exercise_id, "title": self.title, "passed": bool(self.passed),
                "points": float(self.points), "max_points": float(self.max_points), "message": self.message}


@dataclass
class Exercise:
    id: str
    points: float
    title: str
    func: Callable[..., Any]


registry: dict[str, Exercise] = {}
last_result: "CheckResult | None" = None  # the latest check() result (nbgrader test cells assert on it)


def exercise(id: str, points: float = 1, title: str = "") -> Callable:
    """Register the checker of exercise ``id`` (e.g. ``"ch03-ex1"``), worth ``points``.

    The decorated function receives the learner's answer (plus any keywords given to ``check``)
    and either returns a :class:`CheckResult` (e.g. from ``diagnose_function``), a bool, a
    ``(bool, message)`` pair, or a message string (= passed); or raises :class:`CheckFailed` /
    ``AssertionError`` with the feedback as its message.
    """
    def deco(func: Callable) -> Callable:
        registry[id] = Exercise(id=id, points=float(points), title=title or id, func=func)
        return func
    return deco


def _load_exercises() -> None:
    mod = importlib.import_module("minigrad.course.exercises")
    load_extra = getattr(mod, "load_extra", None)
    if load_extra is not None:  # the environment variable may have changed since the first import
        load_extra()


def get_exercise(exercise_id: str) -> Exercise:
    if exercise_id not in registry:
        _load_exercises()
    if exercise_id not in registry:
        known = ", ".join(sorted(registry)) or "none"
        raise KeyError(f"Unknown exercise {exercise_id!r}. Registered exercises: {known}.")
    return registry[exercise_id]


def _normalise(value: Any) -> tuple[bool, str, dict]:
    if isinstance(value, CheckResult):
        return bool(value.passed), value.message, value.details
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], bool):
        return value[0], str(value[1]), {}
    if isinstance(value, str):
        return True, value, {}
    if value is None or value is True:
        return True, "all checks passed.", {}
    return bool(value), "" if value else "the answer is not right yet.", {}


def _student_frame(tb) -> str:
    """The last traceback line that is not inside the course tooling: where the learner's code failed."""
    frames = [f for f in traceback.extract_tb(tb) if "minigrad/course" not in f.filename.replace("\\", "/")]
    if not frames:
        return ""
    f = frames[-1]
    where = f"line {f.lineno} of {f.name}()" if f.name != "<module>" else f"line {f.lineno}"
    return f" (at {where}: `{(f.line or '').strip()}`)"


def run_check(exercise_id: str, answer: Any, **kw: Any) -> CheckResult:
    """Run the registered check without printing; never raises for a wrong answer."""
    try:
        ex = get_exercise(exercise_id)
    except KeyError as e:
        return CheckResult(False, f"{FAIL_MARK} {e.args[0]}", 0.0, 0.0, exercise_id, exercise_id)
    try:
        passed, msg, details = _normalise(ex.func(answer, **kw))
    except (CheckFailed, AssertionError) as e:
        passed, msg, details = False, str(e) or type(e).__name__, {}
    except NotImplementedError as e:
        passed, details = False, {}
        msg = "your code raised NotImplementedError: replace the `raise NotImplementedError()` stub with your solution."
        if str(e) and "YOUR CODE" not in str(e):
            msg += f" ({e})"
    except Exception as e:  # the learner's code raised: report it, don't crash the notebook
        passed, details = False, {}
        msg = f"your code raised {type(e).__name__}: {e}{_student_frame(e.__traceback__)}"
    pts = ex.points if passed else 0.0
    # the header names the exercise as the page does: "Exercise 3.1 (Leaky ReLU)" for ch03-ex1
    head = f"{PASS_MARK if passed else FAIL_MARK} {display_name(ex.id)} ({ex.title}): {pts:g}/{ex.points:g} points"
    body = msg.strip()
    message = head + (f"\n{_indent(body)}" if body else "")
    return CheckResult(passed, message, pts, ex.points, ex.id, ex.title, details)


WIDTH = 76  # feedback lines wrap here: they must fit the book's text column and a notebook


def _indent(text: str) -> str:
    """Indent the feedback by two spaces and wrap long lines (continuations under their text)."""
    out = []
    for line in text.splitlines():
        if not line:
            out.append(line)
            continue
        line = "  " + line
        lead = len(line) - len(line.lstrip())
        hang = lead + (2 if line.lstrip().startswith("- ") else 0)
        out.append(textwrap.fill(line.strip(), WIDTH, initial_indent=" " * lead, subsequent_indent=" " * hang,
                                 break_long_words=False, break_on_hyphens=False)
                   if len(line) > WIDTH else line)
    return "\n".join(out)


def check(exercise_id: str, answer: Any = None, **kw: Any) -> CheckResult:
    """Check the learner's answer to ``exercise_id``, print specific feedback and return it."""
    global last_result
    res = run_check(exercise_id, answer, **kw)
    print(res.message)
    res._printed = True
    last_result = res
    return res


def __getattr__(name: str):
    if name in ("diagnose_function", "diagnose"):
        mod = importlib.import_module("minigrad.course.diagnose")
        return mod if name == "diagnose" else mod.diagnose_function
    raise AttributeError(f"module 'minigrad.course' has no attribute {name!r}")
