"""More elementwise functions: inverse trigonometry, rounding, exp/log variants, and binary ones
(atan2, remainder, fmod, lerp, logaddexp, heaviside...), with PyTorch's dtypes and node names.

A unary op is a row: the NumPy function and its derivative written with minigrad operations
(so that ``create_graph=True`` can differentiate it again), in terms of the input ``x`` or of
the output ``y`` when that is simpler (``exp2' = y log 2``). Integer and bool inputs give the
default float dtype, except for the rounding functions, which leave integers as they are.
"""
from __future__ import annotations

import math

import numpy as np

from .._functorch.batched import asarray as _asarray
from .._functorch.batched import values_of as _values_of  # np.asarray, batched arrays kept (vmap)

from .. import _dtype
from .._tensor import Tensor
from ..autograd.function import Function
from .arithmetic import _binary, _broadcast_error
from .reduction import _TORCH_TYPE

_wrap = Tensor._wrap
_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int", "bool": "bool"}
_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


def _as_float(x: np.ndarray) -> np.ndarray:
    return x if x.dtype.kind == "f" else x.astype(_dtype._default[0].np_dtype)


class _Unary(Function):
    """y = f(x) elementwise; subclasses set ``f`` (NumPy) and ``grad`` (minigrad ops, of x and y)."""

    keeps_integers = False  # rounding: an integer tensor is returned unchanged (as a copy)
    uses_output = False     # grad needs y (the output) rather than x

    @classmethod
    def forward(cls, ctx, a):
        x = a._data
        if x.dtype.kind != "f":
            if cls.keeps_integers:
                if x.dtype == np.bool_:
                    raise NotImplementedError(f'"{cls.__name__.lower()}_vml_cpu" not implemented for \'Bool\'')
                return _wrap(x.copy())
            x = _as_float(x)
        with np.errstate(all="ignore"):  # nan / inf outside the domain, as PyTorch (no warning)
            out = _wrap(_asarray(cls.f(x), dtype=x.dtype))
        ctx.save_for_backward(out if cls.uses_output else a)
        return out

    @classmethod
    def backward(cls, ctx, g):
        (saved,) = ctx.saved_tensors
        return g * cls.grad(saved)


def _unary(name: str, node: str, f, grad, uses_output=False, keeps_integers=False) -> type:
    return type(name, (_Unary,), {"_node_name": node, "f": staticmethod(f), "grad": staticmethod(grad),
                                  "uses_output": uses_output, "keeps_integers": keeps_integers,
                                  "__module__": __name__, "__doc__": f"Elementwise {name.lower()}."})


def _zero(x: Tensor) -> Tensor:
    return x * 0.0


Acos = _unary("Acos", "AcosBackward0", np.arccos, lambda x: -(1 - x * x).rsqrt())
Asin = _unary("Asin", "AsinBackward0", np.arcsin, lambda x: (1 - x * x).rsqrt())
Atan = _unary("Atan", "AtanBackward0", np.arctan, lambda x: (1 + x * x).reciprocal())
Tan = _unary("Tan", "TanBackward0", np.tan, lambda y: 1 + y * y, uses_output=True)
Asinh = _unary("Asinh", "AsinhBackward0", np.arcsinh, lambda x: (x * x + 1).rsqrt())
Acosh = _unary("Acosh", "AcoshBackward0", np.arccosh, lambda x: (x * x - 1).rsqrt())
Atanh = _unary("Atanh", "AtanhBackward0", np.arctanh, lambda x: (1 - x * x).reciprocal())
Expm1 = _unary("Expm1", "Expm1Backward0", np.expm1, lambda y: y + 1, uses_output=True)
Exp2 = _unary("Exp2", "Exp2Backward0", np.exp2, lambda y: y * _LN2, uses_output=True)
Log10 = _unary("Log10", "Log10Backward0", np.log10, lambda x: (x * _LN10).reciprocal())
Log2 = _unary("Log2", "Log2Backward0", np.log2, lambda x: (x * _LN2).reciprocal())
Reciprocal = _unary("Reciprocal", "ReciprocalBackward0", np.reciprocal, lambda y: -(y * y), uses_output=True)
Rsqrt = _unary("Rsqrt", "RsqrtBackward0", lambda x: 1 / np.sqrt(x), lambda y: y * y * y * -0.5, uses_output=True)
Deg2rad = _unary("Deg2rad", "Deg2RadBackward0", np.deg2rad, lambda x: _zero(x) + math.pi / 180)
Rad2deg = _unary("Rad2deg", "Rad2DegBackward0", np.rad2deg, lambda x: _zero(x) + 180 / math.pi)
# rounding: piecewise constant, so the gradient is 0 (PyTorch's convention, also at the jumps)
Ceil = _unary("Ceil", "CeilBackward0", np.ceil, _zero, keeps_integers=True)
Floor = _unary("Floor", "FloorBackward0", np.floor, _zero, keeps_integers=True)
Trunc = _unary("Trunc", "TruncBackward0", np.trunc, _zero, keeps_integers=True)
Round = _unary("Round", "RoundBackward0", np.round, _zero, keeps_integers=True)  # halves to even, as PyTorch


