"""Every public name of minigrad next to its PyTorch counterpart, read from the package itself.

The book's appendix "From minigrad to PyTorch" shows :func:`markdown` (its notebook calls it when
the book is built, so the page cannot drift from the package), and ``tests/test_api_appendix.py``
checks that every listed name exists in minigrad and, where PyTorch is installed, that every
counterpart exists in PyTorch.

A *namespace* is a module (``minigrad.nn.functional``) or a class (``minigrad.Tensor``) whose public
names are listed. Every public top-level module of minigrad is one (found with ``pkgutil``, except
``minigrad.course``, the course tooling); deeper modules are namespaces when PyTorch has them under
the same name (:data:`SUBMODULES`). The other modules only hold code whose names their parent
re-exports (``minigrad.nn.activation`` defines what ``minigrad.nn`` lists), which the test checks.
"""
from __future__ import annotations

import importlib
import inspect
import numbers
import pkgutil
import types
from dataclasses import dataclass, field

import minigrad

# Modules below the top level that PyTorch has under the same name.
SUBMODULES = ("autograd.forward_ad", "autograd.function", "autograd.functional", "autograd.gradcheck", "autograd.graph",
              "backends.cudnn", "backends.mps", "nn.functional", "nn.init", "nn.utils", "optim.optimizer",
              "utils.checkpoint", "utils.data")

# Classes whose attributes are listed: minigrad path -> PyTorch path. The ctx of a custom Function is
# also its backward node (grad_fn), in both engines.
CLASSES = {
    "minigrad.Tensor": "torch.Tensor",
    "minigrad.autograd.function.BackwardNode": "torch.autograd.function.BackwardCFunction",
    "minigrad.nn.Module": "torch.nn.Module",
    "minigrad.optim.Optimizer": "torch.optim.Optimizer",
}

# Names whose PyTorch counterpart is not the same name in the matching PyTorch namespace:
# minigrad name -> (PyTorch counterpart, or None for none, and a note). Everything else is
# `torch.<same path>` (checked by tests/test_api_appendix.py when PyTorch is installed).
COUNTERPARTS: dict[str, tuple[str | None, str]] = {
    "minigrad.viz": (None, "PyTorch draws no graphs; the third-party package torchviz does "
                           "(`torchviz.make_dot`, which also needs Graphviz)"),
    "minigrad.viz.draw_graph": (None, "closest: `torchviz.make_dot(y)` (third-party)"),
    "minigrad.viz.backward_order": (None, "the nodes of a graph in the order backward runs them"),
    "minigrad.autograd.FunctionCtx": ("torch.autograd.function.FunctionCtx", "PyTorch keeps it in "
                                      "`torch.autograd.function`"),
    "minigrad.autograd.function.BackwardNode": ("torch.autograd.function.BackwardCFunction",
                                                "the class of a custom Function's ctx and grad_fn"),
    "minigrad.autograd.function.AccumulateGrad": ("torch._C._functions.AccumulateGrad",
                                                  "a C++ class in PyTorch"),
    "minigrad.autograd.GradcheckError": ("torch.autograd.gradcheck.GradcheckError",
                                         "PyTorch keeps it in `torch.autograd.gradcheck`"),
    "minigrad.autograd.is_anomaly_enabled": ("torch.is_anomaly_enabled", "at PyTorch's top level"),
    "minigrad.autograd.is_grad_enabled": ("torch.is_grad_enabled", "at PyTorch's top level"),
    "minigrad.autograd.is_inference_mode_enabled": ("torch.is_inference_mode_enabled", "at PyTorch's top level"),
    "minigrad.jit.compile": ("torch.compile", "at PyTorch's top level (`minigrad.compile` too); minigrad "
                             "returns the model unchanged"),
    "minigrad.get_printoptions": (None, "PyTorch 2.13 has `set_printoptions` but no public `get_printoptions`"),
    "minigrad.Tensor.selu": (None, "PyTorch has the function `torch.selu` but no such method"),
    "minigrad.autograd.once_differentiable": ("torch.autograd.function.once_differentiable",
                                              "PyTorch keeps it in `torch.autograd.function`"),
    "minigrad.autograd.gradcheck.numerical_jacobian": ("torch.autograd.gradcheck.get_numerical_jacobian",
                                                       "similar (PyTorch's is deprecated)"),
    "minigrad.autograd.gradcheck.analytical_jacobian": ("torch.autograd.gradcheck.get_analytical_jacobian",
                                                        "similar (PyTorch's is deprecated)"),
}


