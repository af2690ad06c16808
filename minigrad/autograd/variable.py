"""``Variable`` (PyTorch < 0.4) and ``inference_mode``: names old and new code reaches for.

``Variable(t)`` is the tensor itself, as in PyTorch today (``Variable(t, requires_grad=True)`` sets the
flag). ``inference_mode`` is ``no_grad`` for minigrad (it has no separate inference tensors).
"""
from __future__ import annotations

import functools
import threading

from .._tensor import Tensor
from .grad_mode import no_grad


class _VariableMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(tensor, requires_grad=False)`` returns the tensor (no wrapper), as PyTorch does now."""

    def __new__(cls, data: Tensor, requires_grad: bool = False, volatile: bool = False):
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if requires_grad:
            data.requires_grad_(True)
        return data


_state = threading.local()


def is_inference_mode_enabled() -> bool:
    return getattr(_state, "depth", 0) > 0


class inference_mode:
    """Like ``no_grad`` (no graph is recorded); ``inference_mode(False)`` changes nothing. A context manager
    and a decorator (``@inference_mode()`` or bare ``@inference_mode``)."""

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):  # bare @inference_mode
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)
        self._ctx = None

    def __enter__(self):
        if self.mode:
            self._ctx = no_grad()
            self._ctx.__enter__()
            _state.depth = getattr(_state, "depth", 0) + 1
        return self

    def __exit__(self, *exc):
        if self.mode:
            _state.depth -= 1
            self._ctx.__exit__(*exc)
        return False

    def __call__(self, fn):
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)

        return wrapper
