"""The vmap levels that are active, kept apart so that ``autograd.function`` can read them without importing vmap.

``ACTIVE[0]`` is the number of active vmap levels: ``Function.apply`` tests it (one list read) and only then
takes vmap's path for custom Functions. ``LEVELS`` holds the active levels, innermost last.
"""
from __future__ import annotations

ACTIVE = [0]
LEVELS: list = []
