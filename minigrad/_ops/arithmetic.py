"""Arithmetic: + - * / ** and negation, with tensors or Python numbers.

Broadcasting: each backward returns output-shaped gradients; the engine sums them back
to each input's shape (PyTorch's sum_to), so no formula here needs to know about it.

As in pointwise.py, the most used backwards (mul, div, sub, neg, multiplying by a number)
also state their formula on the NumPy arrays for the ordinary backward (grad mode off).
"""
from __future__ import annotations

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import _GradMode

_wrap = Tensor._wrap


def _broadcast_error(op: str, a: np.ndarray, b: np.ndarray) -> RuntimeError:
    sa, sb = a.shape, b.shape
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    dim = max(i for i in range(n) if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1)  # right-most, as PyTorch
    return RuntimeError(
        f"The size of tensor a ({pa[dim]}) must match the size of tensor b ({pb[dim]}) at non-singleton "
        f"dimension {dim}\nIn {op}: shapes {list(sa)} and {list(sb)} cannot be broadcast together (aligned "
        "from the right, each pair of sizes must be equal or one of them 1). Check the shapes, or use "
        "reshape/unsqueeze to add the missing dimension."
    )


_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)


def _binary(op: str, ufunc, a: Tensor, b: Tensor) -> Tensor:
    x, y = a._data, b._data
    try:
        out = ufunc(x, y)
    except ValueError as e:
        try:
            np.broadcast_shapes(x.shape, y.shape)
        except ValueError:
            raise _broadcast_error(op, x, y) from None
        raise RuntimeError(f"{op}(): {e}") from None  # e.g. NumPy's "Integers to negative integer powers..."
    if out.dtype is not x.dtype and out.dtype == _F64 and x.dtype != _F64 and y.dtype != _F64:
        # int with float32 stays float32, and int / int is the default float, as in PyTorch
        out = out.astype(_F32 if x.dtype == _F32 or y.dtype == _F32 else _dtype._default[0].np_dtype)
    return _wrap(out)


def _scalar_result(out: np.ndarray, x: np.ndarray) -> np.ndarray:
    """An integer tensor combined with a Python float gives the default float dtype (PyTorch), not float64."""
    if out.dtype is not x.dtype and out.dtype.kind == "f" and x.dtype.kind != "f":
        return out.astype(_dtype._default[0].np_dtype)
    return out


class Add(Function):
    _node_name = "AddBackward0"

    @staticmethod
    def forward(ctx, a, b):
        return _binary("add", np.add, a, b)

    @staticmethod
    def backward(ctx, g):
        return g, g


class AddScalar(Function):
    _node_name = "AddBackward0"
    _scalar_operands = True

    @staticmethod
    def forward(ctx, a, c):
        return _wrap(_scalar_result(a._data + c, a._data))

    @staticmethod
    def backward(ctx, g):
        return g, None


class Sub(Function):
    _node_name = "SubBackward0"

    @staticmethod
    def forward(ctx, a, b):
        return _binary("sub", np.subtract, a, b)

    @staticmethod
    def backward(ctx, g):
        if not ctx.needs_input_grad[1]:
            return g, None
        return g, (_wrap(np.negative(g._data)) if not _GradMode.enabled else -g)


class SubScalar(Function):
    _node_name = "SubBackward0"
    _scalar_operands = True

    @staticmethod
    def forward(ctx, a, c):
        return _wrap(_scalar_result(a._data - c, a._data))

    @staticmethod
    def backward(ctx, g):
        return g, None


class RSubScalar(Function):
    """c - a"""

    _node_name = "RsubBackward1"

    @staticmethod
    def forward(ctx, a, c):
        return _wrap(_scalar_result(c - a._data, a._data))

    @staticmethod
    def backward(ctx, g):
        return -g, None


