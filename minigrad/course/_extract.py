"""What the grader takes from a student's notebook into the checker: definitions, never statements.

The checker (``_checker.py``) is a fresh Python process that runs an exercise's check and hidden
tests. It must not run the notebook's top-level code (which could replace ``builtins.all``, patch
NumPy or register IPython hooks), so it loads only what the check needs, found by reading the
code cells as syntax trees:

* ``def`` and ``class`` statements, ``name = lambda ...``, imports of a few libraries, and
  aliases or literals (``torch = minigrad``, ``SLOPE = 0.1``). Loading them runs no student code:
  decorators are limited to ``staticmethod``, ``classmethod``, ``property`` (and its setters)
  and ``once_differentiable``, default values and base classes to literals and dotted names,
  class bodies to methods and literals, and annotations are dropped.
* Any other value (``grad_at_two = float(t.grad)``, an array) is taken from the student's
  kernel as plain data (``_values.py``).

Only the definitions that the check cell and the hidden tests reach (through names) are loaded,
and those are screened: code that reaches the interpreter's internals (frames, ``__globals__``,
``gc``, ``ctypes``, ``os``, ``exec`` ...) or that defines comparison and conversion hooks
(``__eq__``, ``__bool__``, ``__array__`` ...) is tampering: nothing in an exercise answer needs it.
"""
from __future__ import annotations

import ast
import builtins
import re
import symtable
from dataclasses import dataclass, field

ALLOWED_IMPORTS = frozenset({
    "minigrad", "numpy", "math", "cmath", "functools", "itertools", "collections", "dataclasses",
    "typing", "abc", "enum", "numbers", "fractions", "decimal", "random", "statistics", "copy", "re",
    "warnings", "heapq", "__future__",
})
DECORATORS = frozenset({"staticmethod", "classmethod", "property", "once_differentiable"})
ACCESSOR_DECORATORS = frozenset({"setter", "getter", "deleter"})
LOADTIME_HOOKS = frozenset({"__init_subclass__", "__set_name__", "__class_getitem__", "__mro_entries__",
                            "__prepare__"})
# Names and attributes that give code a way into the interpreter, the process or the operating system.
DENY_NAMES = frozenset({"exec", "eval", "compile", "__import__", "globals", "locals", "vars", "breakpoint",
                        "open", "input", "memoryview", "__builtins__", "__loader__", "__spec__"})
DENY_ATTRS = frozenset({
    "__globals__", "__code__", "__closure__", "__builtins__", "__subclasses__", "__bases__", "__base__",
    "__mro__", "__getattribute__", "__setattr__", "__delattr__", "__reduce__", "__reduce_ex__",
    "__import__", "__loader__", "__spec__", "__self__", "__func__", "__wrapped__", "__defaults__",
    "__kwdefaults__", "__traceback__", "__dict__", "f_back", "f_globals", "f_locals", "f_builtins",
    "f_code", "f_trace", "tb_frame", "tb_next", "gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame",
    "ag_code", "co_consts", "co_code", "co_names", "_getframe", "_current_frames", "settrace",
    "setprofile", "addaudithook", "ctypes", "ctypeslib", "os", "sys", "builtins", "gc", "subprocess",
    "signal", "socket", "threading", "_thread", "inspect", "importlib", "types", "posix",
    "_posixsubprocess", "mmap", "marshal", "pickle", "shutil", "pty", "resource", "multiprocessing",
    "tempfile", "weakref", "atexit", "faulthandler", "system", "popen", "fork", "kill", "_exit",
})
# Methods that make comparisons, truth tests, conversions or attribute access run the student's code.
DENY_METHODS = frozenset({
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__hash__", "__float__",
    "__int__", "__index__", "__complex__", "__array__", "__array_ufunc__", "__array_function__",
    "__array_wrap__", "__array_finalize__", "__array_priority__", "__array_interface__",
    "__torch_function__", "__instancecheck__", "__subclasscheck__", "__getattribute__", "__getattr__",
    "__setattr__", "__delattr__", "__del__", "__get__", "__set__", "__delete__", "__reduce__",
    "__reduce_ex__", "__getstate__", "__setstate__", "__format__", "__contains__", *LOADTIME_HOOKS,
})
_DUNDER_TEXT = re.compile(r"__(" + "|".join(sorted(a.strip("_") for a in DENY_ATTRS | DENY_METHODS
                                                   if a.startswith("__"))) + r")__")
