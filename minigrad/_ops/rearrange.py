"""Rearranging elements: flip, roll, repeat / tile / repeat_interleave, chunk / split / unbind,
the stacks (vstack, hstack, dstack), movedim, unflatten and atleast_nd.

split, chunk and unbind are one node with several outputs (PyTorch's SplitBackward0 /
SplitWithSizesBackward0 / UnbindBackward0); their pieces are views of the input, so an in-place
change of a piece shows in the input (and is recorded on it), as in PyTorch.
"""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _wrap_dim
from ..autograd.function import Function
from .shape import Cat, Permute, Stack, Unsqueeze, View

_wrap = Tensor._wrap


def _dims_arg(dims) -> tuple:
    if isinstance(dims, (int, np.integer)):
        return (int(dims),)
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        return tuple(dims[0])
    return tuple(dims)


class Flip(Function):
    _node_name = "FlipBackward0"

    @staticmethod
    def forward(ctx, a, dims):
        n = a._data.ndim
        axes = tuple(_wrap_dim(d, n, "flip") for d in dims)
        if len(set(axes)) != len(axes):
            twice = next(x for x in axes if axes.count(x) > 1)
            raise RuntimeError(f"dim {twice} appears multiple times in the list of dims\nflip: each dim may appear "
                               f"once (got {list(dims)}).")
        ctx.axes = axes
        return _wrap(np.flip(a._data, axes).copy() if n else a._data.copy())  # a copy, as PyTorch's flip

    @staticmethod
    def backward(ctx, g):
        return Flip.apply(g, ctx.axes), None


class Roll(Function):
    _node_name = "RollBackward0"

    @staticmethod
    def forward(ctx, a, shifts, dims):
        x = a._data
        if dims is None:
            if len(shifts) != 1:
                raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
            ctx.shifts, ctx.dims = shifts, None
            return _wrap(np.roll(x.reshape(-1), shifts[0]).reshape(x.shape))
        if len(shifts) != len(dims):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
        if not x.ndim:
            raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
        axes = tuple(_wrap_dim(d, x.ndim, "roll") for d in dims)
        ctx.shifts, ctx.dims = shifts, axes
        return _wrap(np.roll(x, shifts, axes))

    @staticmethod
    def backward(ctx, g):
        return Roll.apply(g, tuple(-s for s in ctx.shifts), ctx.dims), None, None


class Repeat(Function):
    """``x.repeat(*sizes)``: copies of x side by side (NumPy's tile); the gradient sums the copies."""

    _node_name = "RepeatBackward0"

    @staticmethod
    def forward(ctx, a, sizes):
        x = a._data
        if len(sizes) < x.ndim:
            raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                               f"tensor\nrepeat got {len(sizes)} sizes {list(sizes)} for a tensor of shape "
                               f"{list(x.shape)}: give one per dimension (leading extra ones add dimensions).")
        if any(s < 0 for s in sizes):
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: {list(sizes)}")
        ctx.shape, ctx.sizes = x.shape, sizes
        return _wrap(np.tile(x.reshape((1,) * (len(sizes) - x.ndim) + x.shape), sizes))

    @staticmethod
    def backward(ctx, g):
        sizes = ctx.sizes
        padded = (1,) * (len(sizes) - len(ctx.shape)) + ctx.shape
        split = []
        for r, s in zip(sizes, padded):
            split += [r, s]
        g = g.reshape(split).sum(tuple(range(0, 2 * len(sizes), 2)))
        return g.reshape(ctx.shape), None


def _piece(a: Tensor, idx: tuple) -> Tensor:
    """One output of split / unbind: a view of ``a``, marked so that changing it in place while recording is
    PyTorch's error (a function that returns several views does not allow it)."""
    v = a._view_of(a._data[idx], ("index", idx))
    v._set_extra("multi_view", True)
    return v