class Mul(Function):
    _node_name = "MulBackward0"

    @staticmethod
    def forward(ctx, a, b):
        need = ctx.needs_input_grad
        if need[0] or need[1]:  # each gradient needs the other operand
            ctx.save_for_backward(a if need[1] else None, b if need[0] else None)
        return _binary("mul", np.multiply, a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        if not _GradMode.enabled:  # the ordinary backward: on the NumPy arrays
            ga = _wrap(g._data * b._data) if b is not None else None
            gb = _wrap(g._data * a._data) if a is not None else None
            return ga, gb
        return (g * b if b is not None else None), (g * a if a is not None else None)


class MulScalar(Function):
    _node_name = "MulBackward0"
    _scalar_operands = True

    @staticmethod
    def forward(ctx, a, c):
        ctx.c = c
        # PyTorch saves the number (as the tensor `other`): freed by backward, so a second backward
        # raises; an empty save_for_backward gives this node the same life cycle.
        ctx.save_for_backward()
        return _wrap(_scalar_result(a._data * c, a._data))

    @staticmethod
    def backward(ctx, g):
        ctx._tensors_saved_for_backward  # raises if the first backward freed this node's saved state
        if not _GradMode.enabled:
            return _wrap(_scalar_result(g._data * ctx.c, g._data)), None
        return g * ctx.c, None


class Div(Function):
    _node_name = "DivBackward0"

    @staticmethod
    def forward(ctx, a, b):
        need = ctx.needs_input_grad
        if need[0] or need[1]:  # both gradients need b; the one for b also needs a
            ctx.save_for_backward(a if need[1] else None, b)
        return _binary("div", np.true_divide, a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        need_a = ctx.needs_input_grad[0]
        if not _GradMode.enabled:
            gd, bd = g._data, b._data
            ga = _wrap(gd / bd) if need_a else None
            gb = _wrap(-(gd * a._data) / (bd * bd)) if a is not None else None
            return ga, gb
        ga = g / b if need_a else None
        gb = -(g * a) / (b * b) if a is not None else None
        return ga, gb


class DivScalar(Function):
    _node_name = "DivBackward0"
    _scalar_operands = True

    @staticmethod
    def forward(ctx, a, c):
        ctx.c = c
        ctx.save_for_backward()  # as MulScalar: a second backward raises, as in PyTorch
        return _wrap(_scalar_result(a._data / c, a._data))

    @staticmethod
    def backward(ctx, g):
        ctx._tensors_saved_for_backward  # raises if the first backward freed this node's saved state
        return g / ctx.c, None


class RDivScalar(Function):
    """c / a"""

    _node_name = "MulBackward0"  # PyTorch computes c / x as reciprocal(x) * c

    @staticmethod
    def forward(ctx, a, c):
        ctx.c = c
        ctx.save_for_backward(a)
        return _wrap(_scalar_result(c / a._data, a._data))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return -(g * ctx.c) / (a * a), None


class Neg(Function):
    _node_name = "NegBackward0"

    @staticmethod
    def forward(ctx, a):
        return _wrap(np.negative(a._data))

    @staticmethod
    def backward(ctx, g):
        return _wrap(np.negative(g._data)) if not _GradMode.enabled else -g


class Pow(Function):
    """a ** b, both tensors."""

    _node_name = "PowBackward1"

    @staticmethod
    def forward(ctx, a, b):
        out = _binary("pow", np.power, a, b)
        ctx.save_for_backward(a, b, out if ctx.needs_input_grad[1] else None)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b, out = ctx.saved_tensors
        ga = None
        if ctx.needs_input_grad[0]:
            from .pointwise import where

            # b a^(b-1), but 0 where b == 0 (PyTorch's convention: 0 * 0^-1 would be nan)
            ga = g * where(b == 0, 0.0, b * a ** (b - 1))
        gb = None
        if ctx.needs_input_grad[1]:
            # d(a^b)/db = a^b log a; where a == 0 PyTorch uses 0 (b > 0) rather than nan.
            log_a = (a + (a == 0)).log()
            gb = g * out * log_a
        return ga, gb


class PowScalar(Function):
    """a ** c with a Python number c."""

    _node_name = "PowBackward0"

    @staticmethod
    def forward(ctx, a, c):
        ctx.c = c
        ctx.save_for_backward(a)
        return _wrap(_scalar_result(a._data ** c, a._data))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        c = ctx.c
        if c == 0:
            return g * 0, None
        if c == 2:
            return g * 2 * a, None
        return g * c * a ** (c - 1), None


class RPowScalar(Function):
    """c ** a with a Python number c."""

    _node_name = "PowBackward2"

    @staticmethod
    def forward(ctx, a, c):
        # d(c^a)/da = c^a log c; for c == 0 PyTorch uses 0 rather than 0 * -inf = nan
        ctx.logc = float(np.log(c)) if c > 0 else 0.0 if c == 0 else float("nan")
        out = _wrap(_scalar_result(np.power(c, a._data), a._data))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * out * ctx.logc, None


class ToDtype(Function):
    _node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, a, dtype):
        ctx.src = a.dtype
        return _wrap(a._data.astype(dtype.np_dtype))

    @staticmethod
    def backward(ctx, g):
        return g.to(ctx.src), None


class Clone(Function):
    _node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, a):
        return _wrap(a._data.copy())

    @staticmethod
    def backward(ctx, g):
        return g
