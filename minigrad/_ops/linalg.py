"""Matrix multiplication (NumPy's matmul rules: 1-D operands, batch broadcasting)."""
from __future__ import annotations

import numpy as np

from .._functorch.batched import asarray as _asarray  # np.asarray, batched arrays kept (vmap)

from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import _GradMode

_wrap = Tensor._wrap


def _mm_error(op: str, a: np.ndarray, b: np.ndarray) -> RuntimeError:
    sa, sb = a.shape, b.shape
    if a.ndim == 0 or b.ndim == 0:
        return RuntimeError(f"both arguments to {op} need to be at least 1D, but they are {a.ndim}D and {b.ndim}D")
    ka = sa[-1]
    kb = sb[0] if b.ndim == 1 else sb[-2]
    ra = sa[-2] if a.ndim >= 2 else 1
    cb = sb[-1] if b.ndim >= 2 else 1
    if ka != kb:
        if a.ndim == 1 and b.ndim == 1:
            first = (f"inconsistent tensor size, expected tensor [{ka}] and src [{kb}] to have the same number of "
                     f"elements, but got {ka} and {kb} elements respectively")
        elif a.ndim == 2 and b.ndim == 1:
            first = f"size mismatch, got input ({ra}), mat ({ra}x{ka}), vec ({kb})"
        else:
            first = f"mat1 and mat2 shapes cannot be multiplied ({ra}x{ka} and {kb}x{cb})"
        why = (f"the last dimension of the first operand ({ka}) must equal the "
               f"{'first' if b.ndim == 1 else 'second-to-last'} dimension of the second ({kb})")
    else:
        ba, bb = sa[:-2], sb[:-2]
        n = max(len(ba), len(bb))
        pa, pb = (1,) * (n - len(ba)) + ba, (1,) * (n - len(bb)) + bb
        dim = max(i for i in range(n) if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1)
        first = (f"The size of tensor a ({pa[dim]}) must match the size of tensor b ({pb[dim]}) at non-singleton "
                 f"dimension {dim}")
        why = f"the batch dimensions {list(ba)} and {list(bb)} (all but the last two) must broadcast"
    return RuntimeError(f"{first}\nIn {op}: shapes {list(sa)} and {list(sb)}: {why}. Did you mean to transpose "
                        "one of them (x.T or x.transpose(-2, -1))?")


class MatMul(Function):
    _node_name = "MmBackward0"

    @staticmethod
    def forward(ctx, a, b):
        need = ctx.needs_input_grad
        ga, gb = need[0], need[1]
        ctx.save_for_backward(a if gb else None, b if ga else None)
        ctx.nd = (a._data.ndim, b._data.ndim)
        try:
            out = np.matmul(a._data, b._data)
        except ValueError:
            raise _mm_error("matmul", a._data, b._data) from None
        return _wrap(_asarray(out))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        na, nb = ctx.nd
        if not _GradMode.enabled:
            return _matmul_backward_numpy(g._data, a, b, na, nb)
        if na == 1 and nb == 1:  # dot product: g is 0-d
            return (g * b if b is not None else None), (g * a if a is not None else None)
        # Treat 1-D operands as matrices (a row, b a column), then undo it.
        if na == 1:
            g = g.unsqueeze(-2)
        if nb == 1:
            g = g.unsqueeze(-1)
        ga = gb = None
        if b is not None:
            b2 = b.unsqueeze(-1) if nb == 1 else b
            ga = g @ b2.transpose(-1, -2)
            if na == 1:
                ga = ga.squeeze(-2)
        if a is not None:
            a2 = a.unsqueeze(-2) if na == 1 else a
            gb = a2.transpose(-1, -2) @ g
            if nb == 1:
                gb = gb.squeeze(-1)
        return ga, gb


def _matmul_backward_numpy(gd: np.ndarray, a, b, na: int, nb: int):
    """The backward above on the arrays (used when the backward itself is not recorded)."""
    if na == 1 and nb == 1:  # dot product: g is a scalar
        return (_wrap(gd * b._data) if b is not None else None), (_wrap(gd * a._data) if a is not None else None)
    if na == 1:
        gd = np.expand_dims(gd, -2)
    if nb == 1:
        gd = np.expand_dims(gd, -1)
    ga = gb = None
    if b is not None:
        bd = b._data[:, None] if nb == 1 else b._data
        r = np.matmul(gd, np.swapaxes(bd, -1, -2))
        ga = _wrap(r.squeeze(-2) if na == 1 else r)
    if a is not None:
        ad = a._data[None, :] if na == 1 else a._data
        r = np.matmul(np.swapaxes(ad, -1, -2), gd)
        gb = _wrap(r.squeeze(-1) if nb == 1 else r)
    return ga, gb


def matmul(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002  (PyTorch's parameter names)
    a, b = input, other
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(f"matmul(): argument 'other' must be Tensor, not {type(b).__name__}")
    if a._data.ndim == 0 or b._data.ndim == 0:
        raise _mm_error("matmul", a._data, b._data)
    return MatMul.apply(a, b)


def mm(a: Tensor, mat2: Tensor) -> Tensor:
    if a._data.ndim != 2 or mat2._data.ndim != 2:
        raise RuntimeError(f"{'self' if a._data.ndim != 2 else 'mat2'} must be a matrix\nmm: both arguments must "
                           f"be 2-D matrices, got shapes {list(a.shape)} and {list(mat2.shape)}; use matmul (@) for "
                           "vectors or batches.")
    return matmul(a, mat2)


class Dot(Function):
    """The inner product of two 1-D tensors (``torch.dot``: no broadcasting, same dtype)."""

    _node_name = "DotBackward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y = a._data, b._data
        if x.ndim != 1 or y.ndim != 1:
            raise RuntimeError(
                f"1D tensors expected, but got {x.ndim}D and {y.ndim}D tensors\nIn dot: both operands must be "
                f"vectors, got shapes {list(x.shape)} and {list(y.shape)}; use matmul (@) for matrices."
            )
        if x.shape[0] != y.shape[0]:
            raise _mm_error("dot", x, y)
        if x.dtype != y.dtype:
            names = {"float32": "Float", "float64": "Double", "int64": "Long", "float16": "Half"}
            raise RuntimeError(
                f"dot : expected both vectors to have same dtype, but found {names.get(x.dtype.name, x.dtype.name)} "
                f"and {names.get(y.dtype.name, y.dtype.name)}\nIn dot: convert one of them first, e.g. "
                "b.to(a.dtype)."
            )
        need = ctx.needs_input_grad
        if need[0] or need[1]:  # each gradient needs the other vector
            ctx.save_for_backward(a if need[1] else None, b if need[0] else None)
        return _wrap(_asarray(np.dot(x, y)))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return (g * b if b is not None else None), (g * a if a is not None else None)


def dot(input: Tensor, other: Tensor) -> Tensor:
    return Dot.apply(input, other)