class UnsafeView(Function):
    """reshape of a copy (what reshape records when the input's layout allows no view): not a view."""

    _node_name = "UnsafeViewBackward0"

    @staticmethod
    def forward(ctx, a, shape):
        ctx.shape = a._data.shape
        try:
            return _wrap(a._data.reshape(shape))
        except ValueError:
            return View.forward(ctx, a, shape)  # raises View's error

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.shape), None


class Split(Function):
    """Pieces of ``a`` along ``d`` with the given sizes, as views (one node, one output per piece)."""

    _node_name = "SplitBackward0"

    @staticmethod
    def forward(ctx, a, sizes, d):
        ctx.d = d
        outs = []
        start = 0
        for s in sizes:
            idx = (slice(None),) * d + (slice(start, start + s),)
            outs.append(_piece(a, idx))
            start += s
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        return Cat.apply(ctx.d, *grads), None, None


class SplitWithSizes(Split):
    _node_name = "SplitWithSizesBackward0"


class Unbind(Function):
    """The slices of ``a`` along ``d``, as views."""

    _node_name = "UnbindBackward0"

    @staticmethod
    def forward(ctx, a, d):
        ctx.d = d
        outs = []
        for i in range(a._data.shape[d]):
            idx = (slice(None),) * d + (i,)
            outs.append(_piece(a, idx))
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        return Stack.apply(ctx.d, *grads), None


# --- plain functions ------------------------------------------------------------------------------------------
def flip(input: Tensor, *dims) -> Tensor:
    return Flip.apply(input, _dims_arg(dims))


def fliplr(input: Tensor) -> Tensor:
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return Flip.apply(input, (1,))


def flipud(input: Tensor) -> Tensor:
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return Flip.apply(input, (0,))


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    shifts = _dims_arg(shifts)
    return Roll.apply(input, shifts, None if dims is None else _dims_arg(dims))


def repeat(a: Tensor, *sizes) -> Tensor:
    return Repeat.apply(a, _dims_arg(sizes))


def tile(input: Tensor, dims) -> Tensor:
    dims = _dims_arg(dims)
    return Repeat.apply(input, (1,) * (input._data.ndim - len(dims)) + dims)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None) -> Tensor:
    """Each element (or slice along ``dim``) repeated ``repeats`` times, in place of PyTorch's op of the same name."""
    if repeats is None:  # repeat_interleave(counts): indices 0, 1, ... each repeated counts[i] times
        counts = input._data
        return _wrap(np.repeat(np.arange(counts.shape[0], dtype=np.int64), counts))
    if dim is None:
        input = input.reshape(-1)
        dim = 0
    d = _wrap_dim(dim, input._data.ndim, "repeat_interleave")
    n = input._data.shape[d] if input._data.ndim else 1
    if isinstance(repeats, Tensor) and repeats._data.ndim == 1 and repeats._data.shape[0] != 1:
        r = repeats._data
        if r.shape[0] != n:
            raise RuntimeError("repeats must have the same size as input along dim\nrepeat_interleave: "
                               f"{r.shape[0]} repeats for {n} entries along dim {d}.")
        from .indexing import IndexSelect

        return IndexSelect.apply(input, d, _wrap(np.repeat(np.arange(n, dtype=np.int64), r)))
    r = int(repeats.item() if isinstance(repeats, Tensor) else repeats)
    if r < 0:
        raise RuntimeError("repeats can not be negative\nrepeat_interleave: got repeats=" + str(r))
    shape = input._data.shape
    x = Unsqueeze.apply(input, d + 1)
    x = x.expand(shape[:d + 1] + (r,) + shape[d + 1:])
    return View.apply(x, shape[:d] + (shape[d] * r,) + shape[d + 1:])


def _check_dim_tensor(a: Tensor, op: str) -> None:
    if a._data.ndim == 0:
        raise RuntimeError(f"{op} expects at least a 1-dimensional tensor")


