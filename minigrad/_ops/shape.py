"""Shape and indexing operations. Most forwards return views that share memory (and the
in-place version counter) with their input, as PyTorch's do."""
from __future__ import annotations

import numpy as np

from .._functorch.batched import asarray as _asarray
from .._functorch.batched import VmapError as _VmapError
from .._functorch.batched import copy_for as _copy_for
from .._functorch.batched import getitem_lifted as _getitem_lifted
from .._functorch.batched import zeros_for as _zeros_for  # np.asarray, batched arrays kept (vmap)

from .._tensor import Tensor, _wrap_dim
from ..autograd.function import Function

_wrap = Tensor._wrap


def _size_args(args) -> tuple:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


class View(Function):
    _node_name = "ViewBackward0"

    @staticmethod
    def forward(ctx, a, shape):
        ctx.shape = a._data.shape
        try:
            arr = a._data.reshape(shape)
        except ValueError:
            raise RuntimeError(
                f"shape '{list(shape)}' is invalid for input of size {a._data.size}\n"
                f"reshape/view: a tensor of shape {list(a._data.shape)} has {a._data.size} elements, and the "
                "new shape must have the same number (use -1 for one inferred dimension)."
            ) from None
        return a._view_of(arr, ("reshape", arr.shape)) if np.shares_memory(arr, a._data) else _wrap(arr)

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.shape), None


class Transpose(Function):
    _node_name = "TransposeBackward0"

    @staticmethod
    def forward(ctx, a, d0, d1):
        n = a._data.ndim
        d0, d1 = _wrap_dim(d0, n, "transpose"), _wrap_dim(d1, n, "transpose")
        ctx.d0, ctx.d1 = d0, d1
        return a._view_of(np.swapaxes(a._data, d0, d1), ("transpose", d0, d1)) if n >= 2 else a._view_of(
            a._data, ("reshape", a._data.shape))

    @staticmethod
    def backward(ctx, g):
        return g.transpose(ctx.d0, ctx.d1), None, None


class Permute(Function):
    _node_name = "PermuteBackward0"

    @staticmethod
    def forward(ctx, a, dims):
        n = a._data.ndim
        if len(dims) == n:
            dims = tuple(_wrap_dim(d, n, "permute") for d in dims)
        if sorted(dims) != list(range(n)):
            raise RuntimeError(
                f"permute(sparse_coo): number of dimensions in the tensor input does not match the length of "
                f"the desired ordering of dimensions i.e. input.dim() = {n} is not equal to len(dims) = "
                f"{len(dims)}\npermute needs one entry per dimension of the tensor (shape {list(a._data.shape)})."
                if len(dims) != n else f"permute(): duplicate dims are not allowed.\nGot {list(dims)}."
            )
        ctx.inverse = tuple(np.argsort(dims))
        return a._view_of(np.transpose(a._data, dims), ("permute", dims))

    @staticmethod
    def backward(ctx, g):
        return g.permute(ctx.inverse), None


class Expand(Function):
    _node_name = "ExpandBackward0"

    @staticmethod
    def forward(ctx, a, shape):
        lead = len(shape) - a._data.ndim
        shape = tuple(a._data.shape[i - lead] if s == -1 else s for i, s in enumerate(shape))
        try:
            return a._view_of(np.broadcast_to(a._data, shape), ("expand", shape))
        except ValueError:
            src = (1,) * lead + a._data.shape
            bad = [i for i in range(len(shape)) if i < len(src) and src[i] != 1 and src[i] != shape[i]]
            d = bad[0] if bad else 0
            raise RuntimeError(
                f"The expanded size of the tensor ({shape[d] if bad else '?'}) must match the existing size "
                f"({src[d] if bad else '?'}) at non-singleton dimension {d}.  Target sizes: {list(shape)}.  "
                f"Tensor sizes: {list(a._data.shape)}\nexpand can only repeat dimensions of size 1 (or add new "
                "leading ones); use repeat/cat to copy data along a larger dimension."
            ) from None

    @staticmethod
    def backward(ctx, g):
        return g, None  # the engine sums the gradient back to the input's shape


class Squeeze(Function):
    _node_name = "SqueezeBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        ctx.shape = a._data.shape
        if dim is None:
            return a._view_of(a._data.squeeze(), ("squeeze", None))
        d = _wrap_dim(dim, a._data.ndim, "squeeze")
        if a._data.ndim and a._data.shape[d] == 1:
            return a._view_of(a._data.squeeze(d), ("squeeze", d))
        return a._view_of(a._data, ("reshape", a._data.shape))

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.shape), None


