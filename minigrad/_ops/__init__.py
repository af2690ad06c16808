"""The op catalogue: every built-in operation is a ``Function`` subclass defined here.

This module also provides the plain-function API (``minigrad.exp(x)``), the tensor
methods that call it (``x.exp()``), and the in-place machinery.
"""
from __future__ import annotations

import warnings

import numpy as np

from .._functorch.batched import asarray as _asarray  # np.asarray, batched arrays kept (vmap)

from .._tensor import Tensor, _wrap_dim
from ..autograd._builtin import _apply_first
from ..autograd.grad_mode import _GradMode
from ..autograd import forward_ad as _forward_ad
_FWD_ACTIVE = False  # True while a forward-AD dual level propagates tangents (set by forward_ad._set_hooks)
from .arithmetic import (Add, AddScalar, Clone, Div, DivScalar, Mul, MulScalar, Neg, Pow, PowScalar, RDivScalar,
                         RPowScalar, RSubScalar, Sub, SubScalar, ToDtype)
from .arithmetic import _binary as _arith_binary
from .linalg import Dot, MatMul, dot, matmul, mm
from .nn_ops import BCELoss, Linear, LogSoftmax, MSELoss, NLLLoss, Softmax
from .pointwise import (Abs, Clamp, Cos, Cosh, Exp, Log, Log1p, Maximum, Minimum, Relu, Sigmoid, Sign, Sin, Sinh, Sqrt,
                        Tanh, Where, where)
from .. import _dtype as _dt
from .reduction import _TORCH_TYPE, _axes, _kept_shape
from .reduction import Amax, Amin, CumSum, Mean, MeanDim, Norm2, Sum, SumDim, argmax, argmin, max, min  # noqa: A004
from . import elementwise as el
from .special import Erf, Erfc
from .shape import (Cat, Copy, Expand, Fill, Index, IndexPut, Permute, Squeeze, SqueezeDim, Stack, Transpose,
                    Unsqueeze, View, _basic_index_cls, _convert_index, _size_args)
from .shape import CopySlices, Select, Slice, ViewCopySlices, _is_basic, fit_value, replay_view

_wrap = Tensor._wrap
_F64_DTYPE = _dt.float64


def _t(x) -> Tensor:
    return x if isinstance(x, Tensor) else _wrap(_asarray(x))


def _binary_op(tensor_cls, scalar_cls):
    def op(input, other):
        if not isinstance(input, Tensor):
            input = _t(input)
        if isinstance(other, Tensor):
            return tensor_cls.apply(input, other)
        return scalar_cls.apply(input, other)

    return op


add = _binary_op(Add, AddScalar)
sub = _binary_op(Sub, SubScalar)
mul = _binary_op(Mul, MulScalar)
div = _binary_op(Div, DivScalar)


def pow(input, exponent):  # noqa: A001  (written out: PyTorch names the second parameter exponent)
    if not isinstance(input, Tensor):
        input = _t(input)
    if isinstance(exponent, Tensor):
        return Pow.apply(input, exponent)
    return PowScalar.apply(input, exponent)


subtract, multiply, divide, true_divide = sub, mul, div, div


def neg(input):
    return Neg.apply(input)


def _unary(cls):
    def op(input):
        if not isinstance(input, Tensor):
            raise TypeError(f"{op.__name__}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
                            f"\nminigrad.{op.__name__} takes a tensor; wrap numbers with minigrad.tensor(...).")
        return _apply_first(cls, input)

    op.__name__ = cls.__name__.lower()
    op.__doc__ = f"Elementwise {cls.__name__.lower()} (differentiable)."
    return op


exp, log, log1p, sqrt, abs, sin, cos, tanh, sinh, cosh, sigmoid, relu, sign = (  # noqa: A001
    _unary(c) for c in (Exp, Log, Log1p, Sqrt, Abs, Sin, Cos, Tanh, Sinh, Cosh, Sigmoid, Relu, Sign))