class Frac(Function):
    """x - trunc(x) (keeps the sign of x); its gradient is 1."""

    _node_name = "FracBackward0"

    @staticmethod
    def forward(ctx, a):
        x = a._data
        if x.dtype.kind != "f":
            raise NotImplementedError(f'"frac_cpu" not implemented for \'{_TORCH_TYPE.get(a.dtype.name)}\'\n'
                                      "frac is the fractional part of a floating tensor.")
        return _wrap(x - np.trunc(x))

    @staticmethod
    def backward(ctx, g):
        return g


class RoundDecimals(Function):
    """round(x, decimals=n): round(x * 10^n) / 10^n, halves to even."""

    _node_name = "RoundBackward1"

    @staticmethod
    def forward(ctx, a, decimals):
        x = a._data
        if x.dtype.kind != "f":
            if decimals:
                raise NotImplementedError(f'"round_cpu" not implemented for \'{_TORCH_TYPE.get(a.dtype.name)}\'\n'
                                      "round(decimals=...) needs a floating tensor.")
            return _wrap(x.copy())
        return _wrap(np.round(x, decimals))

    @staticmethod
    def backward(ctx, g):
        return g * 0.0, None


class NanToNum(Function):
    """nan -> ``nan`` (0), +inf -> ``posinf`` (largest finite), -inf -> ``neginf``; the gradient passes where x is finite."""

    _node_name = "NanToNumBackward0"

    @staticmethod
    def forward(ctx, a, nan, posinf, neginf):
        x = a._data
        ctx.save_for_backward(a)
        if x.dtype.kind != "f":
            return _wrap(x.copy())
        return _wrap(np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * _wrap(np.isfinite(a._data).astype(g._data.dtype)), None, None, None


# --- binary --------------------------------------------------------------------------------------------------------
def operand(value, like: Tensor) -> Tensor:
    """A Python number as a 0-d tensor of the dtype PyTorch's promotion gives it next to ``like``:
    an int takes the tensor's dtype, a float a floating tensor's dtype (else the default float)."""
    if isinstance(value, Tensor):
        return value
    dt = like._data.dtype
    if isinstance(value, bool):
        np_dtype = dt if dt.kind in "biuf" else np.bool_
    elif isinstance(value, (int, np.integer)):
        np_dtype = dt if dt.kind in "iuf" else np.int64
    elif isinstance(value, (float, np.floating)):
        np_dtype = dt if dt.kind == "f" else _dtype._default[0].np_dtype
    else:
        raise TypeError(f"expected a Tensor or a Python number, got {type(value).__name__}")
    return _wrap(_asarray(value, dtype=np_dtype))


def _pair(op: str, ufunc, a: Tensor, b: Tensor, floating: bool = False) -> np.ndarray:
    out = _binary(op, ufunc, a, b)._data if not floating else None
    if floating:
        x, y = _as_float(a._data), _as_float(b._data)
        if x.dtype != y.dtype:
            common = np.promote_types(x.dtype, y.dtype)
            x, y = x.astype(common), y.astype(common)
        try:
            with np.errstate(all="ignore"):
                out = ufunc(x, y)
        except ValueError:
            raise _broadcast_error(op, a._data, b._data) from None
    return out


class Atan2(Function):
    """atan2(a, b): the angle of the point (b, a); d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2)."""

    _node_name = "Atan2Backward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _wrap(_pair("atan2", np.arctan2, a, b, floating=True))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        inv = g / (a * a + b * b)
        return inv * b, -(inv * a)


def _remainder(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Python's %, computed as PyTorch does (fmod, then + b where the signs differ), so -5 % 2.5 is -0.0."""
    r = np.fmod(x, y)
    if r.dtype.kind != "f":
        return np.remainder(x, y)
    return np.where((r != 0) & ((r < 0) != (y < 0)), r + y, r)


class Remainder(Function):
    """a - floor(a / b) * b (the sign of b, Python's %); d/db = -floor(a / b)."""

    _node_name = "RemainderBackward1"
    ufunc = staticmethod(_remainder)
    quotient = staticmethod(np.floor_divide)

    @classmethod
    def forward(cls, ctx, a, b):
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b if ctx.needs_input_grad[1] else None)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = _pair(cls.__name__.lower(), cls.ufunc, a, b)
        if out.dtype.kind in "iu" and np.any(_values_of(b._data) == 0):
            raise RuntimeError("ZeroDivisionError\n" f"{cls.__name__.lower()}: integer division by zero.")
        return _wrap(out)

    @classmethod
    def backward(cls, ctx, g):
        a, b = ctx.saved_tensors
        gb = None
        if b is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                q = cls.quotient(a._data, b._data)
            gb = -(g * _wrap(q.astype(g._data.dtype)))
        return g, gb


class Fmod(Remainder):
    """a - trunc(a / b) * b (the sign of a, C's fmod); d/db = -trunc(a / b)."""

    _node_name = "FmodBackward1"
    ufunc = staticmethod(np.fmod)
    quotient = staticmethod(lambda x, y: np.trunc(x / y))


class RemainderScalar(Remainder):
    _node_name = "RemainderBackward0"


class RemainderOfNumber(Remainder):
    """``remainder(number, tensor)``: PyTorch has no derivative for it (and says so when backward reaches it)."""

    _node_name = "torch::autograd::NotImplemented"

    @classmethod
    def backward(cls, ctx, g):
        raise RuntimeError("derivative for aten::remainder is not implemented\nremainder(number, tensor) is not "
                           "differentiable in PyTorch either; write it as number - floor(number / x) * x.")


class FmodScalar(Fmod):
    _node_name = "FmodBackward0"


class Lerp(Function):
    """start + weight (end - start)."""

    _node_name = "LerpBackward1"

    @staticmethod
    def forward(ctx, start, end, weight):
        ctx.save_for_backward(start, end, weight)
        s, e, w = start._data, end._data, weight._data
        if s.dtype.kind != "f":
            raise NotImplementedError(f'"lerp_kernel_scalar" not implemented for \'{_TORCH_TYPE.get(start.dtype.name)}'
                                      "'\nlerp interpolates between floating tensors.")
        if e.dtype != s.dtype:
            raise RuntimeError(f"expected dtype {_C_NAMES.get(start.dtype.name)} for `end` but got dtype "
                               f"{_C_NAMES.get(end.dtype.name)}\nlerp: start and end must have the same dtype.")
        try:
            return _wrap((s + w * (e - s)).astype(s.dtype, copy=False))
        except ValueError:
            raise _broadcast_error("lerp", s, e) from None

    @staticmethod
    def backward(ctx, g):
        start, end, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (g * (1 - w) if need[0] else None, g * w if need[1] else None,
                g * (end - start) if need[2] else None)


class LerpScalar(Lerp):
    _node_name = "LerpBackward0"


def _floating_only(op: str, *ts: Tensor) -> None:
    """PyTorch computes ``op`` in the promoted dtype of its inputs, and has no integer kernel for it."""
    if all(t._data.dtype.kind != "f" for t in ts):
        common = np.result_type(*(t._data.dtype for t in ts))
        raise NotImplementedError(f'"{op}_cpu" not implemented for \'{_TORCH_TYPE.get(common.name)}\'\n'
                                  f"{op} is defined for floating tensors.")


class Logaddexp(Function):
    """log(e^a + e^b) without overflow; d/da = e^(a - out)."""

    _node_name = "LogaddexpBackward0"

    @staticmethod
    def forward(ctx, a, b):
        _floating_only("logaddexp", a, b)
        out = _wrap(_pair("logaddexp", np.logaddexp, a, b, floating=True))
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b, out = ctx.saved_tensors
        return g * (a - out).exp(), g * (b - out).exp()


class Logaddexp2(Function):
    """log2(2^a + 2^b); d/da = 2^(a - out)."""

    _node_name = "Logaddexp2Backward0"

    @staticmethod
    def forward(ctx, a, b):
        _floating_only("logaddexp2", a, b)
        out = _wrap(_pair("logaddexp2", np.logaddexp2, a, b, floating=True))
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b, out = ctx.saved_tensors
        return g * ((a - out) * _LN2).exp(), g * ((b - out) * _LN2).exp()


class Hypot(Function):
    """sqrt(a^2 + b^2); d/da = a / out."""

    _node_name = "HypotBackward0"

    @staticmethod
    def forward(ctx, a, b):
        _floating_only("hypot", a, b)
        out = _wrap(_pair("hypot", np.hypot, a, b, floating=True))
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b, out = ctx.saved_tensors
        return g * a / out, g * b / out


class Heaviside(Function):
    """0 where x < 0, ``values`` where x == 0, 1 where x > 0. Not differentiable (PyTorch's error when reached)."""

    _node_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, a, values):
        if a._data.dtype != values._data.dtype:
            raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.\nheaviside: "
                               f"input has dtype {a.dtype} and values {values.dtype}; convert one of them.")
        try:
            return _wrap(np.heaviside(a._data, values._data).astype(a._data.dtype, copy=False))
        except ValueError:
            raise _broadcast_error("heaviside", a._data, values._data) from None

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("derivative for aten::heaviside is not implemented\nheaviside is a step function: its "
                           "derivative is 0 almost everywhere, so it cannot pass a useful gradient. Use a smooth "
                           "surrogate such as sigmoid(k * x) if you need one.")


