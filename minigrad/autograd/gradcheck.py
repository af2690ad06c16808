"""Check analytical gradients (backward) against finite differences.

The numerical Jacobian perturbs each input element by +-eps and uses central differences
(one column per input element); the analytical one is built row by row with ``autograd.grad``
and one-hot grad_outputs (one vector-Jacobian product per output element). It is built twice:
a backward that gives different values for the same input and grad_output is reported as
"not reentrant" unless the difference is within ``nondet_tol``, as in PyTorch. Use float64
inputs: in float32 the rounding error of the finite difference is larger than ``atol``.
"""
from __future__ import annotations

import warnings
from typing import Callable, Sequence

import numpy as np

from .._tensor import Tensor
from .engine import grad as _grad
from .grad_mode import enable_grad


class GradcheckError(RuntimeError):
    """Raised by gradcheck / gradgradcheck when the gradients do not match."""


def _as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _differentiable_outputs(out) -> list:
    return [o for o in _as_tuple(out) if isinstance(o, Tensor) and o._data.dtype.kind == "f"]


def _fmt(a: np.ndarray) -> str:
    from .._printing import tensor_repr

    return tensor_repr(Tensor._wrap(a))


def numerical_jacobian(fn: Callable, inputs: tuple, eps: float = 1e-6) -> list:
    """J[out][inp] as arrays of shape (numel(inp), numel(out)) (PyTorch's layout).

    Column by column in the math layout: input element j is nudged by +-eps (in place, then
    restored) and the central difference of every output is row j here. ``fn`` runs in the
    caller's grad mode, as in PyTorch, so a function that differentiates internally (a
    hand-written vector-Jacobian product, gradgradcheck's) works.
    """
    outs = _differentiable_outputs(fn(*inputs))
    jac = [[None] * len(inputs) for _ in outs]
    for i, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x._rg):
            continue
        flat = x._data.reshape(-1)  # a view for contiguous inputs
        shares = np.shares_memory(flat, x._data)
        cols = [np.zeros((x._data.size, o._data.size)) for o in outs]
        for j in range(x._data.size):
            orig = flat[j].item()
            flat[j] = orig + eps
            if not shares:
                x._data[...] = flat.reshape(x._data.shape)
            plus = [o._data.astype(np.float64).reshape(-1) for o in _differentiable_outputs(fn(*inputs))]
            flat[j] = orig - eps
            if not shares:
                x._data[...] = flat.reshape(x._data.shape)
            minus = [o._data.astype(np.float64).reshape(-1) for o in _differentiable_outputs(fn(*inputs))]
            flat[j] = orig
            if not shares:
                x._data[...] = flat.reshape(x._data.shape)
            for k in range(len(outs)):
                cols[k][j] = (plus[k] - minus[k]) / (2 * eps)
        for k in range(len(outs)):
            jac[k][i] = cols[k]
    return jac


def analytical_jacobian(fn: Callable, inputs: tuple) -> list:
    with enable_grad():
        outs = _differentiable_outputs(fn(*inputs))
    diff_inputs = [x for x in inputs if isinstance(x, Tensor) and x._rg]
    jac = [[None] * len(inputs) for _ in outs]
    for k, o in enumerate(outs):
        rows = {i: np.zeros((x._data.size, o._data.size)) for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._rg}
        if o._rg:
            for m in range(o._data.size):
                seed = np.zeros(o._data.size, dtype=o._data.dtype)
                seed[m] = 1
                gs = _grad(o, diff_inputs, Tensor._wrap(seed.reshape(o._data.shape)), retain_graph=True,
                           allow_unused=True)
                it = iter(gs)
                for i, x in enumerate(inputs):
                    if isinstance(x, Tensor) and x._rg:
                        g = next(it)
                        if g is not None:
                            rows[i][:, m] = g._data.astype(np.float64).reshape(-1)
        for i, r in rows.items():
            jac[k][i] = r
    return jac


