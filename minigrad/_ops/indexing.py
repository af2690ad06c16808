"""Index-based ops: gather / scatter / scatter_add, index_select / index_add / index_fill,
masked_fill / masked_select, take / take_along_dim, and their in-place forms.

Each pair of ops is the other's gradient (gather's backward is a scatter_add, scatter_add's
is a gather; index_select's is an index_add...), so second derivatives come for free. Repeated
indices accumulate in the gradients (NumPy's ``add.at``).
"""
from __future__ import annotations

import numpy as np

from .._functorch.batched import asarray as _asarray
from .._functorch.batched import copy_for as _copy_for
from .._functorch.batched import values_of as _values_of
from .._functorch.batched import values_of as _values_of  # np.asarray, batched arrays kept (vmap)

from .._tensor import Tensor, _wrap_dim
from ..autograd.function import Function
from .arithmetic import _broadcast_error
from .reduction import _TORCH_TYPE

_wrap = Tensor._wrap
_C_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool", "float32": "float", "float64": "double", "float16": "c10::Half"}


def _index_array(index: Tensor, op: str, allow_int32: bool = True) -> np.ndarray:
    i = index._data
    if i.dtype != np.int64 and not (allow_int32 and i.dtype == np.int32):
        kinds = "int32/int64" if allow_int32 else "int64"
        raise RuntimeError(f"{op}(): Expected dtype {kinds} for index\n{op}: the index has dtype {index.dtype}; "
                           "make it with dtype=minigrad.long.")
    return i


def _check_bounds(i: np.ndarray, size: int, d: int) -> None:
    i = _values_of(i)  # every sample's indices, under vmap
    if i.size and (i.max() >= size or i.min() < -size):
        bad = int(i.max() if i.max() >= size else i.min())
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")


def _full_index(i: np.ndarray, d: int) -> tuple:
    """The NumPy index that addresses, for every position p of ``i``, the element p with coordinate d replaced by i[p]."""
    grids = np.indices(i.shape, sparse=True)
    return tuple(i if k == d else grids[k] for k in range(i.ndim))


def _gather_setup(op: str, x: np.ndarray, dim: int, index: Tensor):
    i = _index_array(index, op)
    if x.ndim == 0 and i.ndim <= 1:
        return 0, i.reshape(i.shape)
    if i.ndim != max(x.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor\n"
                           f"{op}: input shape {list(x.shape)}, index shape {list(i.shape)}.")
    d = _wrap_dim(dim, x.ndim, op)
    for k in range(x.ndim):
        if k != d and i.shape[k] > x.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(i.shape)} to be smaller "
                               f"than self {list(x.shape)} apart from dimension {d}")
    _check_bounds(i, x.shape[d], d)
    return d, i


class Gather(Function):
    """out[p] = input[p with coordinate ``dim`` replaced by index[p]]."""

    _node_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, a, dim, index):
        x = a._data
        d, i = _gather_setup("gather", x, dim, index)
        ctx.shape, ctx.d, ctx.index = x.shape, d, index
        if x.ndim == 0:
            return _wrap(x.copy())
        return _wrap(x[_full_index(i, d)])

    @staticmethod
    def backward(ctx, g):
        if not ctx.shape:
            return g, None, None
        zeros = _wrap(np.zeros_like(g._data, shape=ctx.shape))
        return ScatterAdd.apply(zeros, ctx.d, ctx.index, g), None, None


def _scatter_setup(op: str, a: Tensor, dim: int, index: Tensor, src):
    x = a._data
    d, i = _gather_setup(op, x, dim, index)
    if isinstance(src, Tensor):
        s = src._data
        if s.dtype != x.dtype:
            raise RuntimeError(f"{op}(): Expected self.dtype to be equal to src.dtype\n{op}: self has dtype {a.dtype}, "
                               f"src has dtype {src.dtype}.")
        if s.ndim != i.ndim or any(si > ss for si, ss in zip(i.shape, s.shape)):
            raise RuntimeError(f"Expected index {list(i.shape)} to be smaller than self {list(x.shape)} apart from "
                               f"dimension {d} and to be smaller size than src {list(s.shape)}")
        s = s[tuple(slice(0, n) for n in i.shape)]
    else:
        s = _asarray(src, dtype=x.dtype)
    return d, i, s