_CELL_MAGIC_PYTHON = frozenset({"time", "timeit", "capture", "prun"})


# ----------------------------------------------------------------------------------------- cells
@dataclass
class Cell:
    """A code cell of the submitted notebook, as Python."""

    pos: int            # index among all the notebook's cells
    number: int         # Jupyter's numbering after Restart & Run All: the N-th non-empty code cell
    source: str         # the cell's text, magics replaced by ``pass``
    tree: ast.Module | None = None
    error: str = ""     # why it is not Python

    @property
    def label(self) -> str:
        return f"In [{self.number}]"

    @property
    def filename(self) -> str:
        return f"<student {self.label}>"


def python_source(src: str) -> str | None:
    """The cell's Python: IPython magics and shell lines become ``pass`` (line numbers kept)."""
    lines = src.split("\n")
    if lines and lines[0].lstrip().startswith("%%"):
        if lines[0].strip()[2:].split(" ")[0] not in _CELL_MAGIC_PYTHON:
            return None  # %%bash, %%writefile ...: not Python
        lines[0] = ""
    out = []
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")):
            out.append(line[: len(line) - len(stripped)] + "pass")
        else:
            out.append(line)
    return "\n".join(out)


def code_cells(cells: list[dict]) -> list[Cell]:
    """The non-empty code cells of a notebook (cells as dicts with ``cell_type`` and ``source``)."""
    out, number = [], 0
    for pos, c in enumerate(cells):
        if c.get("cell_type") != "code" or not str(c.get("source", "")).strip():
            continue
        number += 1
        py = python_source(str(c["source"]))
        cell = Cell(pos, number, py if py is not None else "")
        if py is None:
            cell.error = "a cell magic that is not Python"
        else:
            try:
                cell.tree = ast.parse(py, filename=cell.filename)
            except (SyntaxError, ValueError) as e:
                cell.error = f"{type(e).__name__}: {getattr(e, 'msg', None) or e} (line {getattr(e, 'lineno', '?')})"
        out.append(cell)
    return out


# -------------------------------------------------------------------------------- load-time safety
def _dotted(node) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _numeric(node) -> bool:
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float, complex)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _numeric(node.operand)
    if isinstance(node, ast.BinOp) and not isinstance(node.op, ast.MatMult):
        return _numeric(node.left) and _numeric(node.right)
    return False


def _literal(node) -> bool:
    if isinstance(node, ast.Constant) or _numeric(node):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _literal(k) and _literal(v) for k, v in zip(node.keys, node.values))
    return False


def _safe_value(node) -> bool:
    """A value that can be computed at load time without running student code."""
    return _literal(node) or _dotted(node)


def _immutable(node) -> bool:
    """A literal that later statements cannot have changed in place (lists, dicts and sets can)."""
    if isinstance(node, ast.Tuple):
        return all(_immutable(e) for e in node.elts)
    return (isinstance(node, ast.Constant) or _numeric(node)) or _dotted(node)


def decorator_name(node) -> str | None:
    """The allowed decorator this node is (``staticmethod``, ``x.setter`` ...), or None."""
    if isinstance(node, ast.Name) and node.id in DECORATORS:
        return node.id
    if isinstance(node, ast.Attribute):
        if node.attr in ACCESSOR_DECORATORS and isinstance(node.value, ast.Name):
            return node.attr
        if node.attr == "once_differentiable" and _dotted(node):
            return "once_differentiable"
    return None


def _vet_args(args: ast.arguments) -> str | None:
    for d in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
        if not _safe_value(d):
            return f"a default value that is computed (`{ast.unparse(d)[:40]}`)"
    return None


