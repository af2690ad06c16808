"""Exercise checkers, one module per chapter (``ch01.py`` ... owned by the chapter writers).

Importing this package imports every ``chNN.py`` that exists, so that their ``@exercise``
decorators register the checks. A chapter module that fails to import does not stop the others:
its error is kept in ``import_errors`` and shown by ``check`` for that chapter's exercises.
"""
from __future__ import annotations

import importlib
import pkgutil
import re

import_errors: dict[str, str] = {}


def _load_all() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if re.fullmatch(r"ch\d\d\w*", info.name):
            try:
                importlib.import_module(f"{__name__}.{info.name}")
            except Exception as e:  # a broken chapter must not break the other chapters
                import_errors[info.name] = f"{type(e).__name__}: {e}"


_load_all()
