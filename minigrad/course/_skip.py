"""Cells that grading does not need to run: the book's ``grading-skip`` cells, checked here.

Why: a chapter's plots, widgets, animations and timing cells take much of a notebook's grading
time and decide nothing. The book tags them ``grading-skip`` (the release keeps the tag); the
grader skips such a cell only when

- the submitted cell's source is the instructor's, unchanged (its SHA-256 is in the set computed
  here from the instructor's notebook: a tag in a submission is never trusted, and a cell the
  student edited always runs);
- no later cell that runs needs a name it binds (a variable, a function, an import) and does
  not bind itself;
- it changes nothing that other cells see: no ``.backward()``, no ``.grad``, no assignment into an
  attribute or an item, no ``global``/``nonlocal``, no random numbers drawn (a skipped draw
  would change every later random value) and no seeding.

A tagged cell that fails a rule is run as usual, and :func:`skippable` says why (the
``release`` and the tests report it), so that a tag can never change a verdict.
"""
from __future__ import annotations

import ast
import hashlib

TAG = "grading-skip"
_RANDOM = {"rand", "randn", "randint", "random", "random_sample", "normal", "uniform", "choice", "shuffle",
           "permutation", "manual_seed", "seed", "default_rng", "randperm", "bernoulli", "multinomial",
           "standard_normal", "integers", "exponential", "poisson"}


def digest(source: str) -> str:
    return hashlib.sha256(str(source).encode("utf-8")).hexdigest()


def _tags(cell) -> list:
    return list((cell.get("metadata") or {}).get("tags") or [])


def _source(cell) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else str(s)


def _tree(src: str):
    from ._extract import python_source

    py = python_source(src)
    if py is None:
        return None
    try:
        return ast.parse(py)
    except SyntaxError:
        return None


def _side_effect(tree) -> str:
    """Why the cell could change what other cells see ('' if it cannot, as far as its text shows)."""
    for n in ast.walk(tree):
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            return "it declares a global"
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = n.targets if isinstance(n, (ast.Assign, ast.Delete)) else [n.target]
            for t in targets:
                for sub in ast.walk(t):
                    if isinstance(sub, (ast.Attribute, ast.Subscript)):
                        return "it assigns into an attribute or an item"
            if isinstance(n, ast.AugAssign):
                return "it updates a name in place"
        if isinstance(n, ast.Attribute) and n.attr in ("grad", "backward", "requires_grad_", "retain_grad",
                                                        "zero_", "step", "zero_grad") or \
                isinstance(n, ast.Attribute) and n.attr.endswith("_") and not n.attr.startswith("_") and \
                n.attr not in ("set_", ):
            return f"it uses .{n.attr} (gradients or an in-place change)"
        if isinstance(n, ast.Call):
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in _RANDOM:
                return f"it draws random numbers ({name})"
            if name in ("exec", "eval", "setattr", "delattr", "__import__"):
                return f"it calls {name}"
    return ""


def _free(tree) -> set:
    """The names a cell reads that it does not bind itself (what it needs from the cells before)."""
    from ._extract import free_names

    return free_names(ast.unparse(tree))


def _binds(tree) -> set:
    out = set()
    for stmt in tree.body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                out.add(n.id)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(n.name)
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                out |= {(a.asname or a.name).split(".")[0] for a in n.names}
    return out


def skippable(cells: list) -> tuple[set, dict]:
    """(digests of the instructor's cells grading may skip, {cell index: why a tagged cell must run})."""
    code = [(i, c) for i, c in enumerate(cells) if c.get("cell_type") == "code"]
    trees = {i: _tree(_source(c)) for i, c in code}
    skip: set = set()
    refused: dict = {}
    needed_later: set = set()  # names read by the cells after this one that run
    for i, c in reversed(code):
        tree = trees[i]
        tagged = TAG in _tags(c)
        why = ""
        if tagged:
            meta = (c.get("metadata") or {}).get("minigrad_course") or {}
            if meta.get("role") or {"solution", "check", "hidden-tests"} & set(_tags(c)):
                why = "it is an exercise's cell"
            elif tree is None:
                why = "it is not plain Python"
            else:
                why = _side_effect(tree)
                used = _binds(tree) & needed_later
                if not why and used:
                    why = f"a later cell reads {', '.join(sorted(used)[:3])}"
        if tagged and not why:
            skip.add(digest(_source(c)))
            continue
        if tagged:
            refused[i] = why
        if tree is not None:
            needed_later |= _free(tree)
        else:
            needed_later |= {"*"}
    return skip, refused