def _vet_function(node) -> str | None:
    for d in node.decorator_list:
        if decorator_name(d) is None:
            return f"the decorator `@{ast.unparse(d)[:40]}`"
    return _vet_args(node.args)


def _vet_class(node: ast.ClassDef) -> str | None:
    if node.keywords:
        return "a class keyword (metaclass=...)"
    for d in node.decorator_list:
        return f"the class decorator `@{ast.unparse(d)[:40]}`"
    for b in node.bases:
        if not _dotted(b):
            return f"a computed base class (`{ast.unparse(b)[:40]}`)"
    for stmt in node.body:
        why = _vet_class_statement(stmt)
        if why:
            return why
    return None


def _names_only(target) -> bool:
    """A target that binds names only (``a`` or ``a, (b, c)``), nothing like ``x.y`` or ``x[0]``."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return all(_names_only(e) for e in target.elts)
    return isinstance(target, ast.Name)


def _vet_class_statement(stmt) -> str | None:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if stmt.name in LOADTIME_HOOKS:
            return f"a `{stmt.name}` method (it would run while the class is created)"
        return _vet_function(stmt)
    if isinstance(stmt, ast.ClassDef):
        return _vet_class(stmt)
    if isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
        return None
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        value = stmt.value
        if value is None:
            return None
        if not all(isinstance(t, ast.Name) for t in targets):
            # `LOW, HIGH = 0.0, 1.0`: unpacking a literal runs no code; unpacking anything else could.
            if all(_names_only(t) for t in targets) and _literal(value):
                return None
            return "an assignment to something other than a name in the class body"
        if isinstance(value, ast.Lambda):
            return _vet_args(value.args)
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in DECORATORS \
                and not value.keywords and all(_dotted(a) for a in value.args):
            return None
        if _safe_value(value):
            return None
        return f"a class attribute that is computed (`{ast.unparse(value)[:40]}`)"
    return f"a `{type(stmt).__name__}` statement in the class body"


def _import_root(node) -> str | None:
    if isinstance(node, ast.ImportFrom):
        return None if node.level else (node.module or "").split(".")[0]
    return None


# ------------------------------------------------------------------------------------- bindings
@dataclass
class Binding:
    name: str
    order: tuple        # (index among the executed cells, statement index): notebook order
    cell: Cell
    stmt: int
    kind: str           # def | import | star | value | data | blocked
    why: str = ""       # blocked: why the grader cannot load it; data: in which kind of statement


def _target_names(t) -> list[str]:
    if isinstance(t, ast.Name):
        return [t.id]
    if isinstance(t, (ast.Tuple, ast.List)):
        return [n for e in t.elts for n in _target_names(e)]
    if isinstance(t, ast.Starred):
        return _target_names(t.value)
    return []


def _names_bound_anywhere(stmt) -> list[str]:
    """Names a compound top-level statement binds at module level (not inside functions or classes)."""
    out = []
    todo = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append(node.name)
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.append(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out += [(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"]
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.append(node.name)
        elif isinstance(node, ast.NamedExpr):
            out += _target_names(node.target)
        todo.extend(ast.iter_child_nodes(node))
    return out


def bindings_of(stmt, cell: Cell, order: tuple) -> list[Binding]:
    """What one top-level statement binds, and whether the checker may load it."""
    def b(name, kind, why=""):
        return Binding(name, order, cell, order[1], kind, why)

    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        why = _vet_function(stmt)
        return [b(stmt.name, "blocked" if why else "def", why or "")]
    if isinstance(stmt, ast.ClassDef):
        why = _vet_class(stmt)
        return [b(stmt.name, "blocked" if why else "def", why or "")]
    if isinstance(stmt, ast.Import):
        out = []
        for a in stmt.names:
            root = a.name.split(".")[0]
            name = a.asname or root
            ok = root in ALLOWED_IMPORTS
            out.append(b(name, "import" if ok else "blocked",
                         "" if ok else f"`import {a.name}` (the grader loads only "
                         f"{', '.join(sorted(ALLOWED_IMPORTS - {'__future__'}))})"))
        return out
    if isinstance(stmt, ast.ImportFrom):
        root = _import_root(stmt)
        ok = root in ALLOWED_IMPORTS
        why = "" if ok else f"`from {'.' * stmt.level}{stmt.module or ''} import ...` (the grader loads only " \
                            f"{', '.join(sorted(ALLOWED_IMPORTS - {'__future__'}))})"
        out = []
        for a in stmt.names:
            if a.name == "*":
                out.append(b("*", "star" if ok else "blocked", why))
            else:
                out.append(b(a.asname or a.name, "import" if ok else "blocked", why))
        return out
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        names = [n for t in targets for n in _target_names(t)]
        simple = all(isinstance(t, ast.Name) for t in targets)
        value = stmt.value
        if value is not None and simple and isinstance(value, ast.Lambda):
            why = _vet_args(value.args)
            return [b(n, "blocked" if why else "def", why or "") for n in names]
        if value is not None and simple and _immutable(value):
            return [b(n, "value") for n in names]
        if value is not None and all(isinstance(t, (ast.Name, ast.Tuple)) for t in targets) \
                and isinstance(value, ast.Tuple) and _immutable(value):
            return [b(n, "value") for n in names]
        return [b(n, "data") for n in names]
    if isinstance(stmt, ast.AugAssign):
        return [b(n, "data") for n in _target_names(stmt.target)]
    if isinstance(stmt, ast.Delete):
        return [b(n, "data") for t in stmt.targets for n in _target_names(t)]
    kind = type(stmt).__name__.lower()
    return [b(n, "data", f"inside {'an' if kind[0] in 'aeiou' else 'a'} `{kind}` block")
            for n in dict.fromkeys(_names_bound_anywhere(stmt))]


# ------------------------------------------------------------------------------------ references
def _references(stmt) -> tuple[set, set]:
    """(names read while the statement runs at load time, global names read later by its functions)."""
    src = ast.unparse(stmt)
    try:
        top = symtable.symtable(src, "<definition>", "exec")
    except SyntaxError:
        return set(), set()
    load, later = set(), set()

    def walk(table, at_load):
        for s in table.get_symbols():
            if s.is_referenced() and (s.is_global() or (table.get_type() == "module" and not s.is_assigned())):
                (load if at_load else later).add(s.get_name())
        for child in table.get_children():
            walk(child, at_load and child.get_type() == "class")

    walk(top, True)
    if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Lambda):
        pass  # the lambda's body is a function scope: already in `later`
    return load, later


def free_names(source: str) -> set[str]:
    """Names a piece of code (a check cell, hidden tests) reads but does not define itself."""
    try:
        top = symtable.symtable(source, "<code>", "exec")
    except SyntaxError:
        return set()
    out: set = set()

    def walk(table):
        for s in table.get_symbols():
            if s.is_referenced() and (s.is_global() if table.get_type() != "module"
                                      else not s.is_assigned() and not s.is_imported()):
                out.add(s.get_name())
        for child in table.get_children():
            walk(child)

    walk(top)
    # a name assigned at the top level but read before (hidden tests re-binding an answer) stays free
    return out


def bound_names(source: str) -> set[str]:
    """Names a piece of code binds at its top level (the instructor's solution cells: the answer names)."""
    try:
        tree = ast.parse(python_source(source) or "")
    except SyntaxError:
        return set()
    return {b.name for i, stmt in enumerate(tree.body)
            for b in bindings_of(stmt, Cell(0, 0, ""), (0, i)) if b.name != "*"}


# ------------------------------------------------------------------------------------ screening
def screen(stmt, cell: Cell, import_aliases: set) -> list[str]:
    """Tampering in one loaded statement: one line per finding, with its place."""
    found = []
    load, later = _references(stmt)
    globals_read = load | later  # a parameter called `input` is not the builtin

    def where(node):
        return f"{cell.label}, line {getattr(node, 'lineno', '?')}"

    def add(node, what):
        found.append(f"{what} ({where(node)})")

    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and node.id in DENY_NAMES and node.id in globals_read:
            add(node, f"uses `{node.id}`")
        elif isinstance(node, ast.Attribute) and node.attr in DENY_ATTRS:
            add(node, f"uses `.{node.attr}`")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _DUNDER_TEXT.search(node.value):
            add(node, f"names `{_DUNDER_TEXT.search(node.value).group(0)}` in a string")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            roots = [a.name.split(".")[0] for a in node.names] if isinstance(node, ast.Import) \
                else [_import_root(node) or "."]
            for r in roots:
                if r not in ALLOWED_IMPORTS:
                    add(node, f"imports `{r}`")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in DENY_METHODS:
            add(node, f"defines `{node.name}`")
        elif isinstance(node, ast.ClassDef):
            for s in node.body:
                if isinstance(s, (ast.Assign, ast.AnnAssign)):
                    for t in (s.targets if isinstance(s, ast.Assign) else [s.target]):
                        for n in _target_names(t):
                            if n in DENY_METHODS:
                                add(s, f"defines `{n}`")
        elif isinstance(node, ast.Call):
            f = node.func
            fname = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if fname in ("getattr", "setattr", "delattr", "hasattr") and isinstance(f, ast.Name):
                if len(node.args) < 2 or not (isinstance(node.args[1], ast.Constant)
                                              and isinstance(node.args[1].value, str)
                                              and not node.args[1].value.startswith("__")):
                    add(node, f"calls `{fname}` with a computed or special attribute name")
            elif fname == "type" and isinstance(f, ast.Name) and len(node.args) == 3:
                add(node, "creates a class with `type(name, bases, dict)`")
            elif fname in ("format", "format_map") and isinstance(f, ast.Attribute) \
                    and not (isinstance(f.value, ast.Constant) and isinstance(f.value.value, str)):
                add(node, f"calls `.{fname}` on a computed format string")
            if any(k.arg == "allow_pickle" for k in node.keywords):
                add(node, "loads pickled data (`allow_pickle`)")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for t in targets:
                root = t
                while isinstance(root, (ast.Attribute, ast.Subscript)):
                    root = root.value
                if t is not root and isinstance(root, ast.Name) and root.id in import_aliases:
                    add(node, f"changes the library `{ast.unparse(t)}`")
        elif isinstance(node, ast.Global):
            for n in node.names:
                if n in import_aliases:
                    add(node, f"rebinds the library name `{n}`")
    return list(dict.fromkeys(found))


# ------------------------------------------------------------------------------------------ plan
@dataclass
class Plan:
    """What the checker loads for one exercise."""

    load: list = field(default_factory=list)          # (Cell, statement index), in notebook order
    data: list = field(default_factory=list)          # names whose values come from the kernel
    defined: set = field(default_factory=set)         # names bound by loaded def/class statements
    unbound: set = field(default_factory=set)         # names no statement binds (asked of the kernel)
    unavailable: dict = field(default_factory=dict)   # name -> why the grader cannot provide it
    flags: list = field(default_factory=list)         # tampering found in the loaded code
    notes: list = field(default_factory=list)         # statements that change a loaded definition later


def plan(cells: list[Cell], needed: set, *, prefer_definitions=frozenset(), absent=frozenset()) -> Plan:
    """The definitions and data the names in ``needed`` reach, in the state after ``cells`` ran.

    ``cells`` are the code cells the kernel ran, in order. A name takes its last binding; a
    definition's load-time references (base classes, defaults) take the binding current where the
    definition stands, its functions' references the final one. The kernel corrects the reading
    of the source: ``prefer_definitions`` are names it holds a function, class or module for
    (a later conditional assignment did not run), ``absent`` names it does not hold at all (the
    cell stopped with an error before the definition).
    """
    table: dict[str, list[Binding]] = {}
    stars: list[Binding] = []
    for ci, cell in enumerate(cells):
        if cell.tree is None:
            continue
        for si, stmt in enumerate(cell.tree.body):
            for bnd in bindings_of(stmt, cell, (ci, si)):
                (stars if bnd.name == "*" else table.setdefault(bnd.name, [])).append(bnd)
    end = (len(cells), 0)
    out = Plan()
    chosen: dict[tuple, Binding] = {}
    seen: set = set()
    todo = [(n, end, True) for n in sorted(needed)]
    while todo:
        name, before, required = todo.pop()
        if (name, before) in seen:
            continue
        seen.add((name, before))
        cands = [b for b in table.get(name, []) if b.order < before]
        if name in prefer_definitions:
            cands = [b for b in cands if b.kind != "data"] or cands
        star = [b for b in stars if b.order < before]
        if not cands:
            if star:
                chosen[star[-1].order + ("*",)] = star[-1]
            elif not hasattr(builtins, name) and name not in out.data:
                out.data.append(name)  # set some other way (exec, %run ...)? The kernel will tell
                out.unbound.add(name)
            continue
        bnd = cands[-1]
        if bnd.kind == "data":
            if name not in out.data:
                out.data.append(name)
            continue
        if bnd.kind == "blocked":
            out.unavailable.setdefault(name, f"{bnd.cell.label} defines it with {bnd.why}, which the grader "
                                             "does not run")
            continue
        if bnd.kind == "def" and name in absent:
            out.unavailable.setdefault(name, f"{bnd.cell.label} defines it, but that cell stopped with an error "
                                             "before reaching the definition")
            continue
        key = bnd.order + (name,)
        if key in chosen:
            continue
        chosen[key] = bnd
        if bnd.kind == "def":
            out.defined.add(name)
        stmt = bnd.cell.tree.body[bnd.stmt]
        if bnd.kind in ("def", "value"):
            load, later = _references(stmt)
            load.discard(name)
            todo += [(n, bnd.order, False) for n in sorted(load)]
            todo += [(n, end, False) for n in sorted(later)]
    done = set()
    aliases = {b.name for bs in table.values() for b in bs if b.kind == "import"}
    for key in sorted(chosen, key=lambda k: k[:2]):
        bnd = chosen[key]
        if bnd.order in done:
            continue
        done.add(bnd.order)
        out.load.append((bnd.cell, bnd.stmt))
        if bnd.kind in ("def", "value"):
            out.flags += screen(bnd.cell.tree.body[bnd.stmt], bnd.cell, aliases)
    out.flags = list(dict.fromkeys(out.flags))
    out.notes = _later_changes(cells, {b.name: b.order for b in chosen.values() if b.kind == "def"})
    return out


def _later_changes(cells: list[Cell], defined: dict) -> list[str]:
    """Top-level statements that change a definition after it (``Cube.backward = ...``): the grader
    loads the definition as its ``def``/``class`` statement wrote it, not as those statements left it."""
    out = []
    for ci, cell in enumerate(cells):
        if cell.tree is None:
            continue
        for si, stmt in enumerate(cell.tree.body):
            targets = []
            if isinstance(stmt, (ast.Assign, ast.Delete)):
                targets = stmt.targets
            elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
                targets = [stmt.target]
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
                    isinstance(stmt.value.func, ast.Name) and stmt.value.func.id in ("setattr", "delattr"):
                targets = stmt.value.args[:1]
            for t in targets:
                root = t
                while isinstance(root, (ast.Attribute, ast.Subscript)):
                    root = root.value
                name = root.id if isinstance(root, ast.Name) else None
                if name in defined and (ci, si) > defined[name] and (t is not root or isinstance(stmt, ast.Expr)):
                    out.append(f"{cell.label} changes `{name}` after its definition (`{ast.unparse(stmt)[:60]}`): "
                               f"the grader uses `{name}` as its own statement defines it")
    return list(dict.fromkeys(out))[:3]


def prepare(stmt):
    """The statement as the checker executes it: annotations dropped (they would run at load time)."""
    stmt = ast.fix_missing_locations(stmt)
    for node in ast.walk(stmt):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.returns = None
            for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                      node.args.vararg, node.args.kwarg]:
                if a is not None:
                    a.annotation = None
    if isinstance(stmt, ast.AnnAssign):
        stmt = ast.copy_location(ast.Assign(targets=[stmt.target], value=stmt.value or ast.Constant(None)), stmt)
        stmt = ast.fix_missing_locations(stmt)
    if isinstance(stmt, ast.ClassDef):
        body = []
        for s in stmt.body:
            if isinstance(s, ast.AnnAssign):
                if s.value is None:
                    continue
                s = ast.fix_missing_locations(ast.copy_location(ast.Assign(targets=[s.target], value=s.value), s))
            body.append(s)
        stmt.body = body or [ast.copy_location(ast.Pass(), stmt)]
    return stmt