(erf, erfc, acos, asin, atan, tan, asinh, acosh, atanh, expm1, exp2, log10, log2, reciprocal, rsqrt, deg2rad,
 rad2deg, ceil, floor, trunc) = (_unary(c) for c in (
    Erf, Erfc, el.Acos, el.Asin, el.Atan, el.Tan, el.Asinh, el.Acosh, el.Atanh, el.Expm1, el.Exp2, el.Log10, el.Log2,
    el.Reciprocal, el.Rsqrt, el.Deg2rad, el.Rad2deg, el.Ceil, el.Floor, el.Trunc))


def clamp(input, min=None, max=None):  # noqa: A002
    return Clamp.apply(input, min, max)


clip = clamp


def maximum(input, other):
    return Maximum.apply(_t(input), _t(other))


def minimum(input, other):
    return Minimum.apply(_t(input), _t(other))


def sum(input, dim=None, keepdim=False, dtype=None):  # noqa: A001
    if dtype is not None:
        input = input.to(dtype)
    return (Sum if dim is None else SumDim).apply(input, dim, keepdim)


def cumsum(input, dim, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    return CumSum.apply(input, dim)


def mean(input, dim=None, keepdim=False, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    return (Mean if dim is None else MeanDim).apply(input, dim, keepdim)


def amax(input, dim=None, keepdim=False):
    return Amax.apply(input, dim, keepdim)


def amin(input, dim=None, keepdim=False):
    return Amin.apply(input, dim, keepdim)


def softmax(input, dim):
    return Softmax.apply(input, dim)


def log_softmax(input, dim):
    return LogSoftmax.apply(input, dim)


def reshape(input, *shape):
    shape = _size_args(shape)
    if not input._data.flags.c_contiguous and input._data.ndim > 1:
        try:
            np.reshape(input._data, shape, copy=False)
        except ValueError:  # not expressible as a view: PyTorch copies (CloneBackward0 + UnsafeViewBackward0)
            from .rearrange import UnsafeView

            return UnsafeView.apply(Clone.apply(input), shape)
    return View.apply(input, shape)


def view(a, *shape):
    return View.apply(a, _size_args(shape))


def flatten(input, start_dim=0, end_dim=-1):
    shape = input._data.shape
    if not shape:
        return View.apply(input, (1,))
    s, e = _wrap_dim(start_dim, len(shape), "flatten"), _wrap_dim(end_dim, len(shape), "flatten")
    if s >= e:
        return input if s == e else View.apply(input, shape)
    new = shape[:s] + (int(np.prod(shape[s:e + 1])),) + shape[e + 1:]
    return View.apply(input, new)


def transpose(input, dim0, dim1):
    return Transpose.apply(input, dim0, dim1)


def t(input):
    if input._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input._data.ndim}D")
    return Transpose.apply(input, 0, -1) if input._data.ndim == 2 else input


def permute(input, *args, dims=None):
    # PyTorch: torch.permute(input, dims) / x.permute(*dims), and dims= as a keyword in both
    return Permute.apply(input, _size_args(args if dims is None else (dims,)))


def squeeze(input, dim=None):
    return (Squeeze if dim is None else SqueezeDim).apply(input, dim)


def unsqueeze(input, dim):
    return Unsqueeze.apply(input, dim)


def expand(a, *sizes):
    return Expand.apply(a, _size_args(sizes))


def expand_as(a, other):
    return Expand.apply(a, other._data.shape)


def broadcast_to(input, size):
    return Expand.apply(input, tuple(size))


def cat(tensors, dim=0):
    return Cat.apply(dim, *tensors)


concat = concatenate = cat


def stack(tensors, dim=0):
    return Stack.apply(dim, *tensors)


def narrow(input, dim, start, length):
    if input._data.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.\nnarrow takes a range along a dimension; "
                           "this tensor has none.")
    d = _wrap_dim(dim, input._data.ndim, "narrow")
    return Slice.apply(input, (slice(None),) * d + (slice(start, start + length),))