class SqueezeDim(Squeeze):
    _node_name = "SqueezeBackward1"


class Unsqueeze(Function):
    _node_name = "UnsqueezeBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        d = _wrap_dim(dim, a._data.ndim + 1, "unsqueeze")
        ctx.d = d
        return a._view_of(np.expand_dims(a._data, d), ("unsqueeze", d))

    @staticmethod
    def backward(ctx, g):
        return g.squeeze(ctx.d), None


class Cat(Function):
    _node_name = "CatBackward0"

    @staticmethod
    def forward(ctx, dim, *tensors):
        if not tensors:
            raise ValueError("torch.cat(): expected a non-empty list of Tensors")
        arrays = [t._data for t in tensors]
        skipped = ()
        if any(x.ndim != arrays[0].ndim for x in arrays):
            # PyTorch's legacy rule: 1-d empty tensors are skipped (``out = torch.tensor([])`` then
            # ``out = torch.cat([out, row])`` in a loop).
            skipped = tuple(k for k, x in enumerate(arrays) if x.shape == (0,))
            if len(skipped) < len(arrays):
                arrays = [x for x in arrays if x.shape != (0,)]
            else:
                skipped = ()
        dtype = None
        if any(x.dtype != arrays[0].dtype for x in arrays):
            dtype = cat_dtype([t._data.dtype for t in tensors])
        d = _wrap_dim(dim, arrays[0].ndim, "cat")
        try:
            out = np.concatenate(arrays, axis=d, dtype=dtype, casting="unsafe")
        except ValueError:
            tensors = [t for k, t in enumerate(tensors) if k not in skipped]
            for k, t in enumerate(tensors):
                if t._data.ndim == 0:
                    raise RuntimeError(f"zero-dimensional tensor (at position {k}) cannot be concatenated\ncat joins "
                                       "tensors along an existing dimension; use stack for 0-d tensors.") from None
            shapes = ", ".join(str(list(t._data.shape)) for t in tensors)
            first = tensors[0]._data.shape
            detail = ""
            for k, t in enumerate(tensors[1:], 1):
                s = t._data.shape
                if len(s) != len(first):
                    detail = (f"Tensors must have same number of dimensions: got {len(first)} and {len(s)}")
                    break
                off = [i for i in range(len(s)) if i != d and s[i] != first[i]]
                if off:
                    detail = (f"Sizes of tensors must match except in dimension {d}. Expected size {first[off[0]]} "
                              f"but got size {s[off[0]]} for tensor number {k} in the list.")
                    break
            raise RuntimeError(
                f"{detail or f'Sizes of tensors must match except in dimension {d}.'}\ncat got shapes {shapes}: "
                f"all dimensions other than dim={d} must be equal."
            ) from None
        ctx.d, ctx.skipped = d, skipped
        ctx.sizes = [0 if k in skipped else t._data.shape[d] for k, t in enumerate(tensors)]
        ctx.dtypes = [t.dtype for t in tensors] if dtype is not None else None
        return _wrap(out)

    @staticmethod
    def backward(ctx, g):
        grads, start = [None], 0
        for k, (size, need) in enumerate(zip(ctx.sizes, ctx.needs_input_grad[1:])):
            if not need:
                grads.append(None)
            elif k in ctx.skipped:
                grads.append(_wrap(np.zeros_like(g._data, shape=(0,))))
            else:
                gk = g.narrow(ctx.d, start, size)
                grads.append(gk if ctx.dtypes is None or ctx.dtypes[k] == gk.dtype else gk.to(ctx.dtypes[k]))
            start += size
        return tuple(grads)


def cat_dtype(dtypes) -> np.dtype:
    """PyTorch's promotion among tensors: the floating dtypes decide if there are any, else the integer ones
    (int64 with float32 is float32, where NumPy would say float64)."""
    floats = [d for d in dtypes if d.kind == "f"]
    return np.result_type(*(floats or dtypes))