def vet(stmt) -> str | None:
    """Why the checker must not execute this top-level statement (None: it may)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return _vet_function(stmt)
    if isinstance(stmt, ast.ClassDef):
        return _vet_class(stmt)
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        roots = [a.name.split(".")[0] for a in stmt.names] if isinstance(stmt, ast.Import) else [_import_root(stmt)]
        return None if all(r in ALLOWED_IMPORTS for r in roots) else "an import of a library the grader does not load"
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        b = bindings_of(stmt, Cell(0, 0, ""), (0, 0))
        if b and all(x.kind in ("def", "value") for x in b):
            return None
        return "an assignment that computes its value"
    return f"a `{type(stmt).__name__}` statement"


# ---------------------------------------------------------------------------------- hidden tests
PART_LINE = re.compile(r"^\s*#\s*part:\s*([\w-]+)\s*$")


@dataclass
class HiddenStep:
    node: ast.stmt
    number: int              # 1-based number of the assert among the hidden tests (0: another statement)
    message: str | None      # the assert's message, when it is a literal
    text: str                # the assert's condition, as the instructor wrote it
    part: str | None = None  # the part it tests (after a ``# part: NAME`` line), None: the whole exercise


def hidden_parts(source: str) -> list[tuple[int, str]]:
    """The ``# part: NAME`` lines of hidden tests: [(line number, part name)], in order."""
    return [(i, m.group(1)) for i, line in enumerate((source or "").splitlines(), start=1)
            if (m := PART_LINE.match(line))]


