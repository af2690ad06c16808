"""The op catalogue: every built-in operation is a ``Function`` subclass defined here.

This module also provides the plain-function API (``minigrad.exp(x)``), the tensor
methods that call it (``x.exp()``), and the in-place machinery.
"""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _wrap_dim
from ..autograd._builtin import _apply_first
from ..autograd.grad_mode import _GradMode
from .arithmetic import (Add, AddScalar, Clone, Div, DivScalar, Mul, MulScalar, Neg, Pow, PowScalar, RDivScalar,
                         RPowScalar, RSubScalar, Sub, SubScalar, ToDtype)
from .linalg import Dot, MatMul, dot, matmul, mm
from .nn_ops import BCELoss, Linear, LogSoftmax, MSELoss, NLLLoss, Softmax
from .pointwise import (Abs, Clamp, Cos, Cosh, Exp, Log, Log1p, Maximum, Minimum, Relu, Sigmoid, Sign, Sin, Sinh, Sqrt,
                        Tanh, Where, where)
from .reduction import Amax, Amin, CumSum, Mean, MeanDim, Norm2, Sum, SumDim, argmax, argmin, max, min  # noqa: A004
from .special import Erf, Erfc
from .shape import (Cat, Copy, Expand, Fill, Index, IndexPut, Permute, Squeeze, SqueezeDim, Stack, Transpose,
                    Unsqueeze, View, _basic_index_cls, _convert_index, _size_args)
from .shape import CopySlices, Select, Slice, ViewCopySlices, _is_basic, fit_value, replay_view

_wrap = Tensor._wrap


def _t(x) -> Tensor:
    return x if isinstance(x, Tensor) else _wrap(np.asarray(x))


def _binary_op(tensor_cls, scalar_cls):
    def op(a, b):
        if not isinstance(a, Tensor):
            a = _t(a)
        if isinstance(b, Tensor):
            return tensor_cls.apply(a, b)
        return scalar_cls.apply(a, b)

    return op


add = _binary_op(Add, AddScalar)
sub = _binary_op(Sub, SubScalar)
mul = _binary_op(Mul, MulScalar)
div = _binary_op(Div, DivScalar)
pow = _binary_op(Pow, PowScalar)  # noqa: A001
subtract, multiply, divide, true_divide = sub, mul, div, div


def neg(a):
    return Neg.apply(a)


def _unary(cls):
    def op(a):
        if not isinstance(a, Tensor):
            raise TypeError(f"{op.__name__}(): argument 'input' (position 1) must be Tensor, not {type(a).__name__}"
                            f"\nminigrad.{op.__name__} takes a tensor; wrap numbers with minigrad.tensor(...).")
        return _apply_first(cls, a)

    op.__name__ = cls.__name__.lower()
    op.__doc__ = f"Elementwise {cls.__name__.lower()} (differentiable)."
    return op


exp, log, log1p, sqrt, abs, sin, cos, tanh, sinh, cosh, sigmoid, relu, sign = (  # noqa: A001
    _unary(c) for c in (Exp, Log, Log1p, Sqrt, Abs, Sin, Cos, Tanh, Sinh, Cosh, Sigmoid, Relu, Sign))
erf, erfc = _unary(Erf), _unary(Erfc)


def clamp(a, min=None, max=None):  # noqa: A002
    return Clamp.apply(a, min, max)


clip = clamp


def maximum(a, b):
    return Maximum.apply(_t(a), _t(b))


def minimum(a, b):
    return Minimum.apply(_t(a), _t(b))


def sum(a, dim=None, keepdim=False, dtype=None):  # noqa: A001
    if dtype is not None:
        a = a.to(dtype)
    return (Sum if dim is None else SumDim).apply(a, dim, keepdim)


def cumsum(a, dim, dtype=None):
    if dtype is not None:
        a = a.to(dtype)
    return CumSum.apply(a, dim)


