"""Special functions NumPy lacks: the error function (for erf and the exact GELU).

``erf_array`` is vectorized NumPy, accurate to a few units in the last place of a float64
(measured against ``math.erf``): a series of positive terms near 0, a continued fraction
for the tail. Each loop runs over the terms of the formula, never over the elements.
"""
from __future__ import annotations

import math

import numpy as np

from .._functorch.batched import asarray as _asarray
from .._functorch.batched import on_physical as _on_physical  # np.asarray, batched arrays kept (vmap)

from .._tensor import Tensor, _wrap_dim
from ..autograd.function import Function
from ..autograd.grad_mode import _GradMode

_wrap = Tensor._wrap
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SPLIT = 2.5  # below: 36 terms of the series reach 1.2e-15; above: 25 levels of the fraction reach 2e-16


@_on_physical()  # boolean-mask selection: under vmap it runs on the physical array
def _erf_erfc(x: np.ndarray, want_erfc: bool) -> np.ndarray:
    a = np.abs(_asarray(x, dtype=np.float64))
    out = np.empty_like(a)
    near = a < _SPLIT
    xs = a[near]
    # erf(x) = 2/sqrt(pi) e^(-x^2) sum_n (2x^2)^n x / (1*3*...*(2n+1)): all terms positive, no cancellation
    term = xs.copy()
    total = xs.copy()
    two_x2 = 2.0 * xs * xs
    for n in range(1, 36):
        term *= two_x2
        term /= 2 * n + 1
        total += term
    out[near] = _TWO_OVER_SQRT_PI * np.exp(-xs * xs) * total
    far = ~near
    xl = a[far]
    if xl.size:
        # erfc(x) = e^(-x^2) / sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))), evaluated from the bottom up
        f = xl.copy()
        for k in range(25, 0, -1):
            f = xl + (k / 2) / f
        with np.errstate(under="ignore"):
            out[far] = np.exp(-xl * xl) / math.sqrt(math.pi) / f  # erfc(|x|), accurate even when tiny
    negative = np.signbit(x)
    if want_erfc:  # erfc(x) = 1 - erf(x); erfc(-x) = 2 - erfc(x)
        out[near] = 1.0 - out[near]
        out[negative] = 2.0 - out[negative]
    else:
        out[far] = 1.0 - out[far]
        np.copysign(out, x, out=out)
    return out


def erf_array(x: np.ndarray) -> np.ndarray:
    """erf of a floating array (computed in float64, returned in the input's dtype)."""
    return _erf_erfc(x, False).astype(x.dtype, copy=False)


def erfc_array(x: np.ndarray) -> np.ndarray:
    """1 - erf(x), without the cancellation for large x (erfc(10) ~ 2e-45 in float64)."""
    return _erf_erfc(x, True).astype(x.dtype, copy=False)


def _float_input(a: Tensor, op: str) -> np.ndarray:
    """The array of ``a`` as a floating array: integer and bool inputs give the default float dtype, as in PyTorch."""
    x = a._data
    if x.dtype.kind == "f":
        return x
    from .. import _dtype

    return x.astype(_dtype._default[0].np_dtype)


class Erf(Function):
    _node_name = "ErfBackward0"

    @staticmethod
    def forward(ctx, a):
        x = _float_input(a, "erf")
        ctx.save_for_backward(a)
        return _wrap(erf_array(x))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * ((a * a).neg().exp() * _TWO_OVER_SQRT_PI)


class Erfc(Function):
    _node_name = "ErfcBackward0"

    @staticmethod
    def forward(ctx, a):
        x = _float_input(a, "erfc")
        ctx.save_for_backward(a)
        return _wrap(erfc_array(x))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * ((a * a).neg().exp() * -_TWO_OVER_SQRT_PI)


class LogCumSumExp(Function):
    """y_j = log(exp(x_0) + ... + exp(x_j)) along ``dim``: NumPy's ``logaddexp.accumulate``, stable for any spread.

    dL/dx_i = sum_{j >= i} g_j exp(x_i - y_j). Split into the positive and negative parts of g, each sum is
    exp(x_i + reverse-logcumsumexp(log|g| - y)): never exp of anything above 0 (y_j >= x_i for j >= i).
    """

    _node_name = "LogcumsumexpBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        x = _float_input(a, "logcumsumexp")
        if not x.ndim:
            _wrap_dim(dim, 0, "logcumsumexp")
            ctx.d = None
            out = _wrap(x.copy())
        else:
            ctx.d = d = _wrap_dim(dim, x.ndim, "logcumsumexp")
            out = _wrap(np.logaddexp.accumulate(x, axis=d) if x.size else x.copy())
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, y = ctx.saved_tensors
        d = ctx.d
        if d is None:
            return g, None
        if not _GradMode.enabled:  # log domain on the arrays: sum_j g_j e^(x_i - y_j) for g > 0 and g < 0 apart
            gd, x, yd = g._data, a._data, y._data
            with np.errstate(divide="ignore"):
                log_abs = np.log(np.abs(gd))

            def part(mask):
                z = np.where(mask, log_abs, -np.inf) - yd
                rev = np.flip(np.logaddexp.accumulate(np.flip(z, d), axis=d), d)
                return np.exp(rev + x)

            return _wrap(part(gd > 0) - part(gd < 0)), None
        # recorded (second derivatives): the same sum over a (..., i, j) triangle, every factor a minigrad op
        from .pointwise import where
        from .rearrange import movedim

        last = d == a._data.ndim - 1
        x = a if last else movedim(a, d, -1)
        yl = y if last else movedim(y, d, -1)
        gl = g if last else movedim(g, d, -1)
        n = x._data.shape[-1]
        upper = _wrap(np.arange(n).reshape(1, n) >= np.arange(n).reshape(n, 1))  # [i, j]: j >= i
        diff = where(upper, x.unsqueeze(-1) - yl.unsqueeze(-2), -np.inf)  # x_i - y_j, -inf below the diagonal
        grad = (diff.exp() * gl.unsqueeze(-2)).sum(-1)
        return (grad if last else movedim(grad, -1, d)), None
