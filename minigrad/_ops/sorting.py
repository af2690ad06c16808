"""Ordering: sort, argsort, msort, topk, kthvalue, median, unique, nonzero / argwhere.

The differentiable ones pick elements of the input; their gradient goes back to the picked
positions (a scatter_add of the gradient at the returned indices, itself differentiable).
NaN sorts as the largest value, as in PyTorch.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from .._functorch.batched import BatchedArray as _BatchedArray
from .._functorch.batched import array as _array
from .._functorch.batched import asarray as _asarray  # np.asarray, batched arrays kept (vmap)

from .._tensor import Tensor, _wrap_dim
from ..autograd.function import Function

_wrap = Tensor._wrap


def _return_type(name: str):
    """PyTorch's named (values, indices) results: ``torch.return_types.sort(values=..., indices=...)``."""
    base = namedtuple(name, ["values", "indices"])

    def __repr__(self):
        return f"torch.return_types.{name}(\nvalues={self.values!r},\nindices={self.indices!r})"

    return type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__str__": __repr__})


RETURN_TYPES = {n: _return_type(n) for n in ("sort", "topk", "kthvalue", "median", "mode", "cummax", "cummin")}


def _sort_key(x: np.ndarray, descending: bool) -> np.ndarray:
    if x.dtype == np.bool_:
        x = x.astype(np.int8)
    if not descending:
        return x
    if x.dtype.kind == "f":
        return np.where(np.isnan(x), -np.inf, -x)  # NaN is the largest: first when descending
    return -x.astype(np.int64) if x.dtype.kind == "u" else -x


class _PickAlong(Function):
    """Values of ``a`` at indices chosen along ``d``: the gradient is scattered back to them."""

    @staticmethod
    def backward(ctx, g, _g_indices):
        from .indexing import ScatterAdd

        rest = (None,) * (len(ctx.needs_input_grad) - 1)  # the other arguments are not tensors
        if not ctx.shape:
            return (g.reshape(()),) + rest
        if g._data.ndim != len(ctx.shape):  # keepdim=False: put the reduced dim back
            g = g.unsqueeze(ctx.d)
        zeros = _wrap(np.zeros_like(g._data, shape=ctx.shape))
        return (ScatterAdd.apply(zeros, ctx.d, _wrap(ctx.idx), g),) + rest


def _pick(ctx, a: Tensor, d: int, idx: np.ndarray, keepdim: bool = True):
    """(values, indices) of ``a`` at ``idx`` (same ndim as a) along ``d``; indices non-differentiable."""
    x = a._data
    ctx.shape, ctx.d, ctx.idx = x.shape, d, idx
    vals = np.take_along_axis(x, idx, axis=d) if x.ndim else x.copy()
    indices = idx
    if not keepdim and x.ndim:
        vals, indices = vals.squeeze(d), idx.squeeze(d)
    out_i = _wrap(_array(indices, dtype=np.int64))  # (np.array, not ascontiguousarray: that makes 0-d 1-d)
    ctx.mark_non_differentiable(out_i)
    return _wrap(_array(vals)), out_i


class Sort(_PickAlong):
    _node_name = "SortBackward0"

    @staticmethod
    def forward(ctx, a, dim, descending, stable):
        x = a._data
        if not x.ndim:
            _wrap_dim(dim, 0, "sort")
            return _pick(ctx, a, 0, np.zeros((), np.int64))
        d = _wrap_dim(dim, x.ndim, "sort")
        idx = np.argsort(_sort_key(x, descending), axis=d, kind="stable")
        return _pick(ctx, a, d, idx)


class SortStable(Sort):
    _node_name = "SortBackward1"


class Topk(_PickAlong):
    _node_name = "TopkBackward0"

    @staticmethod
    def forward(ctx, a, k, dim, largest, sorted_):
        x = a._data
        n = x.shape[_wrap_dim(dim, x.ndim, "topk")] if x.ndim else 1
        if not 0 <= k <= n:
            raise RuntimeError(f"selected index k out of range\ntopk: k={k}, but the tensor has {n} elements along "
                               f"dim {dim}.")
        if not x.ndim:
            return _pick(ctx, a, 0, np.zeros((), np.int64))
        d = _wrap_dim(dim, x.ndim, "topk")
        order = np.argsort(_sort_key(x, largest), axis=d, kind="stable")
        idx = np.take(order, np.arange(k), axis=d)
        return _pick(ctx, a, d, idx)


class Kthvalue(_PickAlong):
    _node_name = "KthvalueBackward0"

    @staticmethod
    def forward(ctx, a, k, dim, keepdim):
        x = a._data
        d = _wrap_dim(dim, x.ndim, "kthvalue") if x.ndim else 0
        n = x.shape[d] if x.ndim else 1
        if not 1 <= k <= n:
            raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}\nkthvalue: k={k} but the "
                             f"tensor has {n} elements along dim {d} (k counts from 1).")
        if not x.ndim:
            return _pick(ctx, a, 0, np.zeros((), np.int64))
        order = np.argsort(_sort_key(x, False), axis=d, kind="stable")
        idx = np.take(order, [k - 1], axis=d)
        return _pick(ctx, a, d, idx, keepdim)


