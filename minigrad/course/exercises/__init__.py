"""Exercise checkers, one module per chapter (``ch01.py`` ... owned by the chapter writers).

Importing this package imports every ``chNN.py`` that exists, so that their ``@exercise``
decorators register the checks. A chapter module that fails to import does not stop the others:
its error is kept in ``import_errors``.

Extra checker folders (e.g. an instructor's own exercises, or the test fixtures) can be listed in
the environment variable ``MINIGRAD_COURSE_EXTRA_EXERCISES`` (os.pathsep-separated); their
``chNN*.py`` files are loaded as ``minigrad.course.exercises.<name>`` too.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import re
import sys

import_errors: dict[str, str] = {}
_NAME = re.compile(r"ch\d\d\w*")


def _load_all() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if _NAME.fullmatch(info.name):
            try:
                importlib.import_module(f"{__name__}.{info.name}")
            except Exception as e:  # a broken chapter must not break the other chapters
                import_errors[info.name] = f"{type(e).__name__}: {e}"
    load_extra()


def load_extra() -> None:
    """Load the chNN*.py files of the folders in MINIGRAD_COURSE_EXTRA_EXERCISES (each once), then
    the book's own checks (``course/checks/``, see ``minigrad.course.custom``)."""
    from minigrad.course import custom

    custom.load_discovered()
    for folder in filter(None, os.environ.get("MINIGRAD_COURSE_EXTRA_EXERCISES", "").split(os.pathsep)):
        if not os.path.isdir(folder):
            continue
        for fname in sorted(os.listdir(folder)):
            stem, ext = os.path.splitext(fname)
            full = f"{__name__}.{stem}"
            if ext != ".py" or not _NAME.fullmatch(stem) or full in sys.modules:
                continue
            try:
                spec = importlib.util.spec_from_file_location(full, os.path.join(folder, fname))
                mod = importlib.util.module_from_spec(spec)
                sys.modules[full] = mod
                spec.loader.exec_module(mod)
            except Exception as e:
                sys.modules.pop(full, None)
                import_errors[stem] = f"{type(e).__name__}: {e}"


_load_all()