def select(input, dim, index):
    if input._data.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.\nselect picks an entry along a dimension; "
                         "this tensor has none.")
    d = _wrap_dim(dim, input._data.ndim, "select")
    return Select.apply(input, (slice(None),) * d + (index,))


def index(a, idx):
    idx = _convert_index(idx)
    return _basic_index_cls(idx).apply(a, idx)


def clone(input):
    return Clone.apply(input)


def detach(input):
    return input.detach()


def linear(x, weight, bias=None):
    return Linear.apply(x, weight, bias)


def square(input):
    return PowScalar.apply(input, 2)




def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The vector p-norm over ``dim`` (all elements if None): p = 2 / "fro", inf, -inf, 0 or any other number."""
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_TORCH_TYPE[input._data.dtype.name]}\nnorm: convert first, e.g. x.float().norm().")
    if dtype is not None:
        input = input.to(dtype)
    if p == "fro" or p == 2:
        return Norm2.apply(input, dim, keepdim)
    if isinstance(p, str):
        raise NotImplementedError(f"minigrad's norm takes p = 'fro' or a number, got p={p!r}\n"
                                  "For matrix norms such as 'nuc', use numpy.linalg.norm on t.detach().numpy().")
    if p == float("inf"):
        return input.abs().amax(dim, keepdim)
    if p == float("-inf"):
        return input.abs().amin(dim, keepdim)
    if p == 0:  # the number of nonzero entries; its gradient is 0, as in PyTorch
        return (input * 0).sum(dim, keepdim) + _wrap((input._data != 0).sum(axis=_axes(dim, input._data.ndim, "norm"),
                                                                      keepdims=keepdim).astype(input._data.dtype))
    return (input.abs() ** p).sum(dim, keepdim) ** (1.0 / p)


def var(input, dim=None, unbiased=True, keepdim=False, correction=None, *, _name="var"):
    axes = _axes(dim, input._data.ndim, _name)
    n = int(np.prod([input._data.shape[d] for d in axes], dtype=np.int64))
    ddof = (1 if unbiased else 0) if correction is None else correction
    d = input - input.mean(dim, keepdim=True)
    if n - ddof > 0:
        return (d * d).sum(dim, keepdim) / (n - ddof)
    warnings.warn(f"{_name}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
                  "factor (input numel divided by output numel).", UserWarning, stacklevel=2 if _name == "var" else 3)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (d * d).sum(dim, keepdim) / 0.0  # nan (inf where the squares do not sum to 0), as in PyTorch


def std(input, dim=None, unbiased=True, keepdim=False, correction=None):
    return var(input, dim, unbiased, keepdim, correction, _name="std").sqrt()


def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(a))) over ``dim``, shifted by the maximum so that nothing overflows."""
    x = input._data
    axes = _axes(dim, x.ndim, "logsumexp")
    m = np.max(x, axis=axes, keepdims=True, initial=-np.inf) if x.size else np.zeros(_kept_shape(x.shape, axes), x.dtype)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype, copy=False)  # all -inf (or an inf): shift by 0, as PyTorch
    with np.errstate(divide="ignore"):
        out = (input - _wrap(m)).exp().sum(axes, keepdim=True).log() + _wrap(m)
    return out if keepdim else out.reshape([s for i, s in enumerate(x.shape) if i not in axes])


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


def _not_writable(a: Tensor, what: str) -> RuntimeError:
    x = a._data
    if any(st == 0 and n > 1 for st, n in zip(x.strides, x.shape)):
        return RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a single memory "
            f"location. Please clone() the tensor before performing the operation.\n{what}: this tensor is an "
            "expand()ed view, whose entries share memory; clone() it first."
        )
    return RuntimeError(
        f"{what}: this tensor's memory is read-only\nIt shares memory with a NumPy array that NumPy itself cannot "
        "write to (made from a bytes object or a memory-mapped file, or the read-only view of another tensor's "
        "gradient). clone() it first."
    )


