"""A lean tape-based autograd on NumPy: the reference engine of the benchmarks (not minigrad).

What is the least a reverse-mode engine in pure Python + NumPy must do per operation? This
file answers it for the benchmark workloads, so that ``run.py`` can show how much of
minigrad's time is minigrad's own. It records each operation as one tuple on a global tape
and runs the tape backwards, adding gradients into a slot of each variable. It has none of
what makes minigrad a library: no graph objects (``grad_fn``, ``next_functions``), no
``Function``/``ctx``, no version counters, no hooks, no checks of shapes or dtypes, no
broadcasting in backward, no ``create_graph``, one tape per process (not thread-safe), and
only the operations the benchmarks use. Nothing in minigrad imports it.
"""
from __future__ import annotations

import numpy as np

_tape: list = []  # (backward function, output, inputs and saved arrays...) per recorded operation


class Var:
    """An array, its gradient, and whether it is recorded."""

    __slots__ = ("data", "grad", "rg")

    def __init__(self, data, rg: bool = False) -> None:
        self.data = data
        self.grad = None
        self.rg = rg


def _acc(v: Var, g) -> None:
    if v.rg:
        v.grad = g if v.grad is None else v.grad + g


def _new(data, *parents) -> Var:
    out = Var(data)
    for p in parents:
        if p.rg:
            out.rg = True
            break
    return out


# --- elementwise ---------------------------------------------------------------------------
def _mul_bw(g, a, b):
    _acc(a, g * b.data)
    _acc(b, g * a.data)


def mul(a: Var, b: Var) -> Var:
    out = _new(a.data * b.data, a, b)
    if out.rg:
        _tape.append((_mul_bw, out, a, b))
    return out


def _add_bw(g, a, b):
    _acc(a, g)
    _acc(b, g)


def add(a: Var, b: Var) -> Var:
    out = _new(a.data + b.data, a, b)
    if out.rg:
        _tape.append((_add_bw, out, a, b))
    return out


def _log_bw(g, a):
    _acc(a, g / a.data)


def log(a: Var) -> Var:
    out = _new(np.log(a.data), a)
    if out.rg:
        _tape.append((_log_bw, out, a))
    return out


def _exp_bw(g, a, e):
    _acc(a, g * e)


def exp(a: Var) -> Var:
    e = np.exp(a.data)
    out = _new(e, a)
    if out.rg:
        _tape.append((_exp_bw, out, a, e))
    return out


def _relu_bw(g, a, r):
    _acc(a, g * (r > 0))


def relu(a: Var) -> Var:
    r = np.maximum(a.data, 0)
    out = _new(r, a)
    if out.rg:
        _tape.append((_relu_bw, out, a, r))
    return out


def _sum_bw(g, a):
    _acc(a, np.broadcast_to(g, a.data.shape).copy())


def sum_all(a: Var) -> Var:
    out = _new(np.asarray(a.data.sum()), a)
    if out.rg:
        _tape.append((_sum_bw, out, a))
    return out


# --- layers and losses -----------------------------------------------------------------------
def _linear_bw(g, x, w, b):
    if x.rg:
        _acc(x, g @ w.data)
    _acc(w, g.T @ x.data)
    _acc(b, g.sum(axis=0))


def linear(x: Var, w: Var, b: Var) -> Var:
    out = _new(x.data @ w.data.T + b.data, x, w, b)
    if out.rg:
        _tape.append((_linear_bw, out, x, w, b))
    return out


def _mse_bw(g, a, d):
    _acc(a, d * (g * 2.0 / d.size))


def mse(a: Var, target: np.ndarray) -> Var:
    d = a.data - target
    out = _new(np.asarray((d * d).mean()), a)
    if out.rg:
        _tape.append((_mse_bw, out, a, d))
    return out


def _ce_bw(g, a, p, rows, y):
    d = p.copy()
    d[rows, y] -= 1
    d *= g / len(y)
    _acc(a, d)


def cross_entropy(a: Var, y: np.ndarray) -> Var:
    z = a.data - a.data.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1, keepdims=True)
    rows = np.arange(len(y))
    loss = (np.log(s[:, 0]) - z[rows, y]).mean()
    out = _new(np.asarray(loss, dtype=a.data.dtype), a)
    if out.rg:
        _tape.append((_ce_bw, out, a, e / s, rows, y))
    return out


# --- backward ------------------------------------------------------------------------------------
def backward(root: Var) -> None:
    """Run the tape backwards from ``root`` (a scalar), then clear it."""
    root.grad = np.ones_like(root.data)
    tape = _tape
    for entry in reversed(tape):
        out = entry[1]
        g = out.grad
        if g is not None:
            out.grad = None  # an intermediate's gradient is not kept
            entry[0](g, *entry[2:])
    tape.clear()