def mean(a, dim=None, keepdim=False, dtype=None):
    if dtype is not None:
        a = a.to(dtype)
    return (Mean if dim is None else MeanDim).apply(a, dim, keepdim)


def amax(a, dim=None, keepdim=False):
    return Amax.apply(a, dim, keepdim)


def amin(a, dim=None, keepdim=False):
    return Amin.apply(a, dim, keepdim)


def softmax(a, dim):
    return Softmax.apply(a, dim)


def log_softmax(a, dim):
    return LogSoftmax.apply(a, dim)


def reshape(a, *shape):
    return View.apply(a, _size_args(shape))


def view(a, *shape):
    return View.apply(a, _size_args(shape))


def flatten(a, start_dim=0, end_dim=-1):
    shape = a._data.shape
    if not shape:
        return View.apply(a, (1,))
    s, e = _wrap_dim(start_dim, len(shape), "flatten"), _wrap_dim(end_dim, len(shape), "flatten")
    if s >= e:
        return a if s == e else View.apply(a, shape)
    new = shape[:s] + (int(np.prod(shape[s:e + 1])),) + shape[e + 1:]
    return View.apply(a, new)


def transpose(a, dim0, dim1):
    return Transpose.apply(a, dim0, dim1)


def t(a):
    if a._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a._data.ndim}D")
    return Transpose.apply(a, 0, -1) if a._data.ndim == 2 else a


def permute(a, *dims):
    return Permute.apply(a, _size_args(dims))


def squeeze(a, dim=None):
    return (Squeeze if dim is None else SqueezeDim).apply(a, dim)


def unsqueeze(a, dim):
    return Unsqueeze.apply(a, dim)


def expand(a, *sizes):
    return Expand.apply(a, _size_args(sizes))


def expand_as(a, other):
    return Expand.apply(a, other._data.shape)


def broadcast_to(a, shape):
    return Expand.apply(a, tuple(shape))


def cat(tensors, dim=0):
    return Cat.apply(dim, *tensors)


concat = concatenate = cat


def stack(tensors, dim=0):
    return Stack.apply(dim, *tensors)


def narrow(a, dim, start, length):
    d = _wrap_dim(dim, a._data.ndim, "narrow")
    return Slice.apply(a, (slice(None),) * d + (slice(start, start + length),))


def select(a, dim, index):
    d = _wrap_dim(dim, a._data.ndim, "select")
    return Select.apply(a, (slice(None),) * d + (index,))


def index(a, idx):
    idx = _convert_index(idx)
    return _basic_index_cls(idx).apply(a, idx)


def clone(a):
    return Clone.apply(a)


def detach(a):
    return a.detach()


def linear(x, weight, bias=None):
    return Linear.apply(x, weight, bias)


def square(a):
    return PowScalar.apply(a, 2)


def rsqrt(a):
    return RDivScalar.apply(Sqrt.apply(a), 1.0)


def reciprocal(a):
    return RDivScalar.apply(a, 1.0)


def norm(a, p=2, dim=None, keepdim=False):
    if p != 2:
        return (a.abs() ** p).sum(dim, keepdim) ** (1.0 / p)
    return Norm2.apply(a, dim, keepdim)


def var(a, dim=None, unbiased=True, keepdim=False, correction=None):
    n = a._data.size if dim is None else int(np.prod([a._data.shape[d] for d in ((dim,) if isinstance(dim, int) else dim)]))
    ddof = (1 if unbiased else 0) if correction is None else correction
    d = a - a.mean(dim, keepdim=True)
    return (d * d).sum(dim, keepdim) / (n - ddof)


def std(a, dim=None, unbiased=True, keepdim=False, correction=None):
    return var(a, dim, unbiased, keepdim, correction).sqrt()


def logsumexp(a, dim, keepdim=False):
    m = Tensor._wrap(a._data.max(axis=dim, keepdims=True))
    out = (a - m).exp().sum(dim, keepdim=True).log() + m
    return out if keepdim else out.squeeze(dim)