def _run_inplace(a: Tensor, fn_cls, args: tuple, what: str) -> Tensor:
    """Run ``fn_cls`` out of place, then write the result into ``a`` and move ``a`` onto the new node."""
    if _FWD_ACTIVE:  # a forward-AD dual level is active: the tangent follows the write (forward_ad.py)
        return _forward_ad._apply_inplace(a, fn_cls, args, what)
    if not a._data.flags.writeable:
        raise _not_writable(a, what)
    recording = _GradMode.enabled and (a._rg or any(isinstance(x, Tensor) and x._rg for x in args))
    if recording:
        _check_inplace(a, what)
        if a._extra is not None and "multi_view" in a._extra and a.grad_fn is not None:
            from ..autograd.function import _op_name

            raise RuntimeError(
                f"Output {a._output_nr} of {_op_name(a.grad_fn)} is a view and is being modified inplace. This view "
                "is the output of a function that returns multiple views. Such functions do not allow the output "
                "views to be modified inplace. You should replace the inplace operation by an out-of-place one.\n"
                f"{what}: this tensor is one of the pieces returned by split / chunk / unbind; write into the whole "
                "tensor instead (e.g. x[:, :2].add_(1)), or use torch.no_grad() if no gradient is needed."
            )
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
            f"result type {_TORCH_TYPE[out.dtype.name]} can't be cast to the desired output type "
            f"{_TORCH_TYPE[a.dtype.name]}\n{what}: an in-place result must keep the tensor's dtype ({a.dtype})."
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
        value = _wrap(_asarray(value, dtype=a._data.dtype))
    recording = _GradMode.enabled and (a._rg or (isinstance(value, Tensor) and value._rg))
    if not recording and not _FWD_ACTIVE:
        if not a._data.flags.writeable:
            raise _not_writable(a, "__setitem__ (x[...] = value)")
        a._data[idx] = fit_value(a._data, idx, value)
        a._bump_version()
        return
    cls = CopySlices if _is_basic(idx) else IndexPut
    _run_inplace(a, cls, (value, idx), "__setitem__ (x[...] = value)")


# --- the breadth of PyTorch's API (issue 12): families in their own modules -----------------------------------
from .activation import celu, elu, gelu, hardtanh, leaky_relu, logsigmoid, mish, relu6, selu, silu, softplus  # noqa: E402
from .comparison import all as _all, any as _any  # noqa: E402  (kept off this module's namespace: builtins)
from .comparison import (bitwise_and, bitwise_not, bitwise_or, bitwise_xor, count_nonzero, eq,  # noqa: E402,A004
                         ge, greater, greater_equal, gt, isclose, isfinite, isinf, isnan, isneginf, isposinf, isreal,
                         le, less, less_equal, logical_and, logical_not, logical_or, logical_xor, lt, ne, not_equal,
                         signbit)
from .elementwise import round as _round  # noqa: E402
from .elementwise import (atan2, fmod, frac, heaviside, hypot, lerp, logaddexp, logaddexp2, nan_to_num,  # noqa: E402
                          remainder)
from .indexing import (gather, index_add, index_add_, index_fill, index_fill_, index_select, masked_fill,  # noqa: E402
                       masked_fill_, masked_select, scatter, scatter_, scatter_add, scatter_add_, take, take_along_dim)
from .matrix import (addmm, addmv, baddbmm, bmm, cross, det, diag, diag_embed, diagonal, einsum, inner,  # noqa: E402
                     inverse, kron, matrix_power, mv, outer, solve, tensordot, trace, tril, triu)
from .product import cumprod, prod  # noqa: E402
from .rearrange import (atleast_1d, atleast_2d, atleast_3d, chunk, column_stack, dstack, flip, fliplr,  # noqa: E402
                        flipud, hstack, movedim, repeat, repeat_interleave, roll, row_stack, split, tensor_split, tile,
                        unbind, unflatten, vstack)
