"""Grad mode: one global switch that decides whether operations record the graph.

``no_grad`` / ``enable_grad`` / ``set_grad_enabled`` work both as context managers
and as decorators, as in PyTorch.
"""
from __future__ import annotations

import functools


class _GradModeState:
    # An attribute of a singleton instance: cheap to read and to write on the hot path
    # (writing a *class* attribute would invalidate CPython's attribute caches every time).
    __slots__ = ("enabled",)

    def __init__(self) -> None:
        self.enabled = True


_GradMode = _GradModeState()


def is_grad_enabled() -> bool:
    """True when operations on tensors that require grad are being recorded."""
    return _GradMode.enabled


class _GradModeContext:
    _target: bool

    def __enter__(self):
        self._prev = _GradMode.enabled
        _GradMode.enabled = self._target
        return self

    def __exit__(self, *exc):
        _GradMode.enabled = self._prev
        return False

    def __call__(self, fn):
        target = self._target

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = _GradMode.enabled
            _GradMode.enabled = target
            try:
                return fn(*args, **kwargs)
            finally:
                _GradMode.enabled = prev

        return wrapper


class _BareDecorator(_GradModeContext):
    # PyTorch 2 accepts both @no_grad() and a bare @no_grad.
    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_BareDecorator):
    """Do not record operations (inference, parameter updates)."""

    _target = False


class enable_grad(_BareDecorator):
    """Record operations again inside a ``no_grad`` block."""

    _target = True


class set_grad_enabled(_GradModeContext):
    """Turn recording on or off; takes effect immediately, as in PyTorch."""

    def __init__(self, mode: bool) -> None:
        self._prev = _GradMode.enabled
        self._target = bool(mode)
        _GradMode.enabled = self._target

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _GradMode.enabled = self._prev
        return False