class ScatterAdd(Function):
    """out = input, then out[p with coordinate dim = index[p]] += src[p] (repeats accumulate)."""

    _node_name = "ScatterAddBackward0"

    @staticmethod
    def forward(ctx, a, dim, index, src):
        d, i, s = _scatter_setup("scatter_add", a, dim, index, src)
        ctx.d, ctx.index, ctx.src_shape = d, index, src._data.shape
        out = _copy_for(a._data, i, s)
        if out.ndim:
            np.add.at(out, _full_index(i, d), s)
        else:
            out += s.reshape(())
        return _wrap(out)

    @staticmethod
    def backward(ctx, g):
        gs = None
        if ctx.needs_input_grad[3]:
            gs = Gather.apply(g, ctx.d, ctx.index)
            if gs._data.shape != ctx.src_shape:  # src was larger than the index: its other entries get 0
                gs = _pad_to(gs, ctx.src_shape)
        return g, None, None, gs


def _pad_to(t: Tensor, shape: tuple) -> Tensor:
    from .shape import CopySlices

    zeros = _wrap(np.zeros(shape, t._data.dtype))
    return CopySlices.apply(zeros, t, tuple(slice(0, n) for n in t._data.shape))


class Scatter(Function):
    """out = input, then out[p with coordinate dim = index[p]] = src[p] (src a tensor: ScatterBackward0)."""

    _node_name = "ScatterBackward0"

    @staticmethod
    def forward(ctx, a, dim, index, src):
        d, i, s = _scatter_setup("scatter", a, dim, index, src)
        ctx.d, ctx.index = d, index
        ctx.src_shape = src._data.shape if isinstance(src, Tensor) else None
        out = _copy_for(a._data, i, s)
        if out.ndim:
            out[_full_index(i, d)] = s
        else:
            out[...] = s.reshape(())
        return _wrap(out)

    @staticmethod
    def backward(ctx, g):
        need = ctx.needs_input_grad
        ga = gs = None
        if need[0]:  # the overwritten entries get no gradient
            ga = Scatter.apply(g, ctx.d, ctx.index, 0.0)
        if len(need) > 3 and need[3]:
            gs = Gather.apply(g, ctx.d, ctx.index)
            if gs._data.shape != ctx.src_shape:
                gs = _pad_to(gs, ctx.src_shape)
        return ga, None, None, gs


class ScatterValue(Scatter):
    _node_name = "ScatterBackward1"


class ScatterReduceAdd(Function):
    """``scatter(..., reduce='add')`` / ``'multiply'`` (PyTorch's legacy reductions, without gradient)."""

    _node_name = "ScatterBackward0"

    @staticmethod
    def forward(ctx, a, dim, index, src, reduce):
        d, i, s = _scatter_setup("scatter", a, dim, index, src)
        out = _copy_for(a._data, i, s)
        (np.add if reduce == "add" else np.multiply).at(out, _full_index(i, d), s)
        return _wrap(out)

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("the derivative for 'scatter' with a reduce argument is not implemented\nUse scatter_add "
                           "(differentiable) instead of scatter(..., reduce='add').")


def _index_vector(op: str, index: Tensor, n: int, d: int, ndim: int = 1) -> np.ndarray:
    i = index._data
    if i.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{op}(): Expected dtype int32 or int64 for index\n{op}: the index has dtype {index.dtype}.")
    if i.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector\n{op}: got an index of shape {list(i.shape)}.")
    low = -n if op == "index_fill" else 0  # only index_fill counts from the end, as in PyTorch
    if i.size and (_values_of(i).max() >= n or _values_of(i).min() < low):
        bad = int(_values_of(i).max() if _values_of(i).max() >= n else _values_of(i).min())
        hint = f"\n{op}: indices along dim {d} must be in [{low}, {n - 1}]."
        # PyTorch's kernels word it three ways; the first line is theirs
        if op == "index_select" and d > 0:
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={n}{hint}")
        if op == "index_fill" or (op == "index_add" and ndim > 1):
            raise (IndexError if op == "index_fill" else RuntimeError)(
                f"index {bad} is out of bounds for dimension {d} with size {n}{hint}")
        raise IndexError(f"index out of range in self{hint}")
    return i.reshape(-1)


class IndexSelect(Function):
    """The slices ``index`` of the input along ``dim`` (repeats allowed)."""

    _node_name = "IndexSelectBackward0"

    @staticmethod
    def forward(ctx, a, dim, index):
        x = a._data
        if x.ndim == 0:
            _index_vector("index_select", index, 1, 0)
            ctx.d, ctx.index, ctx.shape = 0, index, ()
            return _wrap(x.copy())
        d = _wrap_dim(dim, x.ndim, "index_select")
        i = _index_vector("index_select", index, x.shape[d], d)
        ctx.d, ctx.index, ctx.shape = d, index, x.shape
        return _wrap(np.take(x, i, axis=d))

    @staticmethod
    def backward(ctx, g):
        if not ctx.shape:
            return g, None, None
        zeros = _wrap(np.zeros_like(g._data, shape=ctx.shape))
        return IndexAdd.apply(zeros, ctx.d, ctx.index, g, 1), None, None


