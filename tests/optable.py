"""One table row per op, three checks per row: gradcheck, gradgradcheck and PyTorch as an oracle.

A row is ``Row(id, fn, kinds)``: ``fn(T, *inputs)`` runs on either library (``T`` is ``minigrad`` or
``torch``), ``kinds`` says how to make each input (see ``make_array``). The test modules
(test_ops_*.py) each hold a table and call ``table_tests`` to get the three parametrized tests:

* ``gradcheck`` and ``gradgradcheck`` of minigrad in float64 (first and second derivatives
  against finite differences), on the inputs that require grad;
* the oracle: the same ``fn`` on the same data with torch, in float64 (values and the gradients
  of a random weighting of the output must agree to ~1e-10) and in float32 (the output dtypes
  must agree, values to float32 precision). Skipped cleanly when torch is not installed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest

import minigrad
from minigrad.autograd import enable_grad, gradcheck
from minigrad.autograd import gradgradcheck as _gradgradcheck


@dataclass
class Row:
    id: str
    fn: Callable
    kinds: list
    gradgrad: bool = True       # False: the op's gradient is piecewise constant (e.g. sort), or not twice differentiable
    grad: bool = True           # False: the gradient is not the derivative on purpose (embedding's padding_idx)
    oracle: bool = True
    rtol: float = 1e-10
    marks: list = field(default_factory=list)


def make_array(kind: str, shape: tuple, rng) -> tuple[np.ndarray, bool]:
    """An input array and whether it requires grad.

    n: normal; p: in [0.5, 2]; a: |x| in [0.2, 1.5] (away from kinks at 0); u: in [0.1, 0.9];
    s: in (-0.9, 0.9) (asin, atanh); d: well-separated distinct values (no ties: sort, max);
    big: normal * 30 (both tails of softplus-like functions); z: normal with about a third exactly 0;
    an upper-case kind is the same values as a constant (requires_grad False);
    y01: constant uniform in [0, 1]; i<k>: int64 in [0, k); m: bool mask; b: bool random.
    """
    shape = tuple(shape)
    if kind.startswith("i") and kind[1:].isdigit():
        return rng.integers(0, int(kind[1:]), shape).astype(np.int64), False
    if kind in ("m", "b"):
        return rng.random(shape) > 0.5, False
    if kind == "y01":
        return rng.uniform(0.0, 1.0, shape), False
    grad = kind == kind.lower()
    k = kind.lower()
    if k == "n":
        a = rng.standard_normal(shape)
    elif k == "p":
        a = rng.uniform(0.5, 2.0, shape)
    elif k == "a":
        a = rng.uniform(0.2, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    elif k == "u":
        a = rng.uniform(0.1, 0.9, shape)
    elif k == "s":
        a = rng.uniform(-0.9, 0.9, shape)
    elif k == "d":
        n = int(np.prod(shape, dtype=int))
        a = (rng.permutation(np.arange(n)).reshape(shape) * 0.37 - 1.0) if n else np.zeros(shape)
    elif k == "big":
        a = rng.standard_normal(shape) * 30
    elif k == "z":  # normal values with about a third of them exactly 0 (products, cumulative products)
        a = rng.standard_normal(shape) * (rng.random(shape) > 0.35)
    else:
        raise ValueError(kind)
    return np.asarray(a, dtype=np.float64), grad


def make_data(kinds, seed: int) -> list:
    rng = np.random.default_rng(seed)
    return [make_array(k, s, rng) for k, s in kinds]


def to_lib(T, arr: np.ndarray, grad: bool, float_dtype=None):
    if arr.dtype.kind == "f":
        return T.tensor(arr, dtype=float_dtype or T.float64, requires_grad=grad)
    return T.tensor(arr)


def _first(out):
    return out[0] if isinstance(out, (tuple, list)) else out


def run(T, row: Row, data, float_dtype=None, weight_seed=0):
    """Forward ``row.fn``, backward a random weighting of its (first) output; return (value, dtype, grads)."""
    ins = [to_lib(T, a, g, float_dtype) for a, g in data]
    out = _first(row.fn(T, *ins))
    grads = [None] * len(ins)
    if out.requires_grad:
        w = np.random.default_rng(weight_seed).standard_normal(tuple(out.shape))
        (out * T.tensor(w, dtype=out.dtype)).sum().backward()
        grads = [t.grad.detach().numpy().copy() if getattr(t, "requires_grad", False) and t.grad is not None
                 else None for t in ins]
    return out.detach().numpy().copy(), str(out.dtype), grads


def _differentiable(row: Row, data):
    """The function of the inputs that require grad (the others fixed), for gradcheck, and those inputs."""
    ins = [to_lib(minigrad, a, g) for a, g in data]
    idx = [i for i, t in enumerate(ins) if t.requires_grad]

    def f(*xs):
        args = list(ins)
        for i, x in zip(idx, xs):
            args[i] = x
        with enable_grad():  # see test_ops_gradcheck._recording: gradgradcheck's finite differences need it
            return _first(row.fn(minigrad, *args))

    return f, tuple(ins[i] for i in idx)


def check_gradcheck(row: Row) -> None:
    f, xs = _differentiable(row, make_data(row.kinds, seed=0))
    assert xs, f"{row.id}: no input requires grad"
    assert gradcheck(f, xs, eps=1e-6, atol=1e-5, rtol=1e-3)


def check_gradgradcheck(row: Row) -> None:
    f, xs = _differentiable(row, make_data(row.kinds, seed=1))
    assert _gradgradcheck(f, xs, eps=1e-6, atol=1e-5, rtol=1e-3)


def check_oracle(row: Row) -> None:
    torch = pytest.importorskip("torch")
    data = make_data(row.kinds, seed=2)
    mv, mdt, mg = run(minigrad, row, data)
    tv, tdt, tg = run(torch, row, data)
    assert mdt == tdt
    assert mv.shape == tv.shape
    np.testing.assert_allclose(mv, tv, rtol=row.rtol, atol=1e-12)
    for m, t in zip(mg, tg):
        assert (m is None) == (t is None)
        if m is not None:
            np.testing.assert_allclose(m, t, rtol=max(row.rtol, 1e-9), atol=1e-11)
    # float32: the same dtypes as PyTorch, values to float32 precision
    mv, mdt, _ = run(minigrad, row, data, float_dtype=minigrad.float32)
    tv, tdt, _ = run(torch, row, data, float_dtype=torch.float32)
    assert mdt == tdt
    np.testing.assert_allclose(mv.astype(np.float64), tv.astype(np.float64), rtol=2e-4, atol=2e-5)


def params(rows, which: str):
    """pytest params of the rows that take part in check ``which`` ("grad", "gradgrad", "oracle")."""
    keep = {
        "grad": lambda r: r.grad and any(g for _, g in make_data(r.kinds, 0)),
        "gradgrad": lambda r: r.gradgrad and r.grad,
        "oracle": lambda r: r.oracle,
    }[which]
    return [pytest.param(r, id=r.id, marks=r.marks) for r in rows if keep(r)]


# --- first lines of errors ------------------------------------------------------------------------------------
def first_line(T, source: str):
    """(exception type, first line of its message) of evaluating ``source`` with ``torch`` bound to ``T``."""
    try:
        eval(source, {"torch": T, "F": T.nn.functional, "nn": T.nn, "np": np})
    except Exception as e:  # noqa: BLE001 - whatever is raised is compared
        return type(e).__name__, str(e).split("\n", 1)[0]
    return None, "no error"


def check_error_matches_torch(source: str) -> None:
    torch = pytest.importorskip("torch")
    expected = first_line(torch, source)
    got = first_line(minigrad, source)
    assert expected[0] is not None, f"torch raised nothing for {source}"
    assert got == expected
