"""Course tooling for "Inside autograd.Function": self-checking exercises and the instructor's CLI.

In a chapter notebook::

    from minigrad.course import check
    check("ch03-ex1", LeakyReLU)

prints specific feedback (a line starting with "✓" when the answer is right) and returns a
:class:`CheckResult` (``passed``, ``points``, ``max_points``, ``message``).

Chapter writers register exercises in ``minigrad/course/exercises/chNN.py`` (instructors: in the
book's ``course/checks/`` folder, see ``minigrad.course.custom``)::

    from minigrad.course import exercise
    from minigrad.course.diagnose import diagnose_function

    @exercise("ch03-ex1", points=2, title="Leaky ReLU as a Function", minutes=20,
              objective="write a Function whose backward uses a ctx attribute")
    def _(answer):
        return diagnose_function(answer, reference=lambda x: ..., inputs=[(4, 5)], kinks=[0.0])

A check may score independent parts separately (partial credit)::

    @exercise("ch03-ex4", points=3, parts={"forward": 1, "backward": 2}, ...)
    def _(fn):
        with part("forward"):
            ...            # a CheckFailed here costs the forward point only
        with part("backward"):
            ...

The engine (``minigrad`` itself) never imports this package. See ``API.md`` next to this file.
"""
from __future__ import annotations

import contextlib
import importlib
import sys
import textwrap
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from ._i18n import _
from .numbering import EXERCISE_ID, display_name, exercise_number, parse_id

__all__ = ["check", "exercise", "part", "CheckResult", "CheckFailed", "registry", "get_exercise",
           "diagnose_function"]

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
    parts: list = field(default_factory=list)  # partial credit: dicts name, passed, points, max_points, message
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
        """The result as plain data (what the grader transports): ``parts`` is empty unless the
        exercise declares parts; then ``points`` is the sum of the passed parts' points."""
        return {"exercise": self.exercise_id, "title": self.title, "passed": bool(self.passed),
                "points": float(self.points), "max_points": float(self.max_points), "message": self.message,
                "parts": [dict(p) for p in self.parts]}


@dataclass
class Exercise:
    id: str
    points: float
    title: str
    func: Callable[..., Any]
    minutes: float | None = None   # estimated time for a learner who has read the chapter
    objective: str = ""            # what the learner can do after it (the catalogue's column)
    graded: bool = True            # False: practice only (self-check, never in a gradebook)
    parts: dict = field(default_factory=dict)  # part name -> points (partial credit); {}: all or nothing
    origin: str = ""               # "file:line" of the @exercise, for error messages

    @property
    def chapter(self) -> int:
        return parse_id(self.id)[0]

    @property
    def number(self) -> str:
        """The number a learner sees: ``ch03-ex1`` is Exercise 3.1."""
        return exercise_number(self.id)

    def missing_metadata(self) -> list[str]:
        """The catalogue fields this registration does not declare yet."""
        return [name for name, ok in (("minutes", self.minutes is not None), ("objective", bool(self.objective)))
                if not ok]


registry: dict[str, Exercise] = {}
last_result: "CheckResult | None" = None  # the latest check() result (nbgrader test cells assert on it)


