"""Requirements about how a solution is written, judged from its source text (never run).

Why: "forward marks the indices non-differentiable", "forward saves with save_for_backward" are
facts about the code. When grading, the worker that runs the student's code could report any
observation about them; the judge reads them instead from the submitted cells' source (the
statements the worker loaded, sent by the runner), parsed with ``ast`` here and never executed.
In a self-check the source is the class's own (``inspect``). Unknown source: no verdict (None).
"""
from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any

MAX_SOURCE = 2_000_000  # characters of the submitted definitions the judge parses

_SOURCES: dict = {"items": None}  # the judge's: [{"source", "stmts"}] for the exercise being judged


def set_sources(load: list | None) -> None:
    """The judge: the statements the worker loaded for this exercise (None: a self-check)."""
    _SOURCES["items"] = None if load is None else [
        {"source": str(i.get("source", ""))[:MAX_SOURCE], "stmts": [int(n) for n in i.get("stmts", [])]}
        for i in load if isinstance(i, dict)]


def _name_of(obj: Any) -> str | None:
    from . import _remote

    if _remote.is_remote(obj) and not isinstance(obj, type):
        return object.__getattribute__(obj, "_name")
    name = getattr(obj, "__name__", None)
    return name if isinstance(name, str) else None


def definition(obj: Any) -> ast.ClassDef | ast.FunctionDef | None:
    """The last top-level ``class``/``def`` statement that defines ``obj``'s name (or None)."""
    name = _name_of(obj)
    if name is None:
        return None
    items = _SOURCES["items"]
    if items is None:  # a self-check: the object's own source
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
        except (OSError, TypeError, SyntaxError, ValueError):
            return None
        stmts = tree.body
    else:
        stmts = []
        for item in items:
            try:
                tree = ast.parse(item["source"])
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            stmts += [tree.body[n] for n in item["stmts"] if 0 <= n < len(tree.body)]
    found = None
    for stmt in stmts:
        if isinstance(stmt, (ast.ClassDef, ast.FunctionDef)) and stmt.name == name:
            found = stmt
    return found


def method_calls(obj: Any, method: str, attribute: str) -> bool | None:
    """Whether ``obj``'s method ``method`` (a ``def`` in its class body) calls ``something.attribute(...)``.

    None when the source is unknown; False when the class or the method is not there."""
    def calls(fn_node) -> bool:
        return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == attribute
                   for n in ast.walk(fn_node))

    from . import _remote

    if _SOURCES["items"] is None:  # a self-check: the method's own source (a notebook cell's, by linecache)
        if _remote.is_remote(obj):
            return None  # a proxy without the loaded statements: nothing to read
        fn = next((c.__dict__[method] for c in getattr(obj, "__mro__", ()) if method in c.__dict__), None)
        fn = getattr(fn, "__func__", fn)
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        except (OSError, TypeError, SyntaxError, ValueError):
            return None
        return any(calls(n) for n in tree.body if isinstance(n, ast.FunctionDef))
    node = definition(obj)
    if node is None:
        return None
    if not isinstance(node, ast.ClassDef):
        return False
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == method:
            return calls(stmt)
    return False
