"""Grad mode: the per-thread switch that decides whether operations record the graph.

As in PyTorch, grad mode belongs to a thread: ``no_grad()`` in one thread does not stop
another thread from recording, ``backward()`` turns it off (or on, for ``create_graph``)
only in its own thread, and a new thread starts with grad mode on.

``no_grad`` / ``enable_grad`` / ``set_grad_enabled`` work both as context managers and as
decorators, as in PyTorch; a decorated generator function runs each of its steps in the mode.
"""
from __future__ import annotations

import functools
import inspect
import sys
import threading


class _GradModeState(threading.local):
    """``_GradMode.enabled`` is the grad mode of the thread that reads it.

    ``threading.local`` gives every thread its own attributes, and runs ``__init__`` again the
    first time a new thread touches the object: each thread starts with grad mode on.
    """

    def __init__(self) -> None:
        self.enabled = True
        self.key = _ThreadKey()

    def set(self, mode: bool) -> bool:
        """Set this thread's grad mode (a bool); return the previous one."""
        mine = self.__dict__  # this thread's attributes: one thread-local look-up instead of three
        prev = mine["enabled"]
        if mode is not prev:
            mine["enabled"] = mode
            if mode:
                _GRAD_OFF.discard(id(mine["key"]))
            else:
                _GRAD_OFF.add(id(mine["key"]))
        return prev


# Speed only: reading a threading.local costs about 550 CPU instructions (~0.1 us), and the
# forward of every operation reads grad mode; this plain set, shared by all threads, names
# the threads whose grad mode is off. While it is empty (training: no no_grad anywhere),
# grad mode is on in every thread and the operations' hot path does not read the
# thread-local: benchmark (a) +1.1 % instructions with it, +3.1 % without (see benchmarks/README.md).
_GRAD_OFF: set = set()


class _ThreadKey:
    """Stands for its thread in _GRAD_OFF. Only the thread's _GradModeState holds it, so it is
    freed when the thread ends, and then takes the thread out of the set."""

    __slots__ = ()

    def __del__(self, _off=_GRAD_OFF) -> None:  # the set as a default: still there at interpreter exit
        _off.discard(id(self))


_GradMode = _GradModeState()
_set_grad_mode = _GradMode.set


def is_grad_enabled() -> bool:
    """True when operations on tensors that require grad are being recorded (in this thread)."""
    return _GradMode.enabled


class _DecoratorContextManager:
    """A context manager that is also a decorator: every call of the decorated function (every
    step of a decorated generator) runs inside a fresh copy of the context."""

    def clone(self):
        return self.__class__()

    def __call__(self, fn):
        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(self.clone, fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper


def _wrap_generator(make_context, gen_fn):
    @functools.wraps(gen_fn)
    def wrapper(*args, **kwargs):
        gen = gen_fn(*args, **kwargs)
        try:
            with make_context():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make_context():
                        gen.close()
                    raise
                except BaseException:
                    with make_context():
                        response = gen.throw(*sys.exc_info())
                else:
                    with make_context():
                        response = gen.send(request)
        except StopIteration as stop:
            return stop.value

    return wrapper


class _SwitchTo(_DecoratorContextManager):
    """``with`` sets this thread's grad mode to ``_target`` and restores the previous one after."""

    _target: bool

    def __enter__(self) -> None:
        self._prev = _set_grad_mode(self._target)

    def __exit__(self, *exc):
        _set_grad_mode(self._prev)
        return False


class _BareDecorator(_SwitchTo):
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


class set_grad_enabled(_DecoratorContextManager):
    """Turn recording on or off. As in PyTorch, it takes effect immediately (a plain call
    ``set_grad_enabled(False)`` switches it off); ``with`` restores the previous mode at the end;
    used as a decorator, it restores the mode at once and applies it to every call instead."""

    def __init__(self, mode: bool) -> None:
        self._mode = bool(mode)
        self._prev = _set_grad_mode(self._mode)

    def clone(self):
        return set_grad_enabled(self._mode)

    def __call__(self, fn):
        _set_grad_mode(self._prev)  # decorating is not a switch: undo the one of __init__
        return super().__call__(fn)

    def __enter__(self) -> None:
        _set_grad_mode(self._mode)

    def __exit__(self, *exc):
        _set_grad_mode(self._prev)
        return False