def gradcheck(fn: Callable, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              fast_mode: bool = False, **_ignored) -> bool:
    """True if backward agrees with finite differences for every input that requires grad."""
    inputs = _as_tuple(inputs)
    if not any(isinstance(x, Tensor) and x._rg for x in inputs):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor) and x._rg and x._data.dtype != np.float64:
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                "This check will likely fail if all the inputs are not of double precision floating point or "
                "complex. ",  # PyTorch's words (minigrad has no complex dtype)
                UserWarning, stacklevel=2)
    numerical = numerical_jacobian(fn, inputs, eps)
    analytical = analytical_jacobian(fn, inputs)
    if len(numerical) != len(analytical):
        raise GradcheckError(
            f"gradcheck: the function returned {len(analytical)} differentiable output(s) on the inputs but "
            f"{len(numerical)} on the perturbed inputs; it must return the same outputs every time."
        )
    again = analytical_jacobian(fn, inputs)  # the same backward again: is it deterministic?
    try:
        for k in range(len(numerical)):  # per output, as PyTorch: reentrancy first, then the comparison
            _check_reentrant(k, analytical[k], again[k], nondet_tol)
            _check_close(k, numerical[k], analytical[k], atol, rtol)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _check_reentrant(k: int, ana_row: list, again_row: list, nondet_tol: float) -> None:
    for i, (a, b) in enumerate(zip(ana_row, again_row)):
        if a is not None and a.size and np.abs(a - b).max() > nondet_tol:
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with same input and grad_output multiple "
                "times gives different values, although analytical gradient matches numerical gradient."
                f"The tolerance for nondeterminism was {nondet_tol}.\n\n"
                f"Two runs of backward for output {k} with respect to input {i} differ by up to "
                f"{np.abs(a - b).max():.3g}. (This is checked before, and whatever, the comparison with finite "
                "differences.) If backward is meant to vary that little, e.g. a sum taken in a varying order, "
                "pass nondet_tol=<the largest acceptable difference>."
            )


def _check_close(k: int, num_row: list, ana_row: list, atol: float, rtol: float) -> None:
    for i, (n, a) in enumerate(zip(num_row, ana_row)):
        if n is None:
            continue
        bad = ~(np.abs(a - n) <= atol + rtol * np.abs(n))
        if bad.any():
            where = np.argwhere(bad)[:5]
            pos = ", ".join(f"(input element {r}, output element {c}): numerical {n[r, c]:.6g}, "
                            f"analytical {a[r, c]:.6g}" for r, c in where)
            raise GradcheckError(
                f"Jacobian mismatch for output {k} with respect to input {i},\n"
                f"numerical:{_fmt(n)}\nanalytical:{_fmt(a)}\n\n"
                f"The backward's gradient for input {i} disagrees with finite differences in {int(bad.sum())} "
                f"of {bad.size} entries (rows: input elements, columns: output elements). First: {pos}."
            )


def gradgradcheck(fn: Callable, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, **_ignored) -> bool:
    """gradcheck of the gradient itself: checks second derivatives (backward of backward)."""
    inputs = _as_tuple(inputs)
    with enable_grad():
        outs = _differentiable_outputs(fn(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(Tensor._wrap(rng.standard_normal(o._data.shape).astype(np.float64)).requires_grad_()
                             for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)

    def first_order(*args):
        # Always record (the caller may be in no_grad mode): the first
        # derivative must be built with create_graph so that it can be differentiated again.
        with enable_grad():
            ins, gos = args[:n], args[n:]
            outs = [o for o in _differentiable_outputs(fn(*ins)) if o._rg]
            diff = [x for x in ins if isinstance(x, Tensor) and x._rg]
            grads = _grad(outs, diff, gos[:len(outs)], create_graph=True, allow_unused=True)
            return tuple(g if g is not None else Tensor._wrap(np.zeros_like(x._data)) for g, x in zip(grads, diff))

    return gradcheck(first_order, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol)


__all__: Sequence[str] = ("gradcheck", "gradgradcheck", "GradcheckError")