from .sorting import (argsort, argwhere, kthvalue, median, msort, nonzero, sort, topk, unique,  # noqa: E402
                      unique_consecutive)

arccos, arcsin, arctan, arctan2, arcsinh, arccosh, arctanh = acos, asin, atan, atan2, asinh, acosh, atanh
absolute, negative, fix = abs, neg, trunc
moveaxis, swapaxes, swapdims = movedim, transpose, transpose
ger = outer


def clamp_min(input, min):  # noqa: A002
    return Clamp.apply(input, min, None)


def clamp_max(input, max):  # noqa: A002
    return Clamp.apply(input, None, max)


def positive(input):
    return input


def sgn(input):
    return Sign.apply(input)


def float_power(input, exponent):
    input = input.to(_F64_DTYPE) if isinstance(input, Tensor) else input
    exponent = exponent.to(_F64_DTYPE) if isinstance(exponent, Tensor) else exponent
    return input ** exponent if isinstance(input, Tensor) else _t(np.float64(input)) ** exponent


def floor_divide(input, other):
    """Rounding toward minus infinity (PyTorch >= 1.13); no gradient (PyTorch's is not implemented either)."""
    input = _t(input)
    return _arith_binary("floor_divide", np.floor_divide, input, el.operand(other, input))  # PyTorch's dtype promotion


def xlogy(input, other):
    """a * log(b), with 0 where a == 0 (even where b is 0 or nan is not involved)."""
    other = other if isinstance(other, Tensor) else el.operand(other, input)
    if input._data.dtype.kind != "f" and other._data.dtype.kind != "f":  # integers: the default float, as PyTorch
        input = input.to(_dt.get_default_dtype())
    safe_b = where(input == 0, 1.0, other)
    out = input * safe_b.log()
    return where(input == 0, _wrap(np.zeros((), out._data.dtype)), out)


def diff(input, n: int = 1, dim: int = -1, prepend=None, append=None):
    if input._data.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if prepend is not None or append is not None:
        parts = [p for p in (prepend, input, append) if p is not None]
        input = cat(parts, dim)
    for _ in range(n):
        k = input._data.shape[_wrap_dim(dim, input._data.ndim, "diff")]
        input = input.narrow(dim, 1, k - 1) - input.narrow(dim, 0, k - 1)
    return input


def nansum(input, dim=None, keepdim=False, dtype=None):
    """The sum with NaNs counted as 0 (their gradient is 0 too)."""
    return sum(where(input.isnan(), 0.0, input), dim, keepdim, dtype)


def nanmean(input, dim=None, keepdim=False, dtype=None):
    keep = input.isnan().logical_not()
    return nansum(input, dim, keepdim, dtype) / keep.sum(dim, keepdim)


def aminmax(input, *, dim=None, keepdim=False):  # noqa: D103
    from collections import namedtuple

    pair = namedtuple("aminmax", ["min", "max"])
    return pair(amin(input, dim, keepdim), amax(input, dim, keepdim))


def logcumsumexp(input, dim):
    """log(cumsum(exp(a))) along dim, as a running logaddexp (stable for any spread of values)."""
    from .special import LogCumSumExp

    return LogCumSumExp.apply(input, dim)


def cummax(input, dim):
    return _cum_extreme(input, dim, np.maximum, "cummax")


def cummin(input, dim):
    return _cum_extreme(input, dim, np.minimum, "cummin")