def _origin(func: Callable) -> str:
    code = getattr(func, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else ""


def exercise(id: str, points: float = 1, title: str = "", *, minutes: float | None = None,
             objective: str = "", graded: bool = True, parts: dict | None = None) -> Callable:
    """Register the checker of exercise ``id`` (``"chNN-exK"``: Exercise N.K), worth ``points``.

    ``minutes`` (estimated time) and ``objective`` (what the learner can do after it, one line)
    feed the exercise catalogue of the instructor guide; ``graded=False`` makes a practice
    exercise (self-check only, never graded). ``parts={"forward": 1, "backward": 2}`` scores
    independent parts separately (their points add up to ``points``): see :func:`part`.

    The decorated function receives the learner's answer (plus any keywords given to ``check``)
    and either returns a :class:`CheckResult` (e.g. from ``diagnose_function``), a bool, a
    ``(bool, message)`` pair, or a message string (= passed); or raises :class:`CheckFailed` /
    ``AssertionError`` with the feedback as its message.
    """
    where = f"@exercise({id!r})"
    if not isinstance(id, str) or not EXERCISE_ID.fullmatch(id):
        raise ValueError(f"{where}: an exercise id is 'chNN-exK' (chapter NN, K-th exercise of the chapter), "
                         "e.g. 'ch03-ex1' for Exercise 3.1")
    if not isinstance(points, (int, float)) or isinstance(points, bool) or points <= 0:
        raise ValueError(f"{where}: points must be a positive number, got {points!r}")
    if minutes is not None and (not isinstance(minutes, (int, float)) or isinstance(minutes, bool) or minutes <= 0):
        raise ValueError(f"{where}: minutes (estimated time) must be a positive number, got {minutes!r}")
    if not isinstance(objective, str):
        raise ValueError(f"{where}: objective must be a string (one line: what the learner can do after it)")
    parts = dict(parts or {})
    if parts:
        bad = {k: v for k, v in parts.items() if not isinstance(k, str) or not k
               or not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0}
        if bad:
            raise ValueError(f"{where}: parts maps a part's name to its points (a positive number); got {bad!r}")
        if abs(sum(parts.values()) - points) > 1e-9:
            raise ValueError(f"{where}: the parts' points {dict(parts)} add up to {sum(parts.values()):g}, "
                             f"not to the exercise's points={points:g}")

    def deco(func: Callable) -> Callable:
        registry[id] = Exercise(id=id, points=float(points), title=title or id, func=func,
                                minutes=None if minutes is None else float(minutes),
                                objective=" ".join(objective.split()), graded=bool(graded),
                                parts={k: float(v) for k, v in parts.items()}, origin=_origin(func))
        return func
    return deco


# ------------------------------------------------------------------------------ partial credit
class _PartsRun:
    """The parts scored so far by the check that is running (run_check sets one up)."""

    def __init__(self, ex: "Exercise"):
        self.ex = ex
        self.results: dict[str, tuple[bool, str]] = {}


_running: list = []  # stack of _PartsRun (a check may call check() of another exercise)


@contextlib.contextmanager
def part(name: str, passed_message: str = "") -> Iterator[None]:
    """Score one independent part of the running check: an error inside the block fails only it.

    ``CheckFailed``/``AssertionError`` give their message as the part's feedback; any other
    exception from the learner's code is reported like ``check`` reports it. The check goes on
    with its next part either way. ``passed_message`` is shown when the part passes.
    """
    if not _running or not _running[-1].ex.parts:
        raise RuntimeError(f"part({name!r}) is used inside a check whose @exercise declares no parts=")
    run = _running[-1]
    if name not in run.ex.parts:
        raise RuntimeError(f"part({name!r}) is not one of the parts declared by @exercise({run.ex.id!r}): "
                           f"{', '.join(run.ex.parts)}")
    try:
        yield
    except Exception as e:  # noqa: BLE001 - every failure of the learner's code is feedback for this part
        run.results[name] = (False, _failure_message(e))
    else:
        run.results[name] = (True, passed_message)


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
        msg = f"Unknown exercise {exercise_id!r}. Registered exercises: {known}."
        broken = _load_problems()
        if broken:
            msg += " These check files failed to load: " + "; ".join(broken) + "."
        else:
            msg += (" If your instructor wrote this exercise, its check is in the course's course/checks/ "
                    "folder: keep that folder next to this notebook.")
        raise KeyError(msg)
    return registry[exercise_id]


def _load_problems() -> list[str]:
    problems = []
    for mod_name in ("minigrad.course.exercises", "minigrad.course.custom"):
        mod = sys.modules.get(mod_name)
        errors = getattr(mod, "import_errors", None) or getattr(mod, "load_errors", None) or {}
        problems += [f"{k} ({v})" for k, v in errors.items()]
    return problems


def _normalise(value: Any) -> tuple[bool, str, dict]:
    if isinstance(value, CheckResult):
        return bool(value.passed), value.message, value.details
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], bool):
        return value[0], str(value[1]), {}
    if isinstance(value, str):
        return True, value, {}
    if value is None or value is True:
        return True, _("all checks passed."), {}
    return bool(value), "" if value else _("the answer is not right yet."), {}