class IndexAdd(Function):
    """out = input; out[index[k] along dim] += alpha * source[k along dim]."""

    _node_name = "IndexAddBackward0"

    @staticmethod
    def forward(ctx, a, dim, index, source, alpha):
        x, s = a._data, source._data
        d = _wrap_dim(dim, x.ndim, "index_add")
        i = _index_vector("index_add", index, x.shape[d] if x.ndim else 1, d, x.ndim)
        expected = x.shape[:d] + (i.shape[0],) + x.shape[d + 1:] if x.ndim else ()
        if s.shape != expected and not (x.ndim == 1 and s.ndim == 0 and i.shape[0] == 1):
            raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. "
                               f"Got self.shape = {list(x.shape)} source.shape = {list(s.shape)}")
        ctx.d, ctx.index, ctx.alpha = d, index, alpha
        out = _copy_for(x, i, s)
        np.add.at(out, (slice(None),) * d + (i,), s.reshape(expected) * alpha if alpha != 1 else s.reshape(expected))
        return _wrap(out)

    @staticmethod
    def backward(ctx, g):
        gs = None
        if ctx.needs_input_grad[3]:
            gs = IndexSelect.apply(g, ctx.d, ctx.index)
            if ctx.alpha != 1:
                gs = gs * ctx.alpha
        return g, None, None, gs, None


class IndexFill(Function):
    _node_name = "IndexFillBackward0"

    @staticmethod
    def forward(ctx, a, dim, index, value):
        x = a._data
        d = _wrap_dim(dim, x.ndim, "index_fill")
        i = _index_vector("index_fill", index, x.shape[d] if x.ndim else 1, d)
        ctx.d, ctx.index = d, index
        out = _copy_for(x, i, value)
        out[(slice(None),) * d + (i,)] = value
        return _wrap(out)

    @staticmethod
    def backward(ctx, g):
        return IndexFill.apply(g, ctx.d, ctx.index, 0.0), None, None, None


def _check_mask(mask: Tensor) -> np.ndarray:
    m = mask._data
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_C_NAMES.get(mask.dtype.name, mask.dtype.name)}\nUse a comparison (e.g. x > 0) or "
                           "mask.bool() as the mask.")
    return m


class MaskedFill(Function):
    """``value`` where ``mask`` is True, the input elsewhere (the mask broadcasts)."""

    _node_name = "MaskedFillBackward0"

    @staticmethod
    def forward(ctx, a, mask, value):
        m = _check_mask(mask)
        x = a._data
        v = value._data if isinstance(value, Tensor) else value
        if isinstance(value, Tensor) and value._data.ndim:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
        try:
            out = np.where(m, _asarray(v, dtype=x.dtype), x)
        except ValueError:
            raise _broadcast_error("masked_fill", x, m) from None
        ctx.mask, ctx.shape = m, x.shape
        return _wrap(out)

    @staticmethod
    def backward(ctx, g):
        keep = _wrap(~ctx.mask)
        ga = g * keep if ctx.needs_input_grad[0] else None
        gv = None
        if len(ctx.needs_input_grad) > 2 and ctx.needs_input_grad[2]:
            gv = (g * _wrap(ctx.mask)).sum()
        return ga, None, gv


class MaskedFillTensor(MaskedFill):
    _node_name = "MaskedFillBackward1"


class MaskedSelect(Function):
    """The elements where ``mask`` is True, as a 1-D tensor (mask and input broadcast together)."""

    _node_name = "MaskedSelectBackward0"

    @staticmethod
    def forward(ctx, a, mask):
        m = mask._data
        if m.dtype != np.bool_:
            raise RuntimeError(f"masked_select: expected BoolTensor for mask\nGot a mask of dtype {mask.dtype}.")
        try:
            shape = np.broadcast_shapes(a._data.shape, m.shape)
        except ValueError:
            raise _broadcast_error("masked_select", a._data, m) from None
        mb = np.broadcast_to(m, shape)
        ctx.shape, ctx.mask = a._data.shape, mb
        return _wrap(np.broadcast_to(a._data, shape)[mb])

    @staticmethod
    def backward(ctx, g):
        from .shape import IndexPut

        zeros = _wrap(np.zeros_like(g._data, shape=ctx.mask.shape))
        return IndexPut.apply(zeros, g, ctx.mask), None


