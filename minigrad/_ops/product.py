"""Products: ``prod`` (over everything or one dim) and ``cumprod``, with gradients that are right
where inputs are zero, to first and second order.

The derivative of a product with respect to one factor is the product of the *other* factors.
Dividing the product by the factor gives it only when the factor is not 0. With zeros:

* prod: one zero in a slice: the zero's gradient is the product of the rest, every other
  gradient is 0; two or more zeros: every gradient is 0.
* cumprod: y_j = x_0 ... x_j, so dL/dx_k = sum_{j >= k} g_j prod_{l <= j, l != k} x_l. With z the
  first zero of the slice: for k < z the division formula holds (x_k != 0, and y_j = 0 kills the
  terms j >= z on both sides); for k > z every term contains x_z = 0; and for k = z it is
  sum_{j >= z} g_j y'_j, y' the cumprod with that zero replaced by 1.

The ordinary backward computes this on the arrays, in O(n). When the backward itself is recorded
(create_graph=True), it is written with differentiable minigrad operations that need no division:
"the product of the others" is the product of an exclusive cumprod from the left and one from the
right (prod), and cumprod's backward is a sum over a triangle of such products (O(n^2) memory, used
only for higher derivatives).
"""
from __future__ import annotations

import numpy as np

from .._functorch.batched import asarray as _asarray
from .._functorch.batched import on_physical as _on_physical  # np.asarray, batched arrays kept (vmap)

from .._tensor import Tensor, _wrap_dim
from ..autograd.function import Function
from ..autograd.grad_mode import _GradMode
from .reduction import _kept_shape

_wrap = Tensor._wrap


def _result_dtype(x: np.ndarray, dtype) -> np.dtype:
    if dtype is not None:
        from .._dtype import to_numpy_dtype

        return to_numpy_dtype(dtype)
    return np.dtype(np.int64) if x.dtype.kind in "biu" else x.dtype