# --- in-place operations --------------------------------------------------------------
_INPLACE = {
    "add": (Add, AddScalar), "sub": (Sub, SubScalar), "mul": (Mul, MulScalar), "div": (Div, DivScalar),
}


def _check_inplace(a: Tensor, what: str) -> None:
    if a.grad_fn is None and a._rg:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation.\n"
            f"{what} would change a leaf tensor that autograd is tracking. Update parameters inside "
            "`with minigrad.no_grad():`, or use the out-of-place form (e.g. x = x + 1)."
        )
    base = a._base
    if base is not None and base.grad_fn is None and base._rg:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation.\n"
            f"{what} would change (through a view) a leaf tensor that autograd is tracking. Do it inside "
            "`with minigrad.no_grad():` or on a clone()."
        )


def _run_inplace(a: Tensor, fn_cls, args: tuple, what: str) -> Tensor:
    """Run ``fn_cls`` out of place, then write the result into ``a`` and move ``a`` onto the new node."""
    if not a._data.flags.writeable:
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a single memory "
            f"location. Please clone() the tensor before performing the operation.\n{what}: this tensor is an "
            "expand()ed view, whose entries share memory; clone() it first."
        )
    recording = _GradMode.enabled and (a._rg or any(isinstance(x, Tensor) and x._rg for x in args))
    if recording:
        _check_inplace(a, what)
        if a._base is not None:
            steps = a._get_extra("view_steps")
            if steps is not None:
                return _run_inplace_on_view(a, fn_cls, args, what, steps)
            if a._base._rg:  # an alias made by detach(): it is not part of the graph
                raise RuntimeError(
                    f"{what}: this tensor was made by detach() from a tensor that requires grad, and the "
                    "operation needs grad; minigrad cannot record it. Use clone() instead of detach()."
                )
        # The node may save its input: give it a snapshot that the write below cannot change.
        snapshot = _wrap(a._data.copy())
        snapshot.grad_fn, snapshot._output_nr, snapshot._rg = a.grad_fn, a._output_nr, a._rg
        out = fn_cls.apply(snapshot, *args)
    else:
        out = fn_cls.apply(_wrap(a._data), *args)
    try:
        np.copyto(a._data, out._data, casting="same_kind")
    except TypeError:
        raise RuntimeError(
            f"result type {out.dtype.name.capitalize()} can't be cast to the desired output type "
            f"{a.dtype.name.capitalize()}\n{what}: an in-place result must keep the tensor's dtype ({a.dtype})."
        ) from None
    except ValueError:
        raise RuntimeError(
            f"output with shape {list(a._data.shape)} doesn't match the broadcast shape {list(out._data.shape)}\n"
            f"{what}: an in-place operation cannot change the tensor's shape."
        ) from None
    if recording and out.grad_fn is not None:
        a.grad_fn, a._output_nr, a._rg = out.grad_fn, out._output_nr, True
    a._bump_version()
    return a


def _run_inplace_on_view(v: Tensor, fn_cls, args: tuple, what: str, steps: tuple) -> Tensor:
    """In-place op on a view of a tensor in the graph (PyTorch's CopySlices): compute the op on the view's
    values, record on the base "base with the view's region replaced by the result", then make the view a
    fresh view (same steps) of the new base."""
    base = v._base
    snapshot = _wrap(v._data.copy())
    snapshot.grad_fn, snapshot._output_nr, snapshot._rg = v.grad_fn, v._output_nr, v._rg
    out = fn_cls.apply(snapshot, *args)
    if out._data.shape != v._data.shape:
        raise RuntimeError(
            f"output with shape {list(v._data.shape)} doesn't match the broadcast shape {list(out._data.shape)}\n"
            f"{what}: an in-place operation cannot change the tensor's shape."
        )
    if out._data.dtype != v._data.dtype:
        out = out.to(v.dtype)
    new_base = ViewCopySlices.apply(base, out, steps)
    np.copyto(base._data, new_base._data)  # writes the view's memory too
    base.grad_fn, base._output_nr, base._rg = new_base.grad_fn, new_base._output_nr, new_base._rg
    fresh = replay_view(base, steps, tensor=True)
    v.grad_fn, v._output_nr, v._rg = fresh.grad_fn, fresh._output_nr, fresh._rg
    v._bump_version()  # shared with the base
    return v