class Take(Function):
    """The input read as 1-D, at ``index`` (the result has the index's shape)."""

    _node_name = "TakeBackward0"

    @staticmethod
    def forward(ctx, a, index):
        i = _index_array(index, "take", allow_int32=False)
        n = a._data.size
        if i.size and (_values_of(i).max() >= n or _values_of(i).min() < -n):
            bad = int(_values_of(i).max() if _values_of(i).max() >= n else _values_of(i).min())
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
        ctx.shape, ctx.index = a._data.shape, i
        return _wrap(a._data.reshape(-1)[i])

    @staticmethod
    def backward(ctx, g):
        from .shape import IndexBackward

        return IndexBackward.apply(g.reshape(-1), (int(np.prod(ctx.shape, dtype=np.int64)),),
                                   ctx.index.reshape(-1)).reshape(ctx.shape), None


# --- plain functions ------------------------------------------------------------------------------------------------
def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    return Gather.apply(input, dim, index)


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    if dim is None:
        return Take.apply(input, indices.reshape(-1))
    d = _wrap_dim(dim, input._data.ndim, "take_along_dim")
    sa, si = list(input._data.shape), list(indices._data.shape)
    sa[d] = si[d] = 1
    try:
        common = np.broadcast_shapes(tuple(sa), tuple(si))
    except ValueError:
        raise _broadcast_error("take_along_dim", input._data, indices._data) from None
    a_shape = common[:d] + (input._data.shape[d],) + common[d + 1:]
    i_shape = common[:d] + (indices._data.shape[d],) + common[d + 1:]
    if input._data.shape != a_shape:
        input = input.expand(a_shape)
    idx = indices if indices._data.shape == i_shape else Tensor._wrap(np.broadcast_to(indices._data, i_shape))
    return Gather.apply(input, d, idx)


def take(input: Tensor, index: Tensor) -> Tensor:
    return Take.apply(input, index)


def scatter(input: Tensor, dim: int, index: Tensor, src=None, *, value=None, reduce: str | None = None) -> Tensor:
    if src is None:
        src = value
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError(f"reduce argument must be either add or multiply.\nGot reduce={reduce!r}.")
        return ScatterReduceAdd.apply(input, dim, index, src, reduce)
    return (Scatter if isinstance(src, Tensor) else ScatterValue).apply(input, dim, index, src)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    return ScatterAdd.apply(input, dim, index, src)


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    return IndexSelect.apply(input, dim, index)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    return IndexAdd.apply(input, dim, index, source, alpha)


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    return IndexFill.apply(input, dim, index, value.item() if isinstance(value, Tensor) else value)


def masked_fill(input: Tensor, mask: Tensor, value) -> Tensor:
    return (MaskedFillTensor if isinstance(value, Tensor) else MaskedFill).apply(input, mask, value)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    return MaskedSelect.apply(input, mask)


# in place: the same ops, written into the tensor (version counter, leaf checks: _ops._run_inplace)
def _inplace(a: Tensor, cls, args: tuple, what: str) -> Tensor:
    from . import _run_inplace

    return _run_inplace(a, cls, args, what)


def scatter_(a: Tensor, dim: int, index: Tensor, src=None, *, value=None, reduce: str | None = None) -> Tensor:
    if src is None:
        src = value
    if reduce is not None:
        return _inplace(a, ScatterReduceAdd, (dim, index, src, reduce), "scatter_()")
    return _inplace(a, Scatter if isinstance(src, Tensor) else ScatterValue, (dim, index, src), "scatter_()")


def scatter_add_(a: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    return _inplace(a, ScatterAdd, (dim, index, src), "scatter_add_()")


def index_add_(a: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    return _inplace(a, IndexAdd, (dim, index, source, alpha), "index_add_()")


def index_fill_(a: Tensor, dim: int, index: Tensor, value) -> Tensor:
    return _inplace(a, IndexFill, (dim, index, value.item() if isinstance(value, Tensor) else value), "index_fill_()")


def masked_fill_(a: Tensor, mask: Tensor, value) -> Tensor:
    m = _check_mask(mask)
    if np.broadcast_shapes(m.shape, a._data.shape) != a._data.shape:
        raise RuntimeError(f"output with shape {list(a._data.shape)} doesn't match the broadcast shape "
                           f"{list(np.broadcast_shapes(m.shape, a._data.shape))}")
    return _inplace(a, MaskedFillTensor if isinstance(value, Tensor) else MaskedFill, (mask, value), "masked_fill_()")