def _median_index(x: np.ndarray, d: int) -> np.ndarray:
    """Index along d of the lower median of each slice, or of its first NaN (the median of a slice with NaN is NaN)."""
    n = x.shape[d]
    order = np.argsort(_sort_key(x, False), axis=d, kind="stable")
    idx = np.take(order, [(n - 1) // 2], axis=d)
    if x.dtype.kind == "f":
        nan = np.isnan(x)
        has_nan = nan.any(axis=d, keepdims=True)
        idx = np.where(has_nan, np.expand_dims(nan.argmax(axis=d), d), idx)
    return idx


class MedianDim(_PickAlong):
    _node_name = "MedianBackward1"

    @staticmethod
    def forward(ctx, a, dim, keepdim):
        x = a._data
        if not x.ndim:
            _wrap_dim(dim, 0, "median")
            return _pick(ctx, a, 0, np.zeros((), np.int64))
        d = _wrap_dim(dim, x.ndim, "median")
        if x.shape[d] == 0:
            raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
        return _pick(ctx, a, d, _median_index(x, d), keepdim)


class Median(Function):
    """The lower median of all elements (a 0-d tensor); the gradient goes to that element."""

    _node_name = "MedianBackward0"

    @staticmethod
    def forward(ctx, a):
        x = a._data
        if x.size == 0:
            return _wrap(_asarray(np.nan, dtype=x.dtype))
        flat = x.reshape(-1)
        i = int(_median_index(flat, 0)[0])
        ctx.shape, ctx.i = x.shape, np.unravel_index(i, x.shape) if x.ndim else ()
        return _wrap(_asarray(flat[i]))

    @staticmethod
    def backward(ctx, g):
        from .shape import IndexBackward

        return IndexBackward.apply(g, ctx.shape, tuple(int(k) for k in ctx.i))


# --- plain functions ----------------------------------------------------------------------------------------
def sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False):
    values, indices = (SortStable if stable else Sort).apply(input, dim, descending, stable)
    return RETURN_TYPES["sort"](values, indices)


def argsort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
    x = input._data
    if not x.ndim:
        _wrap_dim(dim, 0, "argsort")
        return _wrap(np.zeros((), np.int64))
    d = _wrap_dim(dim, x.ndim, "argsort")
    return _wrap(np.argsort(_sort_key(x, descending), axis=d, kind="stable").astype(np.int64))


def msort(input: Tensor) -> Tensor:
    return sort(input, 0).values


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):  # noqa: A002
    values, indices = Topk.apply(input, int(k), dim, largest, sorted)
    return RETURN_TYPES["topk"](values, indices)


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False):
    values, indices = Kthvalue.apply(input, int(k), dim, keepdim)
    return RETURN_TYPES["kthvalue"](values, indices)


def median(input: Tensor, dim: int | None = None, keepdim: bool = False):
    if dim is None:
        if input._data.__class__ is _BatchedArray and input._data.size:  # vmap: each sample's own position
            return MedianDim.apply(input.reshape(-1), 0, False)[0]
        return Median.apply(input)
    values, indices = MedianDim.apply(input, dim, keepdim)
    return RETURN_TYPES["median"](values, indices)


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
           dim: int | None = None):
    """The distinct values (sorted), as PyTorch; not differentiable."""
    x = input._data
    axis = None if dim is None else _wrap_dim(dim, x.ndim, "unique")
    values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True, axis=axis)
    out = [_wrap(values)]
    if return_inverse:
        out.append(_wrap(inverse.reshape(x.shape if axis is None else (-1,)).astype(np.int64)))
    if return_counts:
        out.append(_wrap(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None):
    x = input._data.reshape(-1) if dim is None else input._data
    if dim is not None and x.ndim != 1:
        raise NotImplementedError("unique_consecutive with dim is not implemented by minigrad (only 1-D / dim=None)")
    if x.size == 0:
        starts = np.zeros(0, bool)
    else:
        starts = np.concatenate([[True], x[1:] != x[:-1]])
    out = [_wrap(x[starts])]
    if return_inverse:
        out.append(_wrap((np.cumsum(starts) - 1).reshape(input._data.shape).astype(np.int64)))
    if return_counts:
        out.append(_wrap(np.diff(np.append(np.flatnonzero(starts), x.size)).astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def nonzero(input: Tensor, *, as_tuple: bool = False):
    x = input._data
    if as_tuple:
        if not x.ndim:
            return (_wrap(np.zeros(int(bool(x)), np.int64)),)
        return tuple(_wrap(i.astype(np.int64)) for i in np.nonzero(x))
    if not x.ndim:
        return _wrap(np.zeros((int(bool(x)), 0), np.int64))
    return _wrap(np.argwhere(x).astype(np.int64))


def argwhere(input: Tensor) -> Tensor:
    return nonzero(input)