# --- the plain functions -----------------------------------------------------------------------------------------------
def _tensor_arg(x, op: str, what: str = "input") -> Tensor:
    if not isinstance(x, Tensor):
        pos = 1 if what == "input" else 2
        raise TypeError(f"{op}(): argument '{what}' (position {pos}) must be Tensor, not {type(x).__name__}")
    return x


def atan2(input, other):
    return Atan2.apply(_tensor_arg(input, "atan2"), _tensor_arg(other, "atan2", "other"))


def remainder(input, other):
    if not isinstance(input, Tensor):  # remainder(number, tensor)
        return RemainderOfNumber.apply(operand(input, other), other)
    return (Remainder if isinstance(other, Tensor) else RemainderScalar).apply(input, operand(other, input))


def fmod(input, other):
    return (Fmod if isinstance(other, Tensor) else FmodScalar).apply(_tensor_arg(input, "fmod"), operand(other, input))


def lerp(input, end, weight):
    if isinstance(weight, Tensor):
        return Lerp.apply(input, end, weight)
    return LerpScalar.apply(input, end, _wrap(_asarray(weight, dtype=input._data.dtype)))


def logaddexp(input, other):
    return Logaddexp.apply(input, other)


def logaddexp2(input, other):
    return Logaddexp2.apply(input, other)


def hypot(input, other):
    return Hypot.apply(input, other)


def heaviside(input, values):
    return Heaviside.apply(_tensor_arg(input, "heaviside"), _tensor_arg(values, "heaviside", "values"))


def round(input, decimals: int = 0):  # noqa: A001
    return Round.apply(input) if decimals == 0 else RoundDecimals.apply(input, decimals)


def nan_to_num(input, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None):
    return NanToNum.apply(input, nan, posinf, neginf)


def frac(input):
    return Frac.apply(input)