def inplace(a: Tensor, kind: str, *args) -> Tensor:
    what = f"{kind}_()"
    if kind in _INPLACE:
        tensor_cls, scalar_cls = _INPLACE[kind]
        (other,) = args
        if isinstance(other, Tensor):
            return _run_inplace(a, tensor_cls, (other,), what)
        return _run_inplace(a, scalar_cls, (other,), what)
    if kind == "clamp":
        return _run_inplace(a, Clamp, args, what)
    if kind == "fill":
        return _run_inplace(a, Fill, args, what)
    if kind == "copy":
        return _run_inplace(a, Copy, (_t(args[0]),), what)
    raise ValueError(kind)


def index_put_(a: Tensor, idx, value) -> None:
    """``a[idx] = value`` (in place: bumps the version counter)."""
    idx = _convert_index(idx)
    if not isinstance(value, Tensor) and not np.isscalar(value):
        value = _wrap(np.asarray(value, dtype=a._data.dtype))
    recording = _GradMode.enabled and (a._rg or (isinstance(value, Tensor) and value._rg))
    if not recording:
        a._data[idx] = fit_value(a._data, idx, value)
        a._bump_version()
        return
    cls = CopySlices if _is_basic(idx) else IndexPut
    _run_inplace(a, cls, (value, idx), "__setitem__ (x[...] = value)")


# --- methods attached to Tensor --------------------------------------------------------
TENSOR_METHODS = {
    "add": add, "sub": sub, "mul": mul, "div": div, "pow": pow, "neg": neg, "exp": exp, "log": log,
    "log1p": log1p, "sqrt": sqrt, "abs": abs, "sin": sin, "cos": cos, "tanh": tanh, "sinh": sinh, "cosh": cosh,
    "sigmoid": sigmoid, "relu": relu, "sign": sign, "clamp": clamp, "clip": clamp, "maximum": maximum,
    "minimum": minimum, "matmul": matmul, "mm": mm, "sum": sum, "mean": mean, "max": max, "min": min,
    "amax": amax, "amin": amin, "argmax": argmax, "argmin": argmin, "softmax": softmax,
    "log_softmax": log_softmax, "reshape": reshape, "view": view, "flatten": flatten,
    "transpose": transpose, "t": t, "permute": permute, "squeeze": squeeze, "unsqueeze": unsqueeze,
    "expand": expand, "expand_as": expand_as, "narrow": narrow, "select": select, "square": square,
    "rsqrt": rsqrt, "reciprocal": reciprocal, "norm": norm, "var": var, "std": std,
    "logsumexp": logsumexp, "cumsum": cumsum, "erf": erf, "erfc": erfc, "dot": dot, "where": lambda self, cond, other: where(cond, self, other),
}


def _install_methods() -> None:
    for name, fn in TENSOR_METHODS.items():
        setattr(Tensor, name, fn)

    def view_as(self, other):
        return View.apply(self, other._data.shape)

    def reshape_as(self, other):
        return View.apply(self, other._data.shape)

    Tensor.view_as = view_as
    Tensor.reshape_as = reshape_as
    Tensor.T = property(lambda self: Permute.apply(self, tuple(range(self._data.ndim))[::-1]),
                        doc="The tensor with its dimensions reversed (the transpose of a matrix).")
    Tensor.mT = property(lambda self: Transpose.apply(self, -2, -1))


_install_methods()