def _cum_extreme(a, dim, ufunc, name):
    """Running max / min along dim with the index where each was reached (the gradient goes there)."""
    from .sorting import RETURN_TYPES

    x = a._data
    d = _wrap_dim(dim, x.ndim, name) if x.ndim else 0
    if not x.ndim:
        return RETURN_TYPES[name](a * 1.0, _wrap(np.zeros((), np.int64)))
    running = ufunc.accumulate(x, axis=d)
    pos = np.arange(x.shape[d]).reshape([-1 if k == d else 1 for k in range(x.ndim)])
    # index of the latest element equal to the running extreme (PyTorch keeps the last on ties)
    hit = np.where(x == running, pos, 0)
    idx = np.maximum.accumulate(hit, axis=d).astype(np.int64)
    values = gather(a, d, _wrap(idx))
    return RETURN_TYPES[name](values, _wrap(idx))


def multinomial(input, num_samples: int, replacement: bool = False, *, generator=None):
    from .._factories import _multinomial

    return _multinomial(input, num_samples, replacement)


def bernoulli(input, p=None, *, generator=None):
    from .._factories import _rng

    q = input._data if p is None else np.full(input._data.shape, p)
    return _wrap((_rng[0].random(input._data.shape) < q).astype(input._data.dtype))


def type_as(a, other):
    return a.to(other.dtype)


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
    "logsumexp": logsumexp, "cumsum": cumsum, "dot": dot, "where": lambda self, condition, other: where(condition, self, other),
}
# PyTorch's tensor methods among the functions above (a test checks this list against torch.Tensor)
_MORE_METHODS = """
erf erfc acos asin atan tan asinh acosh atanh expm1 exp2 log10 log2 deg2rad rad2deg ceil floor trunc frac round
atan2 remainder fmod lerp heaviside logaddexp logaddexp2 hypot nan_to_num xlogy float_power floor_divide true_divide
arccos arcsin arctan arctan2 arcsinh arccosh arctanh absolute negative fix positive sgn clamp_min clamp_max
eq ne lt le gt ge greater greater_equal less less_equal not_equal isclose isinf isposinf isneginf isfinite isnan isreal
signbit logical_and logical_or logical_xor logical_not bitwise_and bitwise_or bitwise_xor bitwise_not all any
count_nonzero prod cumprod sort argsort msort topk kthvalue median unique unique_consecutive nonzero argwhere
gather scatter scatter_add index_select index_add index_fill masked_fill masked_select take take_along_dim
scatter_ scatter_add_ index_add_ index_fill_ masked_fill_
addmm addmv baddbmm bmm mv outer ger inner kron trace diag diag_embed diagonal tril triu det inverse matrix_power cross
flip fliplr flipud roll repeat tile repeat_interleave chunk split tensor_split unbind movedim moveaxis swapaxes
swapdims unflatten diff nansum nanmean aminmax logcumsumexp cummax cummin multinomial bernoulli type_as
silu gelu relu6 selu celu logsigmoid softplus hardtanh
""".split()
_BUILTIN_NAMED = {"all": _all, "any": _any, "round": _round}
TENSOR_METHODS.update({name: _BUILTIN_NAMED.get(name) or globals()[name] for name in _MORE_METHODS if name not in
                       ("silu", "gelu", "relu6", "logsigmoid", "softplus", "hardtanh", "celu")})


# In-place forms (x.exp_()): the out-of-place op, written into the tensor by _run_inplace (version counter,
# leaf checks, recorded on views' bases).
_INPLACE_UNARY = {
    "exp": Exp, "log": Log, "log1p": Log1p, "sqrt": Sqrt, "abs": Abs, "sin": Sin, "cos": Cos, "tanh": Tanh,
    "sinh": Sinh, "cosh": Cosh, "sigmoid": Sigmoid, "neg": Neg, "sign": Sign, "erf": Erf, "erfc": Erfc,
    "acos": el.Acos, "asin": el.Asin, "atan": el.Atan, "tan": el.Tan, "asinh": el.Asinh, "acosh": el.Acosh,
    "atanh": el.Atanh, "expm1": el.Expm1, "exp2": el.Exp2, "log10": el.Log10, "log2": el.Log2,
    "reciprocal": el.Reciprocal, "rsqrt": el.Rsqrt, "ceil": el.Ceil, "floor": el.Floor, "trunc": el.Trunc,
    "frac": el.Frac, "deg2rad": el.Deg2rad, "rad2deg": el.Rad2deg,
}