@dataclass
class Namespace:
    """One group of names: ``path`` in minigrad, ``torch_path`` in PyTorch (None: no counterpart)."""

    path: str
    torch_path: str | None
    is_class: bool
    groups: dict[str, list[str]] = field(default_factory=dict)  # kind -> sorted names

    def names(self) -> list[str]:
        return sorted(n for ns in self.groups.values() for n in ns)


def resolve(path: str, root=None):
    """The object at a dotted path such as ``minigrad.nn.functional.relu`` (``torch.…`` with root=torch)."""
    parts = path.split(".")
    obj = root if root is not None else importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], 1):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            try:
                obj = importlib.import_module(".".join(parts[: i + 1]))  # a submodule not imported yet
            except ImportError:
                # a module shadowed by a function of the same name (autograd.gradcheck): its attribute
                obj = getattr(importlib.import_module(".".join(parts[:i])), part)
    return obj


def _public_modules() -> list[str]:
    """minigrad's public top-level modules, except the course tooling."""
    return sorted(m.name for m in pkgutil.iter_modules(minigrad.__path__)
                  if not m.name.startswith("_") and m.name != "course")


def _home(obj) -> str:
    """The module an object was defined in (for instances: their type's)."""
    if inspect.isclass(obj) or inspect.isfunction(obj) or inspect.isbuiltin(obj):
        return getattr(obj, "__module__", "") or ""
    wrapped = getattr(obj, "__wrapped__", None)  # decorated functions
    if wrapped is not None:
        return _home(wrapped)
    return type(obj).__module__


def _module_kind(obj) -> str | None:
    if isinstance(obj, types.ModuleType):
        return None
    if inspect.isclass(obj):
        return "classes"
    if callable(obj):
        return "functions"
    if isinstance(obj, minigrad.dtype):
        return "dtypes"
    return "other"


def _module_names(mod: types.ModuleType, top: bool) -> dict[str, list[str]]:
    """Public names defined in minigrad (not re-exports of NumPy, typing, ...) and, below the top
    level, defined inside this module's own package (``minigrad.nn.functional.relu`` but not the
    ``Tensor`` class that ``minigrad.nn.functional`` happens to import)."""
    groups: dict[str, list[str]] = {}
    prefix = "minigrad" if top else mod.__name__
    for name in dir(mod):
        if name.startswith("_"):
            continue
        obj = getattr(mod, name)
        kind = _module_kind(obj)
        if kind is None:
            continue
        home = _home(obj)
        if not (home == prefix or home.startswith(prefix + ".")):
            if not (top and isinstance(obj, numbers.Number) and not isinstance(obj, bool)):
                continue  # a plain constant (e.g. torch.pi) counts only at the top level
        groups.setdefault(kind, []).append(name)
    return {k: sorted(v) for k, v in groups.items()}


def _class_kind(cls, name: str) -> str:
    attr = inspect.getattr_static(cls, name)
    if isinstance(attr, (property, types.GetSetDescriptorType, types.MemberDescriptorType)) or not callable(
            getattr(cls, name)):
        return "attributes"
    return "in-place methods" if name.endswith("_") and not name.endswith("__") else "methods"


def _class_names(cls) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for name in dir(cls):
        if name.startswith("_") or hasattr(object, name):
            continue
        try:
            getattr(cls, name)
        except AttributeError:  # a stub for a PyTorch name minigrad does not implement
            continue
        groups.setdefault(_class_kind(cls, name), []).append(name)
    return {k: sorted(v) for k, v in groups.items()}