def hidden_steps(source: str) -> list[HiddenStep]:
    """The hidden tests' top-level statements; each ``assert`` is one numbered test.

    A statement after a ``# part: NAME`` comment line belongs to that part: when it fails, only
    that part of a partial-credit exercise loses its points. Statements before the first such
    line belong to the whole exercise.
    """
    tree = ast.parse(source or "", filename="<hidden tests>")
    marks = hidden_parts(source)
    steps, n = [], 0
    for stmt in tree.body:
        part = next((name for line, name in reversed(marks) if line < stmt.lineno), None)
        if isinstance(stmt, ast.Assert):
            n += 1
            msg = stmt.msg.value if isinstance(stmt.msg, ast.Constant) and isinstance(stmt.msg.value, str) else None
            text = ast.get_source_segment(source, stmt.test) or ast.unparse(stmt.test)
            steps.append(HiddenStep(stmt, n, msg, " ".join(text.split()), part))
        else:
            steps.append(HiddenStep(stmt, 0, None, "", part))
    return steps


def describe_hidden(steps: list[HiddenStep], number: int) -> str:
    """A hidden test in words: its message, or the condition it checks."""
    total = sum(1 for s in steps if s.number)
    step = next((s for s in steps if s.number == number), None)
    from ._i18n import _
    head = _("hidden test {number} of {total}").format(number=number, total=total)
    if step is None:
        return head
    if step.message:
        return f"{head} ({step.message})"
    text = step.text if len(step.text) <= 160 else step.text[:157] + "..."
    return head + _(", which checks `{code}`").format(code=text)