def _inplace_unary(name: str, cls):
    def method(self):
        return _run_inplace(self, cls, (), f"{name}_()")

    method.__name__ = name + "_"
    method.__doc__ = f"In-place {name}."
    return method


def _pow_(self, exponent):
    return _run_inplace(self, Pow if isinstance(exponent, Tensor) else PowScalar, (exponent,), "pow_()")


def _round_(self, decimals: int = 0):
    if decimals:
        return _run_inplace(self, el.RoundDecimals, (decimals,), "round_()")
    return _run_inplace(self, el.Round, (), "round_()")


def _clamp_min_(self, min):  # noqa: A002
    return _run_inplace(self, Clamp, (min, None), "clamp_min_()")


def _clamp_max_(self, max):  # noqa: A002
    return _run_inplace(self, Clamp, (None, max), "clamp_max_()")


def _square_(self):
    return _run_inplace(self, PowScalar, (2,), "square_()")


def _lerp_(self, end, weight):
    w = weight if isinstance(weight, Tensor) else _wrap(_asarray(weight, dtype=self._data.dtype))
    return _run_inplace(self, el.Lerp if isinstance(weight, Tensor) else el.LerpScalar, (end, w), "lerp_()")


def _fmod_(self, other):
    return _run_inplace(self, el.Fmod if isinstance(other, Tensor) else el.FmodScalar, (el.operand(other, self),),
                        "fmod_()")


def _remainder_(self, other):
    return _run_inplace(self, el.Remainder if isinstance(other, Tensor) else el.RemainderScalar,
                        (el.operand(other, self),), "remainder_()")


def _nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    return _run_inplace(self, el.NanToNum, (nan, posinf, neginf), "nan_to_num_()")


def _tril_(self, diagonal=0):
    from .matrix import Tril

    return _run_inplace(self, Tril, (diagonal,), "tril_()")


def _triu_(self, diagonal=0):
    from .matrix import Triu

    return _run_inplace(self, Triu, (diagonal,), "triu_()")


_INPLACE_WITH_ARGS = {"pow": _pow_, "round": _round_, "clamp_min": _clamp_min_, "clamp_max": _clamp_max_,
                      "square": _square_, "lerp": _lerp_, "fmod": _fmod_, "remainder": _remainder_,
                      "nan_to_num": _nan_to_num_, "tril": _tril_, "triu": _triu_}


def _install_methods() -> None:
    for name, fn in TENSOR_METHODS.items():
        setattr(Tensor, name, fn)

    # ``//`` and ``%``: floor_divide (no gradient, as PyTorch's) and remainder (Python's sign convention)
    Tensor.__floordiv__ = lambda self, other: floor_divide(self, other)
    Tensor.__rfloordiv__ = lambda self, other: floor_divide(el.operand(other, self), self)
    Tensor.__mod__ = lambda self, other: el.remainder(self, other)
    Tensor.__rmod__ = lambda self, other: el.remainder(other, self)

    def view_as(self, other):
        return View.apply(self, other._data.shape)

    def reshape_as(self, other):
        return View.apply(self, other._data.shape)

    Tensor.view_as = view_as
    Tensor.reshape_as = reshape_as
    for name, cls in _INPLACE_UNARY.items():
        setattr(Tensor, name + "_", _inplace_unary(name, cls))
    for name, fn in _INPLACE_WITH_ARGS.items():
        setattr(Tensor, name + "_", fn)
    Tensor.T = property(lambda self: Permute.apply(self, tuple(range(self._data.ndim))[::-1]),
                        doc="The tensor with its dimensions reversed (the transpose of a matrix).")
    Tensor.mT = property(lambda self: Transpose.apply(self, -2, -1))


_install_methods()
