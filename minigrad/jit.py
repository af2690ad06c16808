"""``torch.jit.script`` / ``torch.jit.trace`` (and ``torch.compile``): minigrad does not compile, so these
return the function or module unchanged, after a one-time warning that says so."""
from __future__ import annotations

import functools
import warnings

_warned: set = set()


def _no_compile(what: str) -> None:
    if what not in _warned:
        _warned.add(what)
        warnings.warn(f"minigrad does not compile: {what} returns the function unchanged (it runs eagerly, as "
                      "written).", UserWarning, stacklevel=3)


def script(obj=None, *args, **kwargs):
    """Identity decorator (``@torch.jit.script``); warns once."""
    _no_compile("torch.jit.script")
    return obj


def trace(func, example_inputs=None, *args, **kwargs):
    """Returns ``func`` itself; warns once."""
    _no_compile("torch.jit.trace")
    return func


def is_scripting() -> bool:
    """False: code runs eagerly (PyTorch returns True only inside TorchScript)."""
    return False


def is_tracing() -> bool:
    """False: nothing is being traced (PyTorch returns True only under torch.jit.trace)."""
    return False


def ignore(fn=None, **kwargs):
    return fn if fn is not None else (lambda f: f)


def unused(fn):
    return fn


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend="inductor", mode=None, options=None,  # noqa: A001
            disable: bool = False):
    """``torch.compile``: returns the model or function unchanged (warns once); usable as ``@torch.compile`` or
    ``@torch.compile(mode=...)``."""
    _no_compile("torch.compile")
    if model is None:
        return functools.partial(_identity)
    return model


def _identity(model):
    return model