class Stack(Function):
    _node_name = "StackBackward0"

    @staticmethod
    def forward(ctx, dim, *tensors):
        if not tensors:
            raise RuntimeError("stack expects a non-empty TensorList")
        d = _wrap_dim(dim, tensors[0]._data.ndim + 1, "stack")
        dtype = None
        if any(t._data.dtype != tensors[0]._data.dtype for t in tensors):
            dtype = cat_dtype([t._data.dtype for t in tensors])
        try:
            out = np.stack([t._data for t in tensors], axis=d, dtype=dtype, casting="unsafe")
        except ValueError:
            shapes = ", ".join(str(list(t._data.shape)) for t in tensors)
            k = next((k for k, t in enumerate(tensors) if t._data.shape != tensors[0]._data.shape), 1)
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(tensors[0]._data.shape)} at entry 0 and "
                f"{list(tensors[k]._data.shape)} at entry {k}\nstack puts tensors of one shape side by side "
                f"(got shapes {shapes}); use cat to join tensors along an existing dimension."
            ) from None
        ctx.d = d
        ctx.dtypes = [t.dtype for t in tensors] if dtype is not None else None
        return _wrap(out)

    @staticmethod
    def backward(ctx, g):
        grads = [g.select(ctx.d, i) if need else None for i, need in enumerate(ctx.needs_input_grad[1:])]
        if ctx.dtypes is not None:  # each input's gradient in its own dtype
            grads = [gi if gi is None or gi.dtype == dt else gi.to(dt) for gi, dt in zip(grads, ctx.dtypes)]
        return (None, *grads)


def _convert_index(index):
    """Tensors inside an index become arrays (bool tensors stay masks)."""
    if isinstance(index, tuple):
        return tuple(_convert_index(i) for i in index)
    if isinstance(index, Tensor):
        return index._data
    if isinstance(index, list):
        return _asarray([i._data if isinstance(i, Tensor) else i for i in index])
    return index


def _is_basic(index) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return all(i is None or i is Ellipsis or isinstance(i, (int, slice, np.integer)) for i in items)


class Index(Function):
    _node_name = "IndexBackward0"

    @staticmethod
    def forward(ctx, a, index):
        ctx.shape, ctx.index = a._data.shape, index
        try:
            arr = a._data[index]
        except _VmapError:  # a shared tensor indexed by per-sample indices (vmap)
            arr = _getitem_lifted(a._data, index)
        except IndexError as e:
            msg = str(e).replace(" for axis ", " for dimension ")
            raise IndexError(f"{msg}\nThe tensor has shape {list(a._data.shape)}; valid indices along a dimension of "
                             "size n are 0 ... n-1 (or -n ... -1).") from None
        if _is_basic(index):
            return a._view_of(arr, ("index", index))
        return _wrap(arr)

    @staticmethod
    def backward(ctx, g):
        return IndexBackward.apply(g, ctx.shape, ctx.index), None


class Select(Index):
    """``x[i]`` (integers only in the index, or the last effective item an integer)."""

    _node_name = "SelectBackward0"


class Slice(Index):
    _node_name = "SliceBackward0"


class IndexUnsqueeze(Index):
    _node_name = "UnsqueezeBackward0"


class Alias(Index):
    _node_name = "AliasBackward0"


def _basic_index_cls(index) -> type:
    """The Index class whose node name PyTorch would show for a basic index (advanced: Index)."""
    if not _is_basic(index):
        return Index
    items = index if isinstance(index, tuple) else (index,)
    for item in reversed(items):
        if item is None:
            return IndexUnsqueeze
        if isinstance(item, slice):
            if item != slice(None):
                return Slice
        elif item is not Ellipsis:
            return Select
    return Alias


class IndexBackward(Function):
    """Scatter a gradient into zeros of the input's shape (repeated indices add up)."""

    _node_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, g, shape, index):
        ctx.index = index
        out = _zeros_for(shape, g._data.dtype, g._data, index)
        if _is_basic(index):
            out[index] = g._data
        else:
            np.add.at(out, index, g._data)
        return _wrap(out)

    @staticmethod
    def backward(ctx, gg):
        return gg[ctx.index], None, None


def fit_value(target: np.ndarray, index, value):
    """The array to store by ``target[index] = value``: like PyTorch, leading size-1 dims of the
    value are dropped when the value has more dims than the indexed slot (``y[1] = w`` with w of shape [1])."""
    v = value._data if isinstance(value, Tensor) else value
    if isinstance(v, np.ndarray) and v.ndim:
        slot_ndim = target[index].ndim
        lead = v.ndim - slot_ndim
        if lead > 0 and all(s == 1 for s in v.shape[:lead]):
            v = v.reshape(v.shape[lead:])
    return v


