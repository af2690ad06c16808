"""An instructor's own exercises: checks kept in the book repository, not in the installed package.

Every ``*.py`` file of the book's ``course/checks/`` folder (names starting with ``_`` are
skipped) is loaded after the package's own chapter checks, so its ``@exercise`` registrations
add exercises or replace ("re-point") registered ones: same id, new check, points or parts.

Who finds the folder:
- the learner's ``check()``: ``course/checks/`` in the current folder (a notebook's kernel
  starts in the notebook's folder) or in its parent (``book/`` sits next to ``course/``), or
  the folders listed in ``MINIGRAD_COURSE_CHECKS`` (os.pathsep-separated);
- ``minigrad-course grade`` and ``release``: ``<book root>/course/checks/``. The grader never
  looks in the student's folder: a check shipped with a submission is ignored.

``release`` copies the folder into the student edition, next to the notebooks: checks are
what ``check()`` needs and hold no solution. Hidden tests stay in the instructor's notebooks.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

CHECKS_DIR = Path("course") / "checks"
ENV = "MINIGRAD_COURSE_CHECKS"
# Loaded for check(): a namespace of their own, outside ``minigrad`` (whose functions the grader
# watches for monkeypatching). In the grader's fresh copy: next to the package's chapter modules.
MODULE_PREFIX = "minigrad_course_checks."
BUNDLE_PREFIX = "minigrad.course.exercises.book_"

load_errors: dict[str, str] = {}   # file -> "ErrorType: message" (an error in one file spares the others)
_loaded: dict[str, float] = {}     # file -> mtime when loaded (a changed file is loaded again)


def check_files(folder: str | os.PathLike) -> list[Path]:
    """The check files of one folder, in the order they load (by name)."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.py") if not p.name.startswith(("_", ".")) and p.is_file())


def module_name(path: str | os.PathLike, prefix: str = MODULE_PREFIX) -> str:
    stem = Path(path).stem
    return prefix + "".join(c if c.isalnum() or c == "_" else "_" for c in stem)


def discover(start: str | os.PathLike | None = None) -> list[Path]:
    """The check folders a learner's ``check()`` uses: the environment's, then ``course/checks/``
    in ``start`` (default: the current folder) or else in its parent."""
    found = [Path(p) for p in os.environ.get(ENV, "").split(os.pathsep) if p and Path(p).is_dir()]
    here = Path(start or os.getcwd()).resolve()
    for d in (here, here.parent):
        if (d / CHECKS_DIR).is_dir():
            found.append(d / CHECKS_DIR)
            break
    return found


def book_checks_dir(root: str | os.PathLike) -> Path:
    return Path(root) / CHECKS_DIR


def load_folder(folder: str | os.PathLike) -> list[str]:
    """Load (or reload, if changed) every check file of ``folder``; returns the module names."""
    names = []
    for path in check_files(folder):
        key, name = str(path.resolve()), module_name(path)
        mtime = path.stat().st_mtime
        names.append(name)
        if _loaded.get(key) == mtime and name in sys.modules:
            continue
        try:
            spec = importlib.util.spec_from_file_location(name, path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            spec.loader.exec_module(mod)
            _loaded[key] = mtime
            load_errors.pop(key, None)
        except Exception as e:  # noqa: BLE001 - reported by check() and the catalogue, never fatal
            sys.modules.pop(name, None)
            load_errors[key] = f"{type(e).__name__}: {e}"
    return names


def load_discovered(start: str | os.PathLike | None = None) -> None:
    for folder in discover(start):
        load_folder(folder)


def bundle(root: str | os.PathLike) -> list:
    """The book's check files as (module name, (source, is_package)) pairs: the grader runs them
    after the package's own checks, from this text (never from a file the student can reach)."""
    return [(module_name(p, BUNDLE_PREFIX), (p.read_text(encoding="utf-8"), False))
            for p in check_files(book_checks_dir(root))]
