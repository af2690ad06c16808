"""Reductions over all elements or over ``dim`` (an int or a tuple), with ``keepdim``."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from .._functorch.batched import asarray as _asarray  # np.asarray, batched arrays kept (vmap)

from .._tensor import Tensor, _wrap_dim
from ..autograd.function import Function
from ..autograd.grad_mode import _GradMode

_wrap = Tensor._wrap


_TORCH_TYPE = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
               "float32": "Float", "float64": "Double", "float16": "Half"}


def _axes(dim, ndim: int, where: str):
    """Normalise ``dim`` to a sorted tuple of non-negative axes (None = all).

    As in PyTorch, dims -1 and 0 are valid for a 0-d tensor (there is nothing to reduce: no axes),
    and a dim given twice is an error.
    """
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        d = _wrap_dim(dim, ndim, where)
        return (d,) if ndim else ()
    axes = [_wrap_dim(d, ndim, where) for d in dim]
    if len(set(axes)) != len(axes):
        twice = next(a for a in axes if axes.count(a) > 1)
        raise RuntimeError(f"dim {twice} appears multiple times in the list of dims\n{where}: got dims {list(dim)} "
                           f"for a tensor with {ndim} dimension(s).")
    return tuple(sorted(axes)) if ndim else ()


def _check_nonempty(x: np.ndarray, axes: tuple, where: str, dim_given: bool) -> None:
    """PyTorch's errors for max / min / argmax... of nothing (reducing over a dimension of size 0)."""
    if not dim_given:
        if x.size == 0:
            raise (IndexError if where.startswith("arg") else RuntimeError)(
                f"{where}(): Expected reduction dim to be specified for input.numel() == 0."
                + ("" if where.startswith("arg") else " Specify the reduction dim with the 'dim' argument.")
                + f"\nThe tensor (shape {list(x.shape)}) has no elements, so it has no {where.removeprefix('arg')}.")
        return
    for ax in axes:
        if x.shape[ax] == 0:
            raise IndexError(f"{where}(): Expected reduction dim {ax} to have non-zero size.\nThe tensor has shape "
                             f"{list(x.shape)}: there is nothing to take the {where.removeprefix('a')} of along "
                             f"dim {ax}.")


def _kept_shape(shape: tuple, axes: tuple) -> tuple:
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


class Sum(Function):
    _node_name = "SumBackward0"

    @staticmethod
    def forward(ctx, a, dim, keepdim):
        shape = a._data.shape
        axes = _axes(dim, len(shape), "sum")
        ctx.shape, ctx.kept = shape, _kept_shape(shape, axes)
        out = a._data.sum(axis=axes, keepdims=keepdim)
        if a._data.dtype.kind in "bu":  # bool and uint8 sum to int64 in PyTorch (NumPy: int64 and uint64)
            out = out.astype(np.int64)
        return _wrap(_asarray(out))

    @staticmethod
    def backward(ctx, g):
        if not _GradMode.enabled:  # the ordinary backward: NumPy's view directly, 10 us less than two ops
            return _wrap(np.broadcast_to(g._data.reshape(ctx.kept), ctx.shape)), None, None
        return g.reshape(ctx.kept).expand(ctx.shape), None, None


class Mean(Function):
    _node_name = "MeanBackward0"

    @staticmethod
    def forward(ctx, a, dim, keepdim):
        if a._data.dtype.kind != "f":
            raise RuntimeError(
                f"mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
                f"dtype. Got: {_TORCH_TYPE.get(a.dtype.name, a.dtype.name)}\nConvert first, e.g. x.float().mean()."
            )
        shape = a._data.shape
        axes = _axes(dim, len(shape), "mean")
        ctx.shape, ctx.kept = shape, _kept_shape(shape, axes)
        ctx.n = n = int(np.prod([shape[i] for i in axes])) if axes else 1
        if not n:  # the mean of nothing: nan, as in PyTorch (without NumPy's warning)
            return _wrap(np.full(a._data.sum(axis=axes, keepdims=keepdim).shape, np.nan, a._data.dtype))
        return _wrap(_asarray(a._data.mean(axis=axes, keepdims=keepdim)))

    @staticmethod
    def backward(ctx, g):
        if not _GradMode.enabled:  # as Sum's
            return _wrap(np.broadcast_to((g._data / ctx.n).reshape(ctx.kept), ctx.shape)), None, None
        return (g / ctx.n).reshape(ctx.kept).expand(ctx.shape), None, None


class CumSum(Function):
    """Running sums along ``dim``; integer and bool inputs give int64, as in PyTorch."""

    _node_name = "CumsumBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        x = a._data
        ctx.dim = axis = _wrap_dim(dim, x.ndim, "cumsum")
        out = np.cumsum(x, axis=axis) if x.ndim else x.copy()
        return _wrap(out.astype(np.int64) if x.dtype.kind in "biu" else out)

    @staticmethod
    def backward(ctx, g):
        if g.ndim == 0:
            return g, None
        # Input i feeds every running sum from i on: its gradient is sum_{j >= i} g_j,
        # i.e. the total minus the running sum before i.
        return g.sum(ctx.dim, keepdim=True) - g.cumsum(ctx.dim) + g, None


class SumDim(Sum):
    """``sum(dim=...)``: the same op, but PyTorch names its node SumBackward1."""

    _node_name = "SumBackward1"


class MeanDim(Mean):
    _node_name = "MeanBackward1"


