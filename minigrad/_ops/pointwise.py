"""Elementwise functions. Each backward is written with minigrad operations, so that
``create_graph=True`` can differentiate it again.

The most used ones (exp, log, relu, sigmoid, tanh) also state their formula on the NumPy
arrays, under ``if not _GradMode.enabled``: that is the ordinary backward (the engine turns
grad mode off unless create_graph=True), and it skips a minigrad operation's dispatch, which
costs more than the arithmetic on small tensors. gradcheck exercises that path and
gradgradcheck the other, for every op (tests/test_ops_gradcheck.py).
"""
from __future__ import annotations

import numpy as np

from .._functorch.batched import asarray as _asarray  # np.asarray, batched arrays kept (vmap)

from .. import _dtype
from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import _GradMode
from .arithmetic import _binary, _broadcast_error

_wrap = Tensor._wrap


class _Zeros(dict):
    """A 0-d zero array per dtype. NumPy combines an array with one of these faster than
    with the Python number 0, which it must first convert (measured: ~0.3 us a call)."""

    def __missing__(self, dtype):
        zero = self[dtype] = np.zeros((), dtype)
        return zero


_ZERO = _Zeros()


def _floating(x: np.ndarray) -> np.ndarray:
    """Integer and bool inputs of a floating function give the default float dtype, as in PyTorch
    (NumPy would give float64 for int64, float16 for uint8 and bool)."""
    return x if x.dtype.kind == "f" else x.astype(_dtype._default[0].np_dtype)


class Exp(Function):
    _node_name = "ExpBackward0"

    @staticmethod
    def forward(ctx, a):
        x = a._data
        if x.dtype.kind != "f":  # (checked inline: exp and log are the hot path of benchmark (a))
            x = _floating(x)
        out = _wrap(np.exp(x))
        ctx.save_for_backward(out)  # exp' = exp: saving the output avoids recomputing it
        return out

    @staticmethod
    def backward(ctx, g):
        if not _GradMode.enabled:  # the ordinary backward: the same formula, on the arrays
            (out,) = ctx._saved_arrays()
            return _wrap(g._data * out)
        (out,) = ctx.saved_tensors
        return g * out


class Log(Function):
    _node_name = "LogBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        x = a._data
        if x.dtype.kind != "f":
            x = _floating(x)
        return _wrap(np.log(x))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        if not _GradMode.enabled:
            return _wrap(g._data / a._data)
        return g / a


class Log1p(Function):
    """log(1 + x), accurate for tiny x."""

    _node_name = "Log1PBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _wrap(np.log1p(_floating(a._data)))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g / (a + 1)