def _others_product(x: np.ndarray, axis: int | None) -> np.ndarray:
    """prod of every element of the slice but this one, for each element (exact at zeros), on arrays."""
    if axis is None:
        return _others_product(x.reshape(-1), 0).reshape(x.shape)
    is_zero = x == 0
    zeros = is_zero.sum(axis=axis, keepdims=True)
    nonzero_prod = np.where(is_zero, 1, x).prod(axis=axis, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        no_zero = nonzero_prod / x  # the slice has no zero: the product of the others is prod / x
    return np.where(zeros == 0, no_zero, np.where((zeros == 1) & is_zero, nonzero_prod, 0)).astype(x.dtype)


def _exclusive_cumprod(t: Tensor, d: int) -> Tensor:
    """[1, x0, x0 x1, ...] along d, differentiably."""
    from .shape import Cat

    c = Cumprod.apply(t, d)
    n = t._data.shape[d]
    ones = _wrap(np.ones(t._data.shape[:d] + (1,) + t._data.shape[d + 1:], t._data.dtype))
    return Cat.apply(d, ones, c.narrow(d, 0, n - 1))


def _others_product_tensor(t: Tensor, d: int) -> Tensor:
    """The same as _others_product with minigrad operations (no division: differentiable at zeros)."""
    from .rearrange import Flip

    left = _exclusive_cumprod(t, d)
    right = Flip.apply(_exclusive_cumprod(Flip.apply(t, (d,)), d), (d,))
    return left * right


class Prod(Function):
    """The product of all elements (ProdBackward0) or along ``dim`` (ProdBackward1)."""

    _node_name = "ProdBackward0"

    @staticmethod
    def forward(ctx, a, dim, keepdim, dtype):
        x = a._data
        out_dtype = _result_dtype(x, dtype)
        if dim is None:
            ctx.d = None
            out = _asarray(x.prod(dtype=out_dtype))
        else:
            d = _wrap_dim(dim, x.ndim, "prod")
            ctx.d = d if x.ndim else None
            out = _asarray(x.prod(axis=d, keepdims=keepdim, dtype=out_dtype) if x.ndim else x.astype(out_dtype))
        ctx.shape, ctx.keepdim = x.shape, keepdim
        ctx.save_for_backward(a)
        return _wrap(out)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        d, shape = ctx.d, ctx.shape
        g = g.reshape(_kept_shape(shape, tuple(range(len(shape))) if d is None else (d,)))
        if not _GradMode.enabled:
            return _wrap(g._data * _others_product(a._data, d)), None, None, None
        if d is None:
            others = _others_product_tensor(a.reshape(-1), 0).reshape(shape) if shape else a * 0 + 1
        else:
            others = _others_product_tensor(a, d)
        return g * others, None, None, None


class ProdDim(Prod):
    _node_name = "ProdBackward1"


@_on_physical(axis_arg=3)  # branches on the data: under vmap it runs on the physical arrays
def _cumprod_backward_array(g: np.ndarray, x: np.ndarray, y: np.ndarray, d: int) -> np.ndarray:
    """dL/dx of y = cumprod(x) along d (see the module docstring), O(n) per slice."""
    is_zero = x == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        # k before the first zero: sum_{j >= k} g_j y_j / x_k
        rev = np.flip(np.cumsum(np.flip(g * y, d), axis=d), d)
        out = rev / x
    if not is_zero.any():
        return out
    n = x.shape[d]
    first = np.where(is_zero.any(axis=d, keepdims=True), is_zero.argmax(axis=d).reshape(_kept_shape(x.shape, (d,))), n)
    pos = np.arange(n).reshape([-1 if k == d else 1 for k in range(x.ndim)])
    out = np.where(pos < first, out, 0)
    # k = z (the first zero): sum_{j >= z} g_j y'_j, y' = cumprod with that zero replaced by 1
    x1 = np.where(pos == first, 1, x)
    y1 = np.cumprod(x1, axis=d)
    at_zero = (g * y1 * (pos >= first)).sum(axis=d, keepdims=True)
    return np.where(pos == first, at_zero, out).astype(x.dtype, copy=False)


class Cumprod(Function):
    _node_name = "CumprodBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        x = a._data
        if not x.ndim:
            _wrap_dim(dim, 0, "cumprod")
            ctx.d = None
            out = x.astype(np.int64) if x.dtype.kind in "biu" else x.copy()
        else:
            ctx.d = d = _wrap_dim(dim, x.ndim, "cumprod")
            out = np.cumprod(x, axis=d, dtype=np.int64 if x.dtype.kind in "biu" else x.dtype)
        out = _wrap(out)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, y = ctx.saved_tensors
        d = ctx.d
        if d is None:
            return g, None
        if not _GradMode.enabled:
            return _wrap(_cumprod_backward_array(g._data, a._data, y._data, d)), None
        # Recorded: grad_k = sum_{j >= k} g_j L_k R_kj with L_k = prod_{l < k} x_l, R_kj = prod_{k < l <= j} x_l,
        # computed on an (..., k, j) triangle (every factor a minigrad op, no division).
        from .pointwise import where
        from .rearrange import movedim

        last = d == a._data.ndim - 1
        x = a if last else movedim(a, d, -1)
        gl = g if last else movedim(g, d, -1)
        n = x._data.shape[-1]
        k = np.arange(n).reshape(n, 1)
        j = np.arange(n).reshape(1, n)
        after_k = _wrap(j > k)                         # X[..., k, l] = x_l if l > k else 1
        X = where(after_k, x.unsqueeze(-2), 1.0)
        R = Cumprod.apply(X, -1)                       # R[..., k, j] = prod_{k < l <= j} x_l
        L = _exclusive_cumprod(x, x.ndim - 1)          # L[..., k]
        M = R * L.unsqueeze(-1) * _wrap((j >= k).astype(x._data.dtype))
        grad = (M * gl.unsqueeze(-2)).sum(-1)
        return (grad if last else movedim(grad, -1, d)), None


def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, *, dtype=None) -> Tensor:
    return (Prod if dim is None else ProdDim).apply(input, dim, keepdim, dtype)


def cumprod(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    if dtype is not None:
        input = input.to(dtype)
    return Cumprod.apply(input, dim)