def _student_frame(tb) -> str:
    """The last traceback line that is not inside the course tooling: where the learner's code failed."""
    frames = [f for f in traceback.extract_tb(tb) if "minigrad/course" not in f.filename.replace("\\", "/")]
    if not frames:
        return ""
    f = frames[-1]
    where = (_("line {line} of {function}()").format(line=f.lineno, function=f.name) if f.name != "<module>"
             else _("line {line}").format(line=f.lineno))
    return _(" (at {where}: `{code}`)").format(where=where, code=(f.line or "").strip())


def _failure_message(e: BaseException) -> str:
    if isinstance(e, (CheckFailed, AssertionError)):
        return str(e) or type(e).__name__
    if isinstance(e, NotImplementedError):
        msg = _("your code raised NotImplementedError: replace the `raise NotImplementedError()` stub with your solution.")
        if str(e) and "YOUR CODE" not in str(e):
            msg += f" ({e})"
        return msg
    return _("your code raised {error_type}: {error}{where}").format(
        error_type=type(e).__name__, error=e, where=_student_frame(e.__traceback__))


def run_check(exercise_id: str, answer: Any, **kw: Any) -> CheckResult:
    """Run the registered check without printing; never raises for a wrong answer."""
    try:
        ex = get_exercise(exercise_id)
    except KeyError as e:
        return CheckResult(False, f"{FAIL_MARK} {e.args[0]}", 0.0, 0.0, exercise_id, exercise_id)
    run = _PartsRun(ex)
    _running.append(run)
    try:
        passed, msg, details = _normalise(ex.func(answer, **kw))
    except Exception as e:  # the learner's code raised (or the check failed): report it, don't crash the notebook
        passed, msg, details = False, _failure_message(e), {}
    finally:
        _running.remove(run)
    parts = []
    if ex.parts:
        for name, max_pts in ex.parts.items():
            # a part the check never entered takes the check's own verdict (e.g. an early return)
            ok, why = run.results.get(name, (passed, "" if passed else _("not checked: ") + msg.strip()))
            parts.append({"name": name, "passed": bool(ok), "points": max_pts if ok else 0.0,
                          "max_points": max_pts, "message": why.strip()})
        passed = all(p["passed"] for p in parts)
        pts = sum(p["points"] for p in parts)
    else:
        pts = ex.points if passed else 0.0
    # the header names the exercise as the page does: "Exercise 3.1 (Leaky ReLU)" for ch03-ex1
    number = exercise_number(ex.id)
    name = _("Exercise {number}").format(number=number) if number else ex.id
    head = _("{mark} {exercise} ({title}): {points}/{max_points} points").format(
        mark=PASS_MARK if passed else FAIL_MARK, exercise=name, title=_(ex.title), points=f"{pts:g}",
        max_points=f"{ex.points:g}")
    body = msg.strip()
    if parts:
        lines = [f"{PASS_MARK if p['passed'] else FAIL_MARK} {p['name']} [{p['points']:g}/{p['max_points']:g}]"
                 + (": " + p["message"].replace("\n", "\n  ") if p["message"] else "") for p in parts]
        body = "\n".join(lines + ([body] if body and passed else []))
    message = head + (f"\n{_indent(body)}" if body else "")
    return CheckResult(passed, message, pts, ex.points, ex.id, ex.title, details, parts)


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
