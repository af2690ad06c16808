"""Demonstrations of an error or a warning in a chapter cell, on either engine.

A cell whose point is an exception shows it with :func:`expect_error`::

    from minigrad.course.demos import expect_error, expect_warning

    with expect_error(RuntimeError, "returned an incorrect number of gradients"):
        ScaleByForgetsK.apply(x, 5.0).sum().backward()

prints ``RuntimeError: function ScaleByForgetsKBackward returned an incorrect number ...`` (the
type and the first line of the message; a line longer than 76 columns is wrapped) and lets the cell go on. When
nothing is raised, the demonstration is wrong, and the cell fails with
``AssertionError: expected RuntimeError, but nothing was raised``; an exception of another type
is not caught. A warning is shown the same way::

    with expect_warning(UserWarning, "once_differentiable"):
        ...

This module is course tooling, not part of the engine: it imports neither minigrad nor torch,
so a chapter cell that uses it runs unchanged on PyTorch (the transfer test does not replace
``minigrad.course``), and minigrad itself never imports it.
"""
from __future__ import annotations

import re
import textwrap
import warnings

__all__ = ["expect_error", "expect_warning"]

WIDTH = 76  # the code column of the book at 1280 px


def _names(kind) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def _first_line(text: str) -> str:
    lines = [line for line in str(text).splitlines() if line.strip()]
    return lines[0].strip() if lines else ""


def _wrap(text: str) -> str:
    """Each line wrapped at WIDTH columns on its own (a printed matrix keeps its layout)."""
    return "\n".join(line if len(line) <= WIDTH else textwrap.fill(line, WIDTH)
                     for line in text.splitlines())


def _check_show(show) -> None:
    if not (show is False or show is None or callable(show) or show in ("line", "type", "message")):
        raise ValueError(f"show must be 'line', 'type', 'message', False or a function of the message, not {show!r}")


def _render(name: str, text: str, show) -> str | None:
    """What a demonstration prints: None for nothing."""
    if show is False or show is None:
        return None
    if callable(show):
        text = show(text)
        return None if text is None else _wrap(f"{name}: {text}")
    if show == "type":
        return name
    if show == "line":
        return _wrap(f"{name}: {_first_line(text)}")
    if show == "message":
        return _wrap(f"{name}: {str(text).strip()}")
    raise ValueError(f"show must be 'line', 'type', 'message', False or a function of the message, not {show!r}")


class expect_error:
    """Context manager: the block must raise ``kind`` (a class or a tuple of classes).

    ``match``: a regular expression that ``re.search`` must find in the message.
    ``show``: what to print when the error comes: ``"line"`` (default: the type and the first
    line of the message), ``"type"`` (the type only), ``"message"`` (the whole message),
    ``False`` (nothing; the cell prints from ``.value`` itself), or a function that takes the
    message and returns the text to print after the type.

    After the block, ``.value`` is the exception, ``.message`` its text and ``.type_name`` the
    name of its class.
    """

    def __init__(self, kind, match: str | None = None, *, show="line"):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not kinds or not all(isinstance(k, type) and issubclass(k, BaseException) for k in kinds):
            raise TypeError(f"expect_error needs an exception class (or a tuple of them), not {kind!r}")
        _check_show(show)  # a wrong `show` fails here, before the block runs
        self.kind, self.match, self.show = kind, match, show
        self.value: BaseException | None = None

    @property
    def message(self) -> str:
        return "" if self.value is None else str(self.value)

    @property
    def type_name(self) -> str:
        return "" if self.value is None else type(self.value).__name__

    def __enter__(self) -> "expect_error":
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is None:
            raise AssertionError(f"expected {_names(self.kind)}, but nothing was raised")
        if not issubclass(exc_type, self.kind):
            return False  # not the demonstrated error: it propagates with its own traceback
        if exc is None:  # raised as a bare class by some C code paths
            exc = exc_type()
        if self.match is not None and not re.search(self.match, str(exc)):
            raise AssertionError(
                f"expected {_names(self.kind)} matching {self.match!r}, but the message was: "
                f"{_first_line(str(exc))!r}") from exc
        self.value = exc
        text = _render(type(exc).__name__, str(exc), self.show)
        if text is not None:
            print(text)
        return True


class expect_warning:
    """Context manager: the block must issue a warning of category ``kind``.

    ``match`` and ``show`` as for :class:`expect_error`; each distinct matching warning is
    printed once. Warnings that do not match are issued again after the block, as if the
    block had not caught them. After the block, ``.caught`` lists the matching
    ``warnings.WarningMessage`` records and ``.value`` is the first one's message.
    """

    def __init__(self, kind, match: str | None = None, *, show="line"):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not kinds or not all(isinstance(k, type) and issubclass(k, Warning) for k in kinds):
            raise TypeError(f"expect_warning needs a warning category (or a tuple of them), not {kind!r}")
        _check_show(show)
        self.kind, self.match, self.show = kind, match, show
        self.caught: list[warnings.WarningMessage] = []
        self._recorder = None
        self._records = None

    @property
    def value(self) -> Warning | None:
        return self.caught[0].message if self.caught else None

    def __enter__(self) -> "expect_warning":
        self._recorder = warnings.catch_warnings(record=True)
        self._records = self._recorder.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        records = list(self._records)
        self._recorder.__exit__(exc_type, exc, tb)
        matching, others = [], []
        for rec in records:
            ok = issubclass(rec.category, self.kind) and (
                self.match is None or re.search(self.match, str(rec.message)))
            (matching if ok else others).append(rec)
        for rec in others:  # not ours: the notebook shows them as usual
            warnings.warn_explicit(rec.message, rec.category, rec.filename, rec.lineno, source=rec.source)
        if exc_type is not None:
            return False  # an exception in the block is never the demonstration of a warning
        if not matching:
            what = f"{_names(self.kind)}" + (f" matching {self.match!r}" if self.match else "")
            seen = "; ".join(f"{r.category.__name__}: {_first_line(str(r.message))}" for r in others)
            raise AssertionError(f"expected {what}, but no such warning was issued"
                                 + (f" (issued: {seen})" if seen else ""))
        self.caught = matching
        shown = set()
        for rec in matching:
            key = (rec.category, str(rec.message))
            if key in shown:
                continue
            shown.add(key)
            text = _render(rec.category.__name__, str(rec.message), self.show)
            if text is not None:
                print(text)
        return False