class IndexPut(Function):
    """``base[index] = value`` with an advanced index, recorded in the graph (``__setitem__``)."""

    _node_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, base, value, index):
        ctx.index = index
        ctx.value_ndim = value._data.ndim if isinstance(value, Tensor) else 0
        out = _copy_for(base._data, index, value._data if isinstance(value, Tensor) else value)
        out[index] = fit_value(out, index, value)
        return _wrap(out)

    @staticmethod
    def backward(ctx, g):
        g_base = None
        if ctx.needs_input_grad[0]:
            g_base = g.clone()
            g_base[ctx.index] = 0
        g_value = None
        if ctx.needs_input_grad[1]:
            g_value = g[ctx.index]
            missing = ctx.value_ndim - g_value._data.ndim
            if missing > 0:  # the value's leading 1s were dropped in forward: put them back
                g_value = g_value.reshape((1,) * missing + g_value._data.shape)
        return g_base, g_value, None


class CopySlices(IndexPut):
    """``base[index] = value`` with a basic index (integers / slices): PyTorch's CopySlices node."""

    _node_name = "CopySlices"


def replay_view(x, steps: tuple, tensor: bool):
    """Take the same view of ``x`` (an ndarray, or a Tensor if ``tensor``) that ``steps`` took of a base.

    On an ndarray every step gives a view (memory shared with ``x``), so writing into the
    result writes into ``x``; on a Tensor the steps are the differentiable view ops.
    """
    for kind, *args in steps:
        if kind == "reshape":
            x = x.reshape(args[0])
        elif kind == "transpose":
            x = x.transpose(*args) if tensor else np.swapaxes(x, *args)
        elif kind == "permute":
            x = x.permute(args[0]) if tensor else np.transpose(x, args[0])
        elif kind == "index":
            x = x[args[0]]
        elif kind == "squeeze":
            x = x.squeeze() if args[0] is None else x.squeeze(args[0])
        elif kind == "unsqueeze":
            x = x.unsqueeze(args[0]) if tensor else np.expand_dims(x, args[0])
        elif kind == "expand":
            x = x.expand(args[0]) if tensor else np.broadcast_to(x, args[0])
        elif kind == "diagonal":
            from .matrix import diagonal_view

            x = x.diagonal(*args) if tensor else diagonal_view(x, *args)
        else:
            raise ValueError(kind)
    return x


class ViewCopySlices(Function):
    """An in-place change of a view, recorded on its base: the base with the view's region
    replaced by ``value`` (PyTorch's CopySlices node, for any chain of view ops)."""

    _node_name = "CopySlices"

    @staticmethod
    def forward(ctx, base, value, steps):
        ctx.steps, ctx.view_shape = steps, value._data.shape
        out = np.copy(base._data, order="K")  # same memory layout, so each replayed step is a view again
        region = replay_view(out, steps, tensor=False)
        if not np.shares_memory(region, out):  # cannot happen for the steps recorded by the view ops
            raise RuntimeError("internal error: replaying the view steps did not give a view")
        region[...] = value._data
        return _wrap(out)

    @staticmethod
    def backward(ctx, g):
        need = ctx.needs_input_grad
        g_base = g_value = None
        if need[0]:  # the region was overwritten: no gradient flows to the base's old values there
            zeros = _wrap(np.zeros_like(g._data, shape=ctx.view_shape))
            g_base = ViewCopySlices.apply(g, zeros, ctx.steps)
        if need[1]:
            g_value = replay_view(g, ctx.steps, tensor=True)
        return g_base, g_value, None


class Fill(Function):
    _node_name = "FillBackward0"

    @staticmethod
    def forward(ctx, a, value):
        v = value._data if isinstance(value, Tensor) else value
        ctx.value_shape = value._data.shape if isinstance(value, Tensor) else ()
        return _wrap(np.full_like(a._data, v))

    @staticmethod
    def backward(ctx, g):
        # the old values are overwritten: their gradient is 0 (not None, as in PyTorch); a tensor value gets the sum
        ga = g * 0 if ctx.needs_input_grad[0] else None
        gv = g.sum().reshape(ctx.value_shape) if ctx.needs_input_grad[1] else None
        return ga, gv


class Copy(Function):
    _node_name = "CopyBackwards"

    @staticmethod
    def forward(ctx, a, src):
        return _wrap(np.broadcast_to(src._data, a._data.shape).astype(a._data.dtype))

    @staticmethod
    def backward(ctx, g):
        return None, g