class Norm2(Function):
    """The Euclidean norm over ``dim`` (all elements by default); its gradient at 0 is 0, as in PyTorch."""

    _node_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, a, dim, keepdim):
        shape = a._data.shape
        axes = _axes(dim, len(shape), "norm")
        ctx.kept = _kept_shape(shape, axes)
        out = _wrap(_asarray(np.sqrt((a._data * a._data).sum(axis=axes, keepdims=keepdim))))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, out = ctx.saved_tensors
        n = out.reshape(ctx.kept)
        safe = n + (n == 0)  # where the norm is 0, a is 0 too: any nonzero divisor gives gradient 0
        return a * (g.reshape(ctx.kept) / safe), None, None


class _Extreme(Function):
    """amax / amin (and max / min over everything): ties share the gradient evenly."""

    ufunc = np.max
    op = "amax"

    @classmethod
    def forward(cls, ctx, a, dim, keepdim):
        x = a._data
        shape = x.shape
        axes = _axes(dim, len(shape), cls.op)
        _check_nonempty(x, axes, cls.op, dim is not None)
        kept_val = cls.ufunc(x, axis=axes, keepdims=True)
        ctx.shape, ctx.kept = shape, _kept_shape(shape, axes)
        mask = x == kept_val
        ctx.weights = mask / mask.sum(axis=axes, keepdims=True)
        return _wrap(kept_val if keepdim else kept_val.reshape([s for i, s in enumerate(shape) if i not in axes]))

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.kept) * Tensor._wrap(ctx.weights.astype(g._data.dtype)), None, None


class Amax(_Extreme):
    _node_name = "AmaxBackward0"
    ufunc = np.max


class Amin(_Extreme):
    _node_name = "AminBackward0"
    ufunc = np.min
    op = "amin"


class MaxAll(_Extreme):
    _node_name = "MaxBackward1"
    ufunc = np.max
    op = "max"


class MinAll(_Extreme):
    _node_name = "MinBackward1"
    ufunc = np.min
    op = "min"


class _ExtremeDim(Function):
    """max / min along one dim: returns (values, indices); the gradient goes to the index."""

    arg = np.argmax

    @classmethod
    def forward(cls, ctx, a, dim, keepdim):
        d = _wrap_dim(dim, a._data.ndim, cls.op)
        if a._data.ndim:
            _check_nonempty(a._data, (d,), cls.op, True)
        idx = np.expand_dims(cls.arg(a._data, axis=d), d) if a._data.ndim else np.zeros((), np.int64)
        vals = np.take_along_axis(a._data, idx, axis=d) if a._data.ndim else a._data.copy()
        ctx.shape, ctx.d, ctx.idx = a._data.shape, d, idx
        if not keepdim and a._data.ndim:
            vals, idx = vals.squeeze(d), idx.squeeze(d)
        indices = _wrap(idx.astype(np.int64))
        ctx.mark_non_differentiable(indices)
        return _wrap(vals), indices

    @staticmethod
    def backward(ctx, g, _g_indices):
        onehot = np.zeros_like(g._data, shape=ctx.shape)
        if len(ctx.shape):
            np.put_along_axis(onehot, ctx.idx, 1, axis=ctx.d)
            g = g.reshape(_kept_shape(ctx.shape, (ctx.d,)))
        else:
            onehot[...] = 1
        return g * Tensor._wrap(onehot), None, None


class MaxDim(_ExtremeDim):
    _node_name = "MaxBackward0"
    arg = np.argmax
    op = "max"


class MinDim(_ExtremeDim):
    _node_name = "MinBackward0"
    arg = np.argmin
    op = "min"


def _return_type(name: str):
    """``max(dim=...)``'s result: a (values, indices) named tuple printed as PyTorch prints it."""
    base = namedtuple(name, ["values", "indices"])

    def __repr__(self):
        return f"torch.return_types.{name}(\nvalues={self.values!r},\nindices={self.indices!r})"

    return type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__str__": __repr__})


_RETURN_TYPES = {"max": _return_type("max"), "min": _return_type("min")}
values_indices = _RETURN_TYPES["max"]


def _extreme(a, dim, keepdim, all_cls, dim_cls):
    if dim is None:
        return all_cls.apply(a, None, False)
    values, indices = dim_cls.apply(a, dim, keepdim)
    return _RETURN_TYPES["max" if dim_cls is MaxDim else "min"](values, indices)


def max(input, dim=None, keepdim=False):  # noqa: A001
    if isinstance(dim, Tensor):
        from .pointwise import Maximum

        return Maximum.apply(input, dim)
    return _extreme(input, dim, keepdim, MaxAll, MaxDim)


def min(input, dim=None, keepdim=False):  # noqa: A001
    if isinstance(dim, Tensor):
        from .pointwise import Minimum

        return Minimum.apply(input, dim)
    return _extreme(input, dim, keepdim, MinAll, MinDim)


def _arg_extreme(a, dim, keepdim, fn, name: str) -> Tensor:
    x = a._data
    if dim is None:
        _check_nonempty(x, (), name, False)
        out = _asarray(fn(x), dtype=np.int64)
        return _wrap(out.reshape((1,) * x.ndim) if keepdim else out)
    d = _wrap_dim(dim, x.ndim, name)
    if not x.ndim:
        return _wrap(np.zeros((), np.int64))
    _check_nonempty(x, (d,), name, True)
    return _wrap(fn(x, axis=d, keepdims=keepdim).astype(np.int64))


def argmax(input, dim=None, keepdim=False) -> Tensor:
    return _arg_extreme(input, dim, keepdim, np.argmax, "argmax")


def argmin(input, dim=None, keepdim=False) -> Tensor:
    return _arg_extreme(input, dim, keepdim, np.argmin, "argmin")