def namespaces() -> list[Namespace]:
    """Every namespace of minigrad, with its names, in the order the appendix lists them."""
    out = [Namespace("minigrad", "torch", False, _module_names(minigrad, top=True))]
    modules = [f"minigrad.{m}" for m in _public_modules()]
    modules += [f"minigrad.{m}" for m in SUBMODULES]
    classes = dict(CLASSES)
    for path in sorted(modules, key=lambda p: (p.split(".")[1], p)):
        mod = importlib.import_module(path)
        torch_path = COUNTERPARTS[path][0] if path in COUNTERPARTS else "torch" + path[len("minigrad"):]
        out.append(Namespace(path, torch_path, False, _module_names(mod, top=False)))
        for cpath in [c for c in classes if c.rsplit(".", 1)[0] == path or
                      (c.startswith(path + ".") and c.count(".") == path.count(".") + 1)]:
            out.append(Namespace(cpath, classes.pop(cpath), True, _class_names(resolve(cpath))))
    for cpath, torch_cpath in classes.items():  # minigrad.Tensor: a class of the top level
        out.insert(1, Namespace(cpath, torch_cpath, True, _class_names(resolve(cpath))))
    return out


def counterpart(ns: Namespace, name: str) -> str | None:
    """The PyTorch path of ``ns.path + '.' + name`` (None: PyTorch has none)."""
    full = f"{ns.path}.{name}"
    if full in COUNTERPARTS:
        return COUNTERPARTS[full][0]
    return None if ns.torch_path is None else f"{ns.torch_path}.{name}"


_KIND_ORDER = ("classes", "functions", "dtypes", "other", "attributes", "methods", "in-place methods")
_KIND_TITLE = {"classes": "Classes", "functions": "Functions", "dtypes": "dtypes", "other": "Other objects",
               "attributes": "Attributes and properties", "methods": "Methods",
               "in-place methods": "In-place methods (they end in `_`)"}


def markdown(heading_level: int = 3) -> str:
    """The appendix's list of names, as MyST Markdown."""
    h = "#" * heading_level
    parts = []
    total = 0
    for ns in namespaces():
        names = ns.names()
        total += len(names)
        if ns.torch_path is None:
            title = f"{h} `{ns.path}`: minigrad only"
            note = COUNTERPARTS.get(ns.path, (None, ""))[1]
            lead = f"{note}. Its {len(names)} names:" if note else f"No PyTorch counterpart. Its {len(names)} names:"
        else:
            title = f"{h} `{ns.path}` → `{ns.torch_path}`"
            what = "attributes" if ns.is_class else "names"
            lead = (f"{len(names)} {what}; each one is `{ns.torch_path}.<name>` in PyTorch"
                    + (", except where the list below says otherwise:" if any(
                        f"{ns.path}.{n}" in COUNTERPARTS for n in names) else ":"))
        if not names:
            lead = "No names of its own (it holds submodules, as PyTorch's does)."
        parts += [title, "", lead, ""]
        for kind in _KIND_ORDER:
            if kind in ns.groups:
                listed = " ".join(f"`{n}`" for n in ns.groups[kind])
                parts += [f"**{_KIND_TITLE[kind]}** ({len(ns.groups[kind])}): {listed}", ""]
        special = [(n, *COUNTERPARTS[f"{ns.path}.{n}"]) for n in names if f"{ns.path}.{n}" in COUNTERPARTS]
        if special:  # a list, not a table: long dotted names wrap in a list, a table overflows the page
            parts += [f"- `{ns.path}.{n}` → {f'`{t}`' if t else 'no counterpart'}: {note}" for n, t, note in special]
            parts += [""]
    summary = (f"{total} names in {len(namespaces())} namespaces, read from minigrad {minigrad.__version__} "
               "when this page was built.")
    return "\n".join([summary, ""] + parts).rstrip() + "\n"


def listed_paths() -> list[tuple[str, str | None]]:
    """(minigrad path, PyTorch path or None) for every listed name: what the test checks."""
    return [(f"{ns.path}.{n}", counterpart(ns, n)) for ns in namespaces() for n in ns.names()]
