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


# ------------------------------------------------------------------------------ a function's source
# The judge's answers by the names it looked them up by (``set_answers``): the function to read is the
# one bound to the name the check cell uses, never the name the worker reports for its object.
_ANSWERS: dict = {"pairs": None}
# libraries whose objects a source may name (``refers_to``): the judge imports them, never the student's
TRUSTED_ROOTS = frozenset({"minigrad", "functools"})


def set_answers(pairs: list | None) -> None:
    """The judge: ``[(proxy, name)]``, the student's objects and the names it looked them up by."""
    _ANSWERS["pairs"] = None if pairs is None else list(pairs)


def _answer_name(obj: Any) -> str | None:
    pairs = _ANSWERS["pairs"]
    if pairs is not None:
        names = [n for o, n in pairs if o is obj]
        if names:
            own = _name_of(obj)
            return own if own in names else sorted(names)[0]
    return _name_of(obj)


def _binds(stmt: ast.stmt) -> dict:
    """{name: the statement's kind of binding} for a top-level statement: "import:<dotted path>",
    "def", or "other" (an assignment, a loop, a class ...)."""
    out: dict = {}
    if isinstance(stmt, ast.Import):
        for a in stmt.names:
            out[a.asname or a.name.split(".")[0]] = "import:" + (a.name if a.asname else a.name.split(".")[0])
        return out
    if isinstance(stmt, ast.ImportFrom):
        for a in stmt.names:
            if a.name == "*" or stmt.level:
                continue
            out[a.asname or a.name] = f"import:{stmt.module}.{a.name}"
        return out
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {stmt.name: "def"}
    for node in ast.walk(stmt):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = "other"
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out[node.id] = "other"
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update({k: "other" for k in _binds(node)})
    return out


def _loaded_statements() -> list:
    stmts = []
    for item in _SOURCES["items"] or []:
        try:
            tree = ast.parse(item["source"])
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        stmts += [tree.body[n] for n in item["stmts"] if 0 <= n < len(tree.body)]
    return stmts


def _library_object(path: str) -> Any:
    """The object at a dotted path of a trusted library (the judge's own copy), or None."""
    import importlib

    parts = path.split(".")
    if parts[0] not in TRUSTED_ROOTS:
        return None
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        try:
            for p in parts[k:]:
                obj = getattr(obj, p)
        except AttributeError:
            return None
        return obj
    return None


def _dotted(expr: ast.expr) -> list[str] | None:
    """``a.b.c`` -> ["a", "b", "c"]; None for anything else than names and attributes."""
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    return [expr.id] + parts[::-1]


class FunctionSource:
    """The ``def`` of a student's function, and what the names it uses refer to.

    In a self-check the source is the function's own (``inspect``) and a global name refers to the
    object it is bound to now; graded, the source is the statement that binds the name the judge
    looked the answer up by (in the loaded statements), and a global name refers to what the last
    loaded statement that binds it imports. Either way only the trusted libraries' objects are
    recognised (``refers_to``)."""

    def __init__(self, node: ast.FunctionDef, globals_: dict | None, stmts: list | None):
        self.node, self._globals, self._stmts = node, globals_, stmts
        self.local_names = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)} | {
            n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))} | {
            n.name for n in ast.walk(node) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and n is not node}

    def refers_to(self, expr: ast.expr, path: str) -> bool:
        """Whether ``expr`` (a name or a dotted attribute) is the library object at ``path``
        (``minigrad.utils.checkpoint.checkpoint``) in every spelling: an alias, the module's path."""
        parts = _dotted(expr)
        target = _library_object(path)
        if parts is None or target is None or parts[0] in self.local_names:
            return False
        if self._globals is not None:  # a self-check: the object the name is bound to
            import builtins

            if parts[0] in self._globals:
                obj = self._globals[parts[0]]
            elif hasattr(builtins, parts[0]):
                obj = getattr(builtins, parts[0])
            else:
                return False
            try:
                for p in parts[1:]:
                    obj = getattr(obj, p)
            except Exception:  # noqa: BLE001 - an attribute the object does not have: not the library's
                return False
            return obj is target
        kind = None  # graded: the last loaded statement that binds the name
        for stmt in self._stmts or []:
            kind = _binds(stmt).get(parts[0], kind)
        if not isinstance(kind, str) or not kind.startswith("import:"):
            return False
        return _library_object(".".join([kind[len("import:"):]] + parts[1:])) is target


def function_source(obj: Any) -> FunctionSource | None:
    """The ``def`` statement of the student's function ``obj`` (None: no def to read).

    Graded, the name is the one the judge looked the answer up by, and the statement is the last
    loaded one that binds it: a ``def`` of that name, or ``name = other`` followed to ``other``'s."""
    if _SOURCES["items"] is None:  # a self-check: the function's own source (a notebook cell's, by linecache)
        from . import _remote

        if _remote.is_remote(obj) or not callable(obj) or not hasattr(obj, "__code__"):
            return None
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
        except (OSError, TypeError, SyntaxError, ValueError):
            return None
        node = tree.body[0] if tree.body else None
        if not isinstance(node, ast.FunctionDef):
            return None
        return FunctionSource(node, getattr(obj, "__globals__", {}), None)
    name = _answer_name(obj)
    stmts = _loaded_statements()
    for _ in range(8):  # name = other, other = third ...: a few aliases at most
        last = None
        for stmt in stmts:
            if name in _binds(stmt):
                last = stmt
        if isinstance(last, ast.FunctionDef) and last.name == name:
            return FunctionSource(last, None, stmts)
        if isinstance(last, ast.Assign) and len(last.targets) == 1 and isinstance(last.targets[0], ast.Name) \
                and isinstance(last.value, ast.Name):
            name = last.value.id
            continue
        return None
    return None