class Sqrt(Function):
    _node_name = "SqrtBackward0"

    @staticmethod
    def forward(ctx, a):
        out = _wrap(np.sqrt(_floating(a._data)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g / (out * 2)


class Abs(Function):
    _node_name = "AbsBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _wrap(np.abs(a._data))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * a.sign()  # sign(0) = 0: PyTorch's subgradient at the kink


class Sin(Function):
    _node_name = "SinBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _wrap(np.sin(_floating(a._data)))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * a.cos()


class Cos(Function):
    _node_name = "CosBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _wrap(np.cos(_floating(a._data)))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return -(g * a.sin())


class Tanh(Function):
    _node_name = "TanhBackward0"

    @staticmethod
    def forward(ctx, a):
        x = a._data
        if x.dtype.kind != "f":
            x = _floating(x)
        out = _wrap(np.tanh(x))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        if not _GradMode.enabled:
            (o,) = ctx._saved_arrays()
            return _wrap(g._data * (1 - o * o))
        (out,) = ctx.saved_tensors
        return g * (1 - out * out)


class Sinh(Function):
    _node_name = "SinhBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _wrap(np.sinh(_floating(a._data)))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * a.cosh()


class Cosh(Function):
    _node_name = "CoshBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _wrap(np.cosh(_floating(a._data)))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * a.sinh()


def stable_sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-x) without overflow: only ever exponentiate -|x| (<= 0)."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


class Sigmoid(Function):
    _node_name = "SigmoidBackward0"

    @staticmethod
    def forward(ctx, a):
        x = a._data
        if x.dtype.kind != "f":
            x = _floating(x)
        out = _wrap(stable_sigmoid(x))
        ctx.save_for_backward(out)  # sigma' = sigma (1 - sigma): the output is all backward needs
        return out

    @staticmethod
    def backward(ctx, g):
        if not _GradMode.enabled:
            (o,) = ctx._saved_arrays()
            return _wrap(g._data * o * (1 - o))
        (out,) = ctx.saved_tensors
        return g * out * (1 - out)


class Relu(Function):
    _node_name = "ReluBackward0"

    @staticmethod
    def forward(ctx, a):
        x = a._data
        out = _wrap(np.maximum(x, _ZERO[x.dtype]))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        if not _GradMode.enabled:
            (o,) = ctx._saved_arrays()
            return _wrap(_threshold_backward(g._data, o))  # ThresholdBackward's forward, without its node
        (out,) = ctx.saved_tensors
        return ThresholdBackward.apply(g, out)  # gradient 0 at x == 0, PyTorch's convention


def _threshold_backward(g: np.ndarray, out: np.ndarray) -> np.ndarray:
    """relu's gradient rule on arrays (see ThresholdBackward): ``g`` where ``out != 0``, else 0."""
    return g * (out != _ZERO[out.dtype])


class ThresholdBackward(Function):
    """relu's backward as one operation, as in PyTorch: 0 where ``out <= 0``, else ``g``.

    ``out`` is relu's output, so it is >= 0 or NaN, and ``out <= 0`` fails exactly where
    ``out != 0``: a NaN lets the gradient through, as in PyTorch. Multiplying by that mask
    is several times faster than ``np.where`` (only an infinite ``g`` where ``out == 0``
    would come out as NaN instead of 0).
    """

    _node_name = "ThresholdBackwardBackward0"

    @staticmethod
    def forward(ctx, g, out):
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(out)
        return _wrap(_threshold_backward(g._data, out._data))

    @staticmethod
    def backward(ctx, gg):
        (out,) = ctx.saved_tensors
        # Linear in g (the mask does not depend on it); no gradient flows to the mask.
        return ThresholdBackward.apply(gg, out), None


class Sign(Function):
    _node_name = "SignBackward0"

    @staticmethod
    def forward(ctx, a):
        x = a._data
        return _wrap(x.copy() if x.dtype == np.bool_ else np.sign(x))  # NumPy has no sign for bool

    @staticmethod
    def backward(ctx, g):
        return g * 0


class Clamp(Function):
    _node_name = "ClampBackward1"

    @staticmethod
    def forward(ctx, a, lo, hi):
        if lo is None and hi is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        ctx.save_for_backward(a)
        lo = lo._data if isinstance(lo, Tensor) else lo  # (the arrays: a tensor bound may be batched, vmap)
        hi = hi._data if isinstance(hi, Tensor) else hi
        ctx.lo, ctx.hi = lo, hi
        return _wrap(np.clip(a._data, lo, hi))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        keep = np.ones_like(a._data, dtype=bool)
        if ctx.lo is not None:
            keep &= a._data >= ctx.lo
        if ctx.hi is not None:
            keep &= a._data <= ctx.hi
        return g * Tensor._wrap(keep), None, None


class Maximum(Function):
    _node_name = "MaximumBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _binary("maximum", np.maximum, a, b)  # broadcasting and PyTorch's dtype promotion

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        # Ties share the gradient equally, as in PyTorch.
        wa = Tensor._wrap((a._data > b._data) + 0.5 * (a._data == b._data))
        return g * wa, g * (1 - wa)


class Minimum(Function):
    _node_name = "MinimumBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _binary("minimum", np.minimum, a, b)  # broadcasting and PyTorch's dtype promotion

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        wa = Tensor._wrap((a._data < b._data) + 0.5 * (a._data == b._data))
        return g * wa, g * (1 - wa)


class Where(Function):
    _node_name = "WhereBackward0"

    @staticmethod
    def forward(ctx, cond, a, b):
        ctx.cond = cond
        try:
            return _wrap(np.where(cond._data, a._data, b._data))
        except ValueError:
            raise _broadcast_error("where", a._data, b._data) from None

    @staticmethod
    def backward(ctx, g):
        cond = ctx.cond
        zero = Tensor._wrap(np.zeros_like(g._data, shape=()))
        ga = where(cond, g, zero) if ctx.needs_input_grad[1] else None
        gb = where(cond, zero, g) if ctx.needs_input_grad[2] else None
        return None, ga, gb


def where(condition, input, other) -> Tensor:
    """Elementwise ``a if cond else b`` (a and b may be tensors or numbers), in PyTorch's promoted dtype."""
    from .elementwise import operand
    from .shape import cat_dtype

    if not isinstance(condition, Tensor):
        condition = Tensor._wrap(_asarray(condition))
    if condition._data.dtype != np.bool_:
        condition = Tensor._wrap(condition._data.astype(bool))
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):  # two numbers: float -> the default dtype
        kind = np.result_type(input, other).kind
        input = Tensor._wrap(_asarray(input, dtype=_dtype._default[0].np_dtype if kind == "f" else None))
    input = operand(input, other)  # a number next to a tensor takes the dtype PyTorch gives it (operand: tensors pass through)
    other = operand(other, input)
    if input._data.dtype != other._data.dtype:
        dt = cat_dtype([input._data.dtype, other._data.dtype])
        input = input if input._data.dtype == dt else input.to(_dtype.from_numpy_dtype(dt))
        other = other if other._data.dtype == dt else other.to(_dtype.from_numpy_dtype(dt))
    return Where.apply(condition, input, other)