def split(tensor: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    _check_dim_tensor(tensor, "split")
    d = _wrap_dim(dim, tensor._data.ndim, "split")
    n = tensor._data.shape[d]
    if isinstance(split_size_or_sections, (int, np.integer)):
        size = int(split_size_or_sections)
        if size < 0 or (size == 0 and n):
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
                               if size == 0 else f"split expects split_size be non-negative, but got split_size={size}")
        sizes = [size] * (n // size) + ([n % size] if n % size else []) if size else [0]
        return Split.apply(tensor, tuple(sizes), d)
    sizes = [int(s) for s in split_size_or_sections]
    if sum(sizes) != n or any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                           f"dimension {d}), but got split_sizes={sizes}")
    return SplitWithSizes.apply(tensor, tuple(sizes), d)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    _check_dim_tensor(input, "chunk")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _wrap_dim(dim, input._data.ndim, "chunk")
    n = input._data.shape[d]
    size = -(-n // chunks)  # ceil: PyTorch's chunk size (so it may return fewer than `chunks` pieces)
    return split(input, size, d) if size else split(input, [0] * chunks, d)


def tensor_split(input: Tensor, indices_or_sections, dim: int = 0) -> tuple:
    d = _wrap_dim(dim, input._data.ndim, "tensor_split")
    n = input._data.shape[d]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
    else:
        bounds = [0] + [min(max(int(i), 0), n) for i in indices_or_sections] + [n]
        sizes = [max(b - a_, 0) for a_, b in zip(bounds, bounds[1:])]
    return SplitWithSizes.apply(input, tuple(sizes), d)


def unbind(input: Tensor, dim: int = 0) -> tuple:
    if input._data.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return Unbind.apply(input, _wrap_dim(dim, input._data.ndim, "unbind"))


def movedim(input: Tensor, source, destination) -> Tensor:
    n = input._data.ndim
    src = [_wrap_dim(s, n, "movedim") for s in _dims_arg(source)]
    dst = [_wrap_dim(s, n, "movedim") for s in _dims_arg(destination)]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(_dims_arg(source))} dims) "
                           f"should contain the same number of dims as destination ({list(_dims_arg(destination))} "
                           "dims)")
    order = [i for i in range(n) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return Permute.apply(input, tuple(order))


def unflatten(input: Tensor, dim: int, sizes) -> Tensor:
    d = _wrap_dim(dim, input._data.ndim, "unflatten")
    shape = input._data.shape
    sizes = tuple(sizes)
    if -1 in sizes:
        known = int(np.prod([s for s in sizes if s != -1]))
        sizes = tuple(shape[d] // known if s == -1 else s for s in sizes)
    if int(np.prod(sizes)) != shape[d]:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                           f"({shape[d]}) in the input tensor")
    return View.apply(input, shape[:d] + sizes + shape[d + 1:])


def atleast_1d(a: Tensor) -> Tensor:
    return View.apply(a, (1,)) if a._data.ndim == 0 else a


def atleast_2d(a: Tensor) -> Tensor:
    n = a._data.ndim
    return View.apply(a, (1, 1)) if n == 0 else Unsqueeze.apply(a, 0) if n == 1 else a


def atleast_3d(a: Tensor) -> Tensor:
    n = a._data.ndim
    if n == 0:
        return View.apply(a, (1, 1, 1))
    if n == 1:
        return Unsqueeze.apply(Unsqueeze.apply(a, 0), -1)
    return Unsqueeze.apply(a, -1) if n == 2 else a


def vstack(tensors) -> Tensor:
    return Cat.apply(0, *[atleast_2d(t) for t in tensors])


row_stack = vstack


def hstack(tensors) -> Tensor:
    ts = [atleast_1d(t) for t in tensors]
    return Cat.apply(0 if ts and ts[0]._data.ndim == 1 else 1, *ts)


def dstack(tensors) -> Tensor:
    return Cat.apply(2, *[atleast_3d(t) for t in tensors])


def column_stack(tensors) -> Tensor:
    ts = [t.reshape(-1, 1) if t._data.ndim <= 1 else t for t in tensors]
    return Cat.apply(1, *ts)
