"""The batched array of ``vmap``: a NumPy duck array whose physical array carries the batch dimension.

Why a duck array and not a batched *tensor* class: every built-in op of minigrad, forward and backward,
is NumPy code on ``tensor._data``. When ``_data`` is a ``BatchedArray``, NumPy hands each call to
``__array_ufunc__`` / ``__array_function__`` below, which is where the batching rules live (one per
NumPy function family). So the ops, their backward formulas and the engine are batched without a
single check on the hot path: with no vmap active no ``BatchedArray`` exists and nothing runs here.

Layout: the batch dimension is always the FIRST dimension of the physical array ``_p``; ``shape``,
``ndim`` and ``size`` are the logical ones (the batch dim hidden). Nested vmap nests the arrays: the
physical array of a level-2 array may itself be a level-1 ``BatchedArray``; levels are increasing
integers, and a NumPy call on arrays of several levels is handled by the highest level first (the
innermost vmap), which sees the lower-level arrays as ordinary (unbatched) values.

Rules that need the batch to be looped over instead of vectorized would be listed in ``LOOPED``
(none today: every rule below is vectorized). A NumPy function with no rule raises an error that names
it, so nothing is ever computed per sample silently.
"""
from __future__ import annotations

import numbers
import operator

import numpy as np

# NumPy functions (and ops) computed by a Python loop over the batch, with the reason. Kept empty on
# purpose: every rule below is vectorized; add an entry (and say so in docs) if one ever has to loop.
LOOPED: dict[str, str] = {}


class VmapError(RuntimeError):
    """An operation that vmap cannot batch (PyTorch raises RuntimeError in the same places)."""


ERR_ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() "
            "on a Tensor, please try to rewrite what you're doing with other operations. If error is occurring "
            "somewhere inside PyTorch internals, please file a bug report.")
ERR_CONTROL_FLOW = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. "
                    "We don't support that yet, please file an issue at https://github.com/pytorch/pytorch/issues .")
ERR_DATA = ("vmap: the values of a batched tensor cannot be read as one NumPy array or Python number inside vmap "
            "(each sample has its own); write the computation with minigrad operations instead.")


class BatchedArray:
    """A NumPy-compatible array of logical shape ``_p.shape[1:]``, one per sample of a vmap level."""

    __slots__ = ("_p", "_level")
    __array_priority__ = 1000  # ndarray's binary operators defer to us

    def __init__(self, physical, level: int) -> None:
        self._p = physical
        self._level = level

    # --- what the ops read ----------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return self._p.shape[1:]

    @property
    def ndim(self) -> int:
        return self._p.ndim - 1

    @property
    def size(self) -> int:
        return int(np.prod(self._p.shape[1:], dtype=np.int64))

    @property
    def dtype(self):
        return self._p.dtype

    @property
    def itemsize(self) -> int:
        return self._p.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self._p.itemsize

    @property
    def flags(self):
        return self._p.flags

    @property
    def strides(self) -> tuple:
        return self._p.strides[1:]

    @property
    def base(self):
        return None

    @property
    def batch_size(self) -> int:
        return self._p.shape[0]

    @property
    def T(self):
        return self.transpose()

    @property
    def mT(self):
        return self.swapaxes(-1, -2)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"BatchedArray(lvl={self._level}, bdim=0, value=\n{self._p!r})"

    # --- reading values: not possible per sample -----------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise VmapError(ERR_DATA)

    def item(self, *args):
        raise VmapError(ERR_ITEM)

    def tolist(self):
        raise VmapError("Cannot access data pointer of Tensor that doesn't have storage\nInside vmap a tensor holds "
                        "one value per sample: tolist() has no single answer.")

    def __bool__(self):
        raise VmapError(ERR_CONTROL_FLOW)

    def __float__(self):
        raise VmapError(ERR_ITEM)

    __int__ = __index__ = __complex__ = __float__

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    # --- NumPy protocols ------------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        level = _top_level(inputs, kwargs.get("out", ()))
        # (NumPy asks each type once, so the highest level is handled here, whichever array NumPy asked)
        rule = _UFUNC_METHODS.get(method)
        if rule is None:
            raise VmapError(f"vmap: no batching rule for numpy.{ufunc.__name__}.{method}{_caller()}")
        return rule(ufunc, level, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        level = _top_level(args, kwargs.values())
        # (NumPy asks each type once, so the highest level is handled here, whichever array NumPy asked)
        rule = _FUNCTIONS.get(func)
        if rule is None:
            name = getattr(func, "__module__", "numpy") + "." + func.__name__
            raise VmapError(f"vmap: minigrad has no batching rule for {name}{_caller()} (no per-sample loop is run "
                            "silently); write the operation with other minigrad operations.")
        return rule(level, *args, **kwargs)

    # --- ndarray methods the ops call -----------------------------------------------------------
    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        return BatchedArray(self._p.astype(dtype, casting=casting, copy=copy), self._level)

    def copy(self, order="C"):
        return BatchedArray(self._p.copy(), self._level)

    def reshape(self, *shape, order="C", copy=None):
        if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
            shape = tuple(shape[0])
        return _reshape(self._level, self, shape, copy=copy)

    def view(self, dtype=None):
        return BatchedArray(self._p.view() if dtype is None else self._p.view(dtype), self._level)

    def transpose(self, *axes):
        if len(axes) == 1 and not isinstance(axes[0], numbers.Integral):
            axes = axes[0]
        return _transpose(self._level, self, axes or None)

    def swapaxes(self, a, b):
        return _swapaxes(self._level, self, a, b)

    def squeeze(self, axis=None):
        return _squeeze(self._level, self, axis)

    def ravel(self, order="C"):
        return _reshape(self._level, self, (-1,))

    flatten = ravel

    def fill(self, value) -> None:
        self._p[...] = value

    def __getitem__(self, index):
        return _getitem(self, index)

    def __setitem__(self, index, value) -> None:
        _setitem(self, index, value)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()


def _method(name: str):
    fn = getattr(np, name)

    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = name
    return method


for _name in ("sum", "mean", "prod", "max", "min", "any", "all", "argmax", "argmin", "cumsum", "cumprod", "std",
              "var", "clip", "round", "dot", "take", "repeat", "nonzero", "argsort", "diagonal", "trace", "conj"):
    setattr(BatchedArray, _name, _method(_name))


def _sort_method(self, axis=-1, kind=None, order=None, stable=None):
    self._p[...] = np.sort(self, axis=axis, kind=kind, stable=stable)._p


BatchedArray.sort = _sort_method


def _dunder(ufunc, reflected: bool = False):
    if reflected:
        def op(self, other):
            return ufunc(other, self)
    else:
        def op(self, other):
            return ufunc(self, other)
    return op


def _inplace(ufunc):
    def op(self, other):
        ufunc(self, other, out=self)
        return self
    return op


for _n, _u in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("truediv", np.true_divide),
               ("floordiv", np.floor_divide), ("mod", np.remainder), ("pow", np.power), ("matmul", np.matmul),
               ("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor),
               ("lshift", np.left_shift), ("rshift", np.right_shift)):
    setattr(BatchedArray, f"__{_n}__", _dunder(_u))
    setattr(BatchedArray, f"__r{_n}__", _dunder(_u, True))
    setattr(BatchedArray, f"__i{_n}__", _inplace(_u))
for _n, _u in (("lt", np.less), ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal),
               ("eq", np.equal), ("ne", np.not_equal)):
    setattr(BatchedArray, f"__{_n}__", _dunder(_u))
BatchedArray.__neg__ = lambda self: np.negative(self)
BatchedArray.__pos__ = lambda self: np.positive(self)
BatchedArray.__abs__ = lambda self: np.absolute(self)
BatchedArray.__invert__ = lambda self: np.invert(self)
BatchedArray.__hash__ = None


# --- helpers ----------------------------------------------------------------------------------------
def _caller() -> str:
    """`` (in Foo.forward)``: the minigrad Function whose NumPy code asked for a missing rule (error path only)."""
    import sys

    f = sys._getframe(2)
    while f is not None:
        if f.f_code.co_name in ("forward", "backward") and "minigrad" in f.f_code.co_filename:
            ctx = f.f_locals.get("ctx")
            owner = getattr(ctx, "_forward_cls", None) or type(ctx)
            return f" (in {getattr(owner, '__name__', '?')}.{f.f_code.co_name})"
        f = f.f_back
    return ""


def _top_level(*groups) -> int:
    level = 0
    for group in groups:
        for x in group:
            if isinstance(x, BatchedArray):
                if x._level > level:
                    level = x._level
            elif isinstance(x, (tuple, list)):
                for y in x:
                    if isinstance(y, BatchedArray) and y._level > level:
                        level = y._level
    return level


def _is_b(x, level: int) -> bool:
    return isinstance(x, BatchedArray) and x._level == level


def _bsize(level: int, *xs) -> int:
    for x in xs:
        if _is_b(x, level):
            return x._p.shape[0]
        if isinstance(x, (tuple, list)):
            for y in x:
                if _is_b(y, level):
                    return y._p.shape[0]
    raise AssertionError("no batched argument")


def _shape(x) -> tuple:
    return x.shape if isinstance(x, (np.ndarray, BatchedArray)) else np.shape(x)


def _ndim(x) -> int:
    return x.ndim if isinstance(x, (np.ndarray, BatchedArray)) else np.ndim(x)


def _pad(x, level: int, n: int):
    """The physical array of ``x`` ready to broadcast against logical rank ``n`` (batch dim first).

    An unbatched value is returned as is: NumPy aligns it from the right, and its rank is at most n, so it
    never reaches the batch dim. A batched one gets 1s between the batch dim and its logical dims.
    """
    if not _is_b(x, level):
        return x
    p = x._p
    k = n - (p.ndim - 1)
    if k:
        p = p.reshape(p.shape[:1] + (1,) * k + p.shape[1:])
    return p


def _to_batched(p, level: int):
    return BatchedArray(p, level)


def _materialize(x, level: int, batch_size: int):
    """A batched value with every sample equal to ``x`` (for an unbatched operand that must be written)."""
    if _is_b(x, level):
        return x._p
    shape = _shape(x)
    return np.broadcast_to(x, (batch_size,) + tuple(shape))


def _axis(axis, ndim: int, name: str = "axis"):
    """A logical axis (or tuple of axes) as physical ones (shifted past the batch dim)."""
    if axis is None:
        return tuple(range(1, ndim + 1))
    if isinstance(axis, (tuple, list)):
        return tuple(_axis1(a, ndim) for a in axis)
    return _axis1(axis, ndim)


def _axis1(a, ndim: int) -> int:
    a = operator.index(a)
    if not -max(ndim, 1) <= a < max(ndim, 1):
        raise np.exceptions.AxisError(a, ndim)
    return (a % max(ndim, 1)) + 1 if ndim else 1


# --- ufuncs -----------------------------------------------------------------------------------------
def _ufunc_call(ufunc, level, inputs, kwargs):
    if ufunc.signature is not None:
        if ufunc is np.matmul:
            return _matmul(level, *inputs, **kwargs)
        raise VmapError(f"vmap: no batching rule for the generalized ufunc numpy.{ufunc.__name__}")
    out = kwargs.pop("out", None)
    if out is not None:
        out = out[0] if isinstance(out, tuple) and len(out) == 1 else out
        if isinstance(out, tuple):
            raise VmapError(f"vmap: numpy.{ufunc.__name__} with several outputs is not batched")
    n = 0
    for x in inputs:
        d = _ndim(x)
        if d > n:
            n = d
    if out is not None:
        n = max(n, _ndim(out))
    phys = [_pad(x, level, n) for x in inputs]
    if out is not None:
        if not _is_b(out, level):
            raise VmapError(
                "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a Tensor `other` "
                "in extra_args that has more elements than `self`. This happened due to `other` being vmapped over "
                "but `self` not being vmapped over in a vmap. Please try to use out-of-place operators instead of "
                "inplace arithmetic.")
        kwargs["out"] = (_pad(out, level, n),)
        ufunc(*phys, **kwargs)
        return out
    res = ufunc(*phys, **kwargs)
    if isinstance(res, tuple):  # frexp, modf, divmod
        return tuple(BatchedArray(r, level) for r in res)
    return BatchedArray(res, level)


def _ufunc_reduce(ufunc, level, inputs, kwargs):
    x = inputs[0]
    axis = kwargs.pop("axis", 0)
    if kwargs.get("out") is not None:
        raise VmapError(f"vmap: numpy.{ufunc.__name__}.reduce with out= is not batched")
    kwargs.pop("out", None)
    return BatchedArray(ufunc.reduce(x._p, axis=_axis(axis, x.ndim), **kwargs), level)


def _ufunc_accumulate(ufunc, level, inputs, kwargs):
    x = inputs[0]
    axis = kwargs.pop("axis", 0)
    return BatchedArray(ufunc.accumulate(x._p, axis=_axis1(axis, x.ndim), **kwargs), level)


def _ufunc_at(ufunc, level, inputs, kwargs):
    a, index = inputs[0], inputs[1]
    if not _is_b(a, level):
        raise VmapError(f"vmap: numpy.{ufunc.__name__}.at writes batched values into an unbatched array; "
                        "create the buffer with np.zeros_like(values, shape=...) so that it is batched too")
    idx, _, perm = _phys_index(a, index, level)
    if len(inputs) > 2:
        target_shape = _index_shape(a.shape, index)
        b = inputs[2]
        if _is_b(b, level):
            v = _pad(b, level, len(target_shape))
            if perm is not None:
                v = np.moveaxis(np.broadcast_to(v, (a._p.shape[0],) + target_shape), 0, perm)
        else:
            v = b
        ufunc.at(a._p, idx, v)
    else:
        ufunc.at(a._p, idx)


_UFUNC_METHODS = {"__call__": _ufunc_call, "reduce": _ufunc_reduce, "accumulate": _ufunc_accumulate,
                  "at": _ufunc_at}


def _matmul_shape(la: tuple, lb: tuple) -> tuple:
    if len(la) == 1 and len(lb) == 1:
        return ()
    if len(la) == 1:
        return lb[:-2] + lb[-1:]
    if len(lb) == 1:
        return la[:-1]
    return tuple(np.broadcast_shapes(la[:-2], lb[:-2])) + (la[-2], lb[-1])


def _matmul(level, a, b, out=None, **kwargs):
    if out is not None:
        raise VmapError("vmap: numpy.matmul with out= is not batched")
    la, lb = _shape(a), _shape(b)
    if not la or not lb:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    if len(la) >= 1 and len(lb) >= 1 and la[-1] != (lb[0] if len(lb) == 1 else lb[-2]):
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                         f"(n?,k),(k,m?)->(n?,m?) (size {lb[0] if len(lb) == 1 else lb[-2]} is different from "
                         f"{la[-1]})")
    nb = max(len(la), len(lb), 2) - 2  # logical broadcast (stack) dims
    pa, pb = a, b
    if _is_b(a, level):
        pa = a._p
        if len(la) == 1:
            pa = pa[:, None, :]
        pa = pa.reshape(pa.shape[:1] + (1,) * (nb + 2 - (pa.ndim - 1)) + pa.shape[1:])
    if _is_b(b, level):
        pb = b._p
        if len(lb) == 1:
            pb = pb[:, :, None]
        pb = pb.reshape(pb.shape[:1] + (1,) * (nb + 2 - (pb.ndim - 1)) + pb.shape[1:])
    res = np.matmul(pa, pb, **kwargs)
    return BatchedArray(res.reshape(res.shape[:1] + _matmul_shape(la, lb)), level)


# --- array functions --------------------------------------------------------------------------------
_FUNCTIONS: dict = {}


def _rule(*funcs):
    def deco(rule):
        for f in funcs:
            _FUNCTIONS[f] = rule
        return rule
    return deco


def _reduction(np_fn):
    def rule(level, a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        if out is not None:
            raise VmapError(f"vmap: numpy.{np_fn.__name__} with out= is not batched")
        if dtype is not None:
            kwargs["dtype"] = dtype
        if "where" in kwargs and _is_b(kwargs["where"], level):
            kwargs["where"] = _pad(kwargs["where"], level, a.ndim)
        return BatchedArray(np_fn(a._p, axis=_axis(axis, a.ndim), keepdims=keepdims, **kwargs), level)
    return rule


for _f in (np.sum, np.prod, np.mean, np.any, np.all, np.amax, np.amin, np.max, np.min, np.nansum, np.nanmean,
           np.nanmax, np.nanmin):
    _FUNCTIONS[_f] = _reduction(_f)


def _moment(np_fn):
    def rule(level, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
        return BatchedArray(np_fn(a._p, axis=_axis(axis, a.ndim), dtype=dtype, ddof=ddof, keepdims=keepdims,
                                  **kwargs), level)
    return rule


_FUNCTIONS[np.std] = _moment(np.std)
_FUNCTIONS[np.var] = _moment(np.var)


@_rule(np.count_nonzero)
def _count_nonzero(level, a, axis=None, *, keepdims=False):
    return BatchedArray(np.count_nonzero(a._p, axis=_axis(axis, a.ndim), keepdims=keepdims), level)


def _arg_reduction(np_fn):
    def rule(level, a, axis=None, out=None, *, keepdims=False):
        if axis is None:  # over the flattened sample
            flat = a._p.reshape(a._p.shape[0], -1)
            res = np_fn(flat, axis=1)
            if keepdims:
                res = res.reshape((-1,) + (1,) * a.ndim)
            return BatchedArray(res, level)
        return BatchedArray(np_fn(a._p, axis=_axis1(axis, a.ndim), keepdims=keepdims), level)
    return rule


_FUNCTIONS[np.argmax] = _arg_reduction(np.argmax)
_FUNCTIONS[np.argmin] = _arg_reduction(np.argmin)


def _scan(np_fn):
    def rule(level, a, axis=None, dtype=None, out=None):
        if axis is None:
            return BatchedArray(np_fn(a._p.reshape(a._p.shape[0], -1), axis=1, dtype=dtype), level)
        return BatchedArray(np_fn(a._p, axis=_axis1(axis, a.ndim), dtype=dtype), level)
    return rule


_FUNCTIONS[np.cumsum] = _scan(np.cumsum)
_FUNCTIONS[np.cumprod] = _scan(np.cumprod)


@_rule(np.sort)
def _sort(level, a, axis=-1, kind=None, order=None, *, stable=None):
    if axis is None:
        return BatchedArray(np.sort(a._p.reshape(a._p.shape[0], -1), axis=1, kind=kind, stable=stable), level)
    return BatchedArray(np.sort(a._p, axis=_axis1(axis, a.ndim), kind=kind, stable=stable), level)


@_rule(np.argsort)
def _argsort(level, a, axis=-1, kind=None, order=None, *, stable=None):
    if axis is None:
        return BatchedArray(np.argsort(a._p.reshape(a._p.shape[0], -1), axis=1, kind=kind, stable=stable), level)
    return BatchedArray(np.argsort(a._p, axis=_axis1(axis, a.ndim), kind=kind, stable=stable), level)


@_rule(np.clip)
def _clip(level, a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue, max=np._NoValue, **kw):
    lo = a_min if a_min is not np._NoValue else min
    hi = a_max if a_max is not np._NoValue else max
    lo = None if lo is np._NoValue else lo
    hi = None if hi is np._NoValue else hi
    if lo is None:
        return np.minimum(a, hi) if hi is not None else a.copy()
    if hi is None:
        return np.maximum(a, lo)
    return np.minimum(np.maximum(a, lo), hi)


@_rule(np.round, np.around)
def _round(level, a, decimals=0, out=None):
    return BatchedArray(np.round(a._p, decimals), level)


# shapes ---------------------------------------------------------------------------------------------
@_rule(np.shape)
def _np_shape(level, a):
    return a.shape


@_rule(np.ndim)
def _np_ndim(level, a):
    return a.ndim


@_rule(np.size)
def _np_size(level, a, axis=None):
    return a.size if axis is None else a.shape[axis]


@_rule(np.reshape)
def _reshape(level, a, shape=None, order="C", *, newshape=None, copy=None):
    if shape is None:
        shape = newshape
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    shape = tuple(int(s) for s in shape)
    if not _is_b(a, level):
        return np.reshape(a, shape)
    p = a._p
    if copy is False:
        return BatchedArray(np.reshape(p, p.shape[:1] + shape, copy=False), level)
    return BatchedArray(p.reshape(p.shape[:1] + shape), level)


@_rule(np.transpose)
def _transpose(level, a, axes=None):
    n = a.ndim
    if axes is None:
        perm = (0,) + tuple(range(n, 0, -1))
    else:
        perm = (0,) + tuple(_axis1(d, n) for d in axes)
    return BatchedArray(a._p.transpose(perm), level)


@_rule(np.permute_dims)
def _permute_dims(level, a, axes=None):
    return _transpose(level, a, axes)


@_rule(np.swapaxes)
def _swapaxes(level, a, axis1, axis2):
    return BatchedArray(np.swapaxes(a._p, _axis1(axis1, a.ndim), _axis1(axis2, a.ndim)), level)


@_rule(np.moveaxis)
def _moveaxis(level, a, source, destination):
    n = a.ndim
    src = _axis(source, n) if isinstance(source, (tuple, list)) else _axis1(source, n)
    dst = _axis(destination, n) if isinstance(destination, (tuple, list)) else _axis1(destination, n)
    return BatchedArray(np.moveaxis(a._p, src, dst), level)


@_rule(np.squeeze)
def _squeeze(level, a, axis=None):
    if axis is None:
        axis = tuple(i for i, s in enumerate(a.shape) if s == 1)
    return BatchedArray(np.squeeze(a._p, axis=_axis(axis, a.ndim)), level)


@_rule(np.expand_dims)
def _expand_dims(level, a, axis):
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    n = a.ndim + len(axes)
    return BatchedArray(np.expand_dims(a._p, tuple(_axis1(d, n) for d in axes)), level)


@_rule(np.broadcast_to)
def _broadcast_to(level, a, shape, subok=False):
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    p = _pad(a, level, len(shape))
    return BatchedArray(np.broadcast_to(p, p.shape[:1] + shape), level)


@_rule(np.broadcast_arrays)
def _broadcast_arrays(level, *args, subok=False):
    shape = np.broadcast_shapes(*(_shape(x) for x in args))
    b = _bsize(level, *args)
    return tuple(BatchedArray(np.broadcast_to(_pad(x, level, len(shape)), (b,) + shape), level) for x in args)


@_rule(np.ravel)
def _ravel(level, a, order="C"):
    return _reshape(level, a, (-1,))


@_rule(np.atleast_1d)
def _atleast_1d(level, *arys):
    res = [x if _ndim(x) >= 1 else (_reshape(level, x, (1,)) if _is_b(x, level) else np.atleast_1d(x))
           for x in arys]
    return res[0] if len(res) == 1 else res


@_rule(np.copy)
def _copy(level, a, order="K", subok=False):
    return BatchedArray(np.copy(a._p), level)


@_rule(np.ascontiguousarray)
def _ascontiguousarray(level, a, dtype=None, *, like=None):
    return BatchedArray(np.ascontiguousarray(a._p, dtype=dtype), level)


@_rule(np.flip)
def _flip(level, a, axis=None):
    return BatchedArray(np.flip(a._p, _axis(axis, a.ndim)), level)


@_rule(np.roll)
def _roll(level, a, shift, axis=None):
    if axis is None:
        flat = a._p.reshape(a._p.shape[0], -1)
        return BatchedArray(np.roll(flat, shift, axis=1).reshape(a._p.shape), level)
    return BatchedArray(np.roll(a._p, shift, axis=_axis(axis, a.ndim)), level)


@_rule(np.repeat)
def _repeat(level, a, repeats, axis=None):
    if _is_b(repeats, level):
        raise VmapError("vmap: numpy.repeat with batched repeats has a data-dependent shape")
    if axis is None:
        return BatchedArray(np.repeat(a._p.reshape(a._p.shape[0], -1), repeats, axis=1), level)
    return BatchedArray(np.repeat(a._p, repeats, axis=_axis1(axis, a.ndim)), level)


@_rule(np.tile)
def _tile(level, a, reps):
    reps = (reps,) if isinstance(reps, numbers.Integral) else tuple(reps)
    n = max(a.ndim, len(reps))
    p = _pad(a, level, n)
    return BatchedArray(np.tile(p, (1,) + (1,) * (n - len(reps)) + reps), level)


def _tri_rule(np_fn):
    def rule(level, m, k=0):
        return BatchedArray(np_fn(m._p, k), level)  # numpy applies tril / triu to the last two dims
    return rule


_FUNCTIONS[np.tril] = _tri_rule(np.tril)
_FUNCTIONS[np.triu] = _tri_rule(np.triu)


@_rule(np.diagonal)
def _diagonal(level, a, offset=0, axis1=0, axis2=1):
    return BatchedArray(np.diagonal(a._p, offset, _axis1(axis1, a.ndim), _axis1(axis2, a.ndim)), level)


@_rule(np.trace)
def _trace(level, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return BatchedArray(np.trace(a._p, offset, _axis1(axis1, a.ndim), _axis1(axis2, a.ndim), dtype=dtype), level)


@_rule(np.pad)
def _np_pad(level, array, pad_width, mode="constant", **kwargs):
    pw = np.broadcast_to(np.asarray(pad_width), (array.ndim, 2)).tolist()
    return BatchedArray(np.pad(array._p, [[0, 0]] + pw, mode=mode, **kwargs), level)


@_rule(np.diff)
def _diff(level, a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    if prepend is not np._NoValue or append is not np._NoValue:
        raise VmapError("vmap: numpy.diff with prepend/append is not batched")
    return BatchedArray(np.diff(a._p, n=n, axis=_axis1(axis, a.ndim)), level)


@_rule(np.lib.stride_tricks.sliding_window_view)
def _sliding_window_view(level, x, window_shape, axis=None, *, subok=False, writeable=False):
    ws = (window_shape,) if isinstance(window_shape, numbers.Integral) else tuple(window_shape)
    ax = tuple(range(1, x.ndim + 1)) if axis is None else _axis(axis if isinstance(axis, (tuple, list)) else (axis,),
                                                                x.ndim)
    return BatchedArray(np.lib.stride_tricks.sliding_window_view(x._p, ws, axis=ax, writeable=writeable), level)


# joining ------------------------------------------------------------------------------------------
@_rule(np.concatenate)
def _concatenate(level, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    arrays = list(arrays)
    b = _bsize(level, arrays)
    if axis is None:
        arrays = [_materialize(x, level, b).reshape(b, -1) for x in arrays]
        return BatchedArray(np.concatenate(arrays, axis=1, dtype=dtype, casting=casting), level)
    n = _ndim(arrays[0])
    phys = [_materialize(x, level, b) for x in arrays]
    return BatchedArray(np.concatenate(phys, axis=_axis1(axis, n), dtype=dtype, casting=casting), level)


@_rule(np.stack)
def _stack(level, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    arrays = list(arrays)
    b = _bsize(level, arrays)
    n = _ndim(arrays[0]) + 1
    phys = [_materialize(x, level, b) for x in arrays]
    return BatchedArray(np.stack(phys, axis=_axis1(axis, n), dtype=dtype, casting=casting), level)


def _split_rule(np_fn):
    def rule(level, ary, indices_or_sections, axis=0):
        return [BatchedArray(p, level) for p in np_fn(ary._p, indices_or_sections, axis=_axis1(axis, ary.ndim))]
    return rule


_FUNCTIONS[np.split] = _split_rule(np.split)
_FUNCTIONS[np.array_split] = _split_rule(np.array_split)


@_rule(np.where)
def _where(level, condition, x=None, y=None):
    if x is None and y is None:
        raise VmapError("vmap: numpy.where(condition) (nonzero) has a data-dependent shape")
    n = max(_ndim(condition), _ndim(x), _ndim(y))
    return BatchedArray(np.where(_pad(condition, level, n), _pad(x, level, n), _pad(y, level, n)), level)


@_rule(np.nonzero, np.argwhere, np.flatnonzero, np.unique)
def _data_dependent(level, *args, **kwargs):
    name = {"nonzero": "aten::nonzero", "argwhere": "aten::nonzero", "flatnonzero": "aten::nonzero",
            "unique": "aten::_unique2"}.get(getattr(_data_dependent, "_called", ""), "aten::nonzero")
    raise VmapError(f"vmap: We do not support batching operators that can output dynamic shape. Attempted to vmap "
                    f"over {name}. Please file an issue at https://github.com/pytorch/pytorch/issues if you need this "
                    "feature.\nEach sample would give a result of its own size.")


@_rule(np.select)
def _select(level, condlist, choicelist, default=0):
    n = max([_ndim(c) for c in condlist] + [_ndim(c) for c in choicelist] + [_ndim(default)])
    return BatchedArray(np.select([_pad(c, level, n) for c in condlist], [_pad(c, level, n) for c in choicelist],
                                  _pad(default, level, n)), level)


# creation like another array ----------------------------------------------------------------------
def _like(np_fn):
    def rule(level, prototype, *args, dtype=None, order="K", subok=True, shape=None, **kwargs):
        p = prototype._p
        shp = prototype.shape if shape is None else ((shape,) if isinstance(shape, numbers.Integral) else tuple(shape))
        return BatchedArray(np_fn(p, *args, dtype=dtype, shape=p.shape[:1] + shp), level)
    return rule


for _f in (np.zeros_like, np.ones_like, np.empty_like, np.full_like):
    _FUNCTIONS[_f] = _like(_f)


@_rule(np.result_type)
def _result_type(level, *arrays_and_dtypes):
    return np.result_type(*(x.dtype if isinstance(x, BatchedArray) else x for x in arrays_and_dtypes))


@_rule(np.can_cast)
def _can_cast(level, from_, to, casting="safe"):
    return np.can_cast(from_.dtype, to, casting)


@_rule(np.may_share_memory, np.shares_memory)
def _shares(level, a, b, max_work=None):
    pa = a._p if isinstance(a, BatchedArray) else a
    pb = b._p if isinstance(b, BatchedArray) else b
    return np.may_share_memory(pa, pb)


@_rule(np.isclose)
def _isclose(level, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    n = max(_ndim(a), _ndim(b))
    return BatchedArray(np.isclose(_pad(a, level, n), _pad(b, level, n), rtol, atol, equal_nan), level)


@_rule(np.allclose, np.array_equal, np.array_equiv)
def _all_equal(level, *args, **kwargs):
    raise VmapError(ERR_CONTROL_FLOW)


@_rule(np.nan_to_num)
def _nan_to_num(level, x, copy=True, nan=0.0, posinf=None, neginf=None):
    return BatchedArray(np.nan_to_num(x._p, copy=copy, nan=nan, posinf=posinf, neginf=neginf), level)


# products -----------------------------------------------------------------------------------------
@_rule(np.matmul)
def _matmul_fn(level, a, b, out=None, **kwargs):
    return _matmul(level, a, b, out=out, **kwargs)


@_rule(np.dot)
def _dot(level, a, b, out=None):
    if _ndim(a) == 0 or _ndim(b) == 0:
        return np.multiply(a, b)
    if _ndim(a) <= 2 and _ndim(b) <= 2:
        return _matmul(level, a, b)
    return _tensordot(level, a, b, axes=([-1], [-2 if _ndim(b) > 1 else 0]))


@_rule(np.vdot, np.inner)
def _inner(level, a, b):
    return np.sum(np.multiply(a, b), axis=-1)


@_rule(np.outer)
def _outer(level, a, b, out=None):
    return np.multiply(np.reshape(a, (-1, 1)), np.reshape(b, (1, -1)))


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@_rule(np.einsum)
def _einsum(level, subscripts, *operands, out=None, optimize=False, **kwargs):
    if not isinstance(subscripts, str):
        raise VmapError("vmap: numpy.einsum in the interleaved (operand, sublist) form is not batched")
    eq = subscripts.replace(" ", "")
    ins, arrow, outs = eq.partition("->")
    terms = ins.split(",")
    if not arrow:  # implicit output: letters seen once, sorted, after the ellipsis
        counts = {}
        for c in ins:
            if c.isalpha():
                counts[c] = counts.get(c, 0) + 1
        outs = ("..." if "..." in ins else "") + "".join(sorted(c for c, k in counts.items() if k == 1))
    used = set(eq)
    b = next(c for c in _LETTERS if c not in used)
    new_terms = []
    phys = []
    for term, x in zip(terms, operands):
        if _is_b(x, level):
            new_terms.append(b + term)
            phys.append(x._p)
        else:
            new_terms.append(term)
            phys.append(x)
    return BatchedArray(np.einsum(",".join(new_terms) + "->" + b + outs, *phys, optimize=optimize, **kwargs), level)


@_rule(np.tensordot)
def _tensordot(level, a, b, axes=2):
    na, nb = _ndim(a), _ndim(b)
    if isinstance(axes, numbers.Integral):
        ax_a, ax_b = list(range(na - axes, na)), list(range(axes))
    else:
        ax_a, ax_b = axes
        ax_a = [ax_a] if isinstance(ax_a, numbers.Integral) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, numbers.Integral) else list(ax_b)
    ax_a = [d % na for d in ax_a]
    ax_b = [d % nb for d in ax_b]
    la = _LETTERS[:na]
    lb = list(_LETTERS[na:na + nb])
    for i, j in zip(ax_a, ax_b):
        lb[j] = la[i]
    lb = "".join(lb)
    out = "".join(c for k, c in enumerate(la) if k not in ax_a) + "".join(
        c for k, c in enumerate(lb) if k not in ax_b)
    return _einsum(level, f"{la},{lb}->{out}", a, b)


def _stacked(np_fn):
    """NumPy's linalg functions already treat leading dims as a stack: the batch dim is one more."""
    def rule(level, a, *args, **kwargs):
        return BatchedArray(np_fn(a._p, *args, **kwargs), level)
    return rule


for _f in (np.linalg.inv, np.linalg.det, np.linalg.slogdet, np.linalg.cholesky, np.linalg.eigvalsh):
    _FUNCTIONS[_f] = _stacked(_f)


@_rule(np.linalg.solve)
def _solve(level, a, b):
    vec = _ndim(b) == 1
    b2 = np.expand_dims(b, -1) if vec else b
    n = max(_ndim(a), _ndim(b2))
    res = np.linalg.solve(_materialize(a, level, _bsize(level, a, b)) if not _is_b(a, level) else _pad(a, level, n),
                          _pad(b2, level, n) if _is_b(b2, level) else b2)
    res = BatchedArray(res, level)
    return np.squeeze(res, -1) if vec else res


@_rule(np.linalg.norm)
def _norm(level, x, ord=None, axis=None, keepdims=False):
    if ord is None:
        return np.sqrt(np.sum(np.multiply(x, x), axis=axis, keepdims=keepdims))
    if axis is None:
        raise VmapError("vmap: numpy.linalg.norm with ord and no axis is not batched")
    return BatchedArray(np.linalg.norm(x._p, ord=ord, axis=_axis(axis, x.ndim), keepdims=keepdims), level)


@_rule(np.cross)
def _cross(level, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    n = max(_ndim(a), _ndim(b))
    na, nb = _ndim(a), _ndim(b)
    pa = _materialize(a, level, _bsize(level, a, b)) if not _is_b(a, level) else a._p
    pb = _materialize(b, level, _bsize(level, a, b)) if not _is_b(b, level) else b._p
    res = np.cross(pa, pb, axisa=_axis1(axisa, na), axisb=_axis1(axisb, nb), axisc=_axis1(axisc, n))
    return BatchedArray(res, level)


# indexing -----------------------------------------------------------------------------------------
def _is_adv(i) -> bool:
    return isinstance(i, (np.ndarray, BatchedArray, list)) and not (isinstance(i, np.ndarray) and i.ndim == 0
                                                                      and i.dtype.kind != "b")


def _expand_ellipsis(index: tuple, ndim: int) -> tuple:
    """The index with its Ellipsis replaced by full slices (the count of dims each item consumes known)."""
    used = 0
    for i in index:
        if i is None or i is Ellipsis:
            continue
        if isinstance(i, (np.ndarray, BatchedArray)) and i.dtype.kind == "b":
            used += max(i.ndim, 1) if i.ndim else 0
        else:
            used += 1
    if Ellipsis not in [i for i in index if i is Ellipsis]:
        return index + (slice(None),) * (ndim - used)
    k = next(n for n, i in enumerate(index) if i is Ellipsis)
    return index[:k] + (slice(None),) * (ndim - used) + index[k + 1:]


def _index_shape(shape: tuple, index) -> tuple:
    """The logical shape of ``x[index]`` for a (logical) ``shape``, without touching data."""
    index = index if isinstance(index, tuple) else (index,)
    fake = np.broadcast_to(np.zeros((), np.int8), shape)
    plain = tuple(np.broadcast_to(np.zeros((), np.intp), i.shape) if isinstance(i, BatchedArray) and
                  i.dtype.kind != "b" else i for i in index)
    return fake[plain].shape


def _phys_index(a, index, level: int):
    """The physical index of ``a[index]`` and where NumPy puts the batch dim in the result.

    Returns (physical index, logical result shape or None, perm): ``perm`` is the axis at which the batch
    dim lands when NumPy moves the advanced-index dims to the front (non-adjacent advanced indices), else None.
    """
    index = index if isinstance(index, tuple) else (index,)
    batched_idx = any(_is_b(i, level) for i in index)
    if not batched_idx:
        adv = [k for k, i in enumerate(index) if _is_adv(i) or (isinstance(i, numbers.Integral) and any(
            _is_adv(j) for j in index))]
        perm = None
        if adv and adv[-1] - adv[0] + 1 != len(adv):  # non-adjacent: NumPy puts the advanced dims first
            shapes = [np.shape(index[k]) if not (isinstance(index[k], np.ndarray) and index[k].dtype.kind == "b")
                      else (int(np.count_nonzero(index[k])),) for k in adv]
            perm = len(np.broadcast_shapes(*shapes))
        return (slice(None),) + index, None, perm
    # batched integer index arrays (per-sample positions): gather with an arange over the batch
    b = a._p.shape[0]
    for i in index:
        if _is_b(i, level) and i.dtype.kind == "b":
            raise VmapError("vmap: We do not support batching operators that can support dynamic shape. "
                            "Attempting to batch over indexing with a boolean mask.\nEach sample would keep a "
                            "different number of elements; use torch.where(mask, x, other) instead.")
    full = _expand_ellipsis(index, a.ndim)
    adv = [k for k, i in enumerate(full) if _is_adv(i) or isinstance(i, numbers.Integral)]
    adv_shapes = [i.shape if isinstance(i, BatchedArray) else np.shape(i) for i in (full[k] for k in adv)]
    nadv = len(np.broadcast_shapes(*adv_shapes))
    ar = np.arange(b).reshape((b,) + (1,) * nadv)
    phys = [full[k] if k not in adv else (_pad(full[k], level, nadv) if _is_b(full[k], level) else full[k])
            for k in range(len(full))]
    new = (ar,) + tuple(phys)
    if adv[0] == 0 or adv[-1] - adv[0] + 1 != len(adv):
        return new, None, None  # the advanced dims (batch first) lead in both the logical and physical results
    # adjacent advanced indices after some slices: NumPy leads with them; move them back behind those dims
    before = 0
    for k in range(adv[0]):
        before += 1  # a slice or None each give one result dim (no ints before the first advanced index)
    return new, None, ("move", nadv, before)


def _getitem(a: BatchedArray, index):
    level = a._level
    idx, _, perm = _phys_index(a, index, level)
    try:
        res = a._p[idx]
    except IndexError as e:  # NumPy numbers the physical axes: say the logical one
        import re

        raise IndexError(re.sub(r"axis (\d+)", lambda m: f"axis {int(m.group(1)) - 1}", str(e))) from None
    if perm is None:
        return BatchedArray(res, level)
    if isinstance(perm, tuple):  # ("move", nadv, before): result is (B, adv..., before..., after...)
        _, nadv, before = perm
        src = list(range(1, 1 + nadv))
        dst = list(range(1 + before, 1 + before + nadv))
        return BatchedArray(np.moveaxis(res, src, dst), level)
    return BatchedArray(np.moveaxis(res, perm, 0), level)


def _setitem(a: BatchedArray, index, value) -> None:
    level = a._level
    if _top_level((value,)) > level:
        raise VmapError(
            "vmap: index_put_(self, *extra_args) is not possible because there exists a Tensor `other` in "
            "extra_args that has more elements than `self`. This happened due to `other` being vmapped over but "
            "`self` not being vmapped over in a vmap. Please try to use out-of-place operators instead of "
            "index_put_.")
    idx, _, perm = _phys_index(a, index, level)
    if not _is_b(value, level) and perm is None:
        a._p[idx] = value
        return
    target = _index_shape(a.shape, index)
    b = a._p.shape[0]
    v = np.broadcast_to(_pad(value, level, len(target)) if _is_b(value, level) else value, (b,) + target)
    if isinstance(perm, tuple):
        _, nadv, before = perm
        v = np.moveaxis(v, list(range(1 + before, 1 + before + nadv)), list(range(1, 1 + nadv)))
    elif perm is not None:
        v = np.moveaxis(v, 0, perm)
    a._p[idx] = v


def asarray(x, dtype=None):
    """``np.asarray`` that leaves a batched array batched (the ops call it to turn NumPy scalars into arrays)."""
    if x.__class__ is BatchedArray:
        return x if dtype is None or x.dtype == dtype else x.astype(dtype)
    return np.asarray(x, dtype=dtype)


# --- more array functions ------------------------------------------------------------------------------
@_rule(np.take)
def _take(level, a, indices, axis=None, out=None, mode="raise"):
    if out is not None:
        raise VmapError("vmap: numpy.take with out= is not batched")
    if not _is_b(a, level):  # a shared table, per-sample indices (an embedding lookup)
        ip = indices._p
        if axis is None:
            return BatchedArray(np.take(a, ip, mode=mode), level)
        ax = operator.index(axis) % np.ndim(a)
        return BatchedArray(np.moveaxis(np.take(a, ip, axis=ax, mode=mode), ax, 0), level)
    b = a._p.shape[0]
    if axis is None:
        flat = a._p.reshape(b, -1)
        if not _is_b(indices, level):
            return BatchedArray(np.take(flat, indices, axis=1, mode=mode), level)
        ip = indices._p
        flat_idx = ip.reshape(b, -1)
        if mode == "wrap":
            flat_idx = flat_idx % max(flat.shape[1], 1)
        elif mode == "clip":
            flat_idx = np.clip(flat_idx, 0, flat.shape[1] - 1)
        return BatchedArray(np.take_along_axis(flat, flat_idx, axis=1).reshape(ip.shape), level)
    ax = _axis1(axis, a.ndim)
    if not _is_b(indices, level):
        return BatchedArray(np.take(a._p, indices, axis=ax, mode=mode), level)
    return _getitem(a, (slice(None),) * (ax - 1) + (indices,))


@_rule(np.take_along_axis)
def _take_along_axis(level, arr, indices, axis=-1):
    b = _bsize(level, arr, indices)
    if axis is None:
        pa = _materialize(arr, level, b).reshape(b, -1)
        return BatchedArray(np.take_along_axis(pa, _materialize(indices, level, b).reshape(b, -1), axis=1), level)
    n = _ndim(arr)
    return BatchedArray(np.take_along_axis(_materialize(arr, level, b), _materialize(indices, level, b),
                                           axis=_axis1(axis, n)), level)


@_rule(np.put_along_axis)
def _put_along_axis(level, arr, indices, values, axis):
    if not _is_b(arr, level):
        raise VmapError("vmap: numpy.put_along_axis writes batched values into an unbatched array")
    b = arr._p.shape[0]
    idx = _materialize(indices, level, b)
    vals = _pad(values, level, arr.ndim) if _is_b(values, level) else values
    np.put_along_axis(arr._p, idx, vals, axis=_axis1(axis, arr.ndim))


@_rule(np.copyto)
def _copyto(level, dst, src, casting="same_kind", where=True):
    if not _is_b(dst, level):
        b = _bsize(level, src, where)
        raise VmapError(f"output with shape {list(np.shape(dst))} doesn't match the broadcast shape "
                        f"{[b] + list(np.shape(dst))}")
    n = dst.ndim
    np.copyto(dst._p, _pad(src, level, n), casting=casting, where=_pad(where, level, n))


def _stacked_tuple(np_fn):
    def rule(level, a, *args, **kwargs):
        res = np_fn(a._p, *args, **kwargs)
        if isinstance(res, tuple):
            return type(res)(*(BatchedArray(r, level) for r in res)) if hasattr(res, "_fields") else tuple(
                BatchedArray(r, level) for r in res)
        return BatchedArray(res, level)
    return rule


for _f in (np.linalg.svd, np.linalg.qr, np.linalg.eigh, np.linalg.eig, np.linalg.eigvals, np.linalg.pinv,
           np.linalg.slogdet, np.linalg.matrix_power):
    _FUNCTIONS[_f] = _stacked_tuple(_f)


@_rule(np.linalg.matrix_rank)
def _matrix_rank(level, A, *args, **kwargs):
    return BatchedArray(np.linalg.matrix_rank(A._p, *args, **kwargs), level)


def on_physical(axis_arg: int | None = None):
    """Decorate a NumPy helper of the ops that is elementwise in its array arguments, except along the axis
    given as positional argument ``axis_arg``: under vmap it runs once on the physical arrays (batch dim
    first, shared arrays broadcast to the batch), its axis shifted past the batch dim.

    Why: a few helpers branch on the data (``if mask.any()``) or pick values with boolean masks, which a
    batched array cannot do per sample; on the physical arrays the same vectorized code serves every sample.
    No cost outside vmap beyond one check of the arguments.
    """
    def deco(fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            level = 0
            for x in args:
                if x.__class__ is BatchedArray and x._level > level:
                    level = x._level
            if not level:
                return fn(*args, **kwargs)
            b = _bsize(level, *args)
            n = max(_ndim(x) for x in args if isinstance(x, (np.ndarray, BatchedArray)))
            new = []
            for k, x in enumerate(args):
                if k == axis_arg:
                    new.append(_axis1(x, n))
                elif _is_b(x, level):
                    new.append(_pad(x, level, n))
                elif isinstance(x, (np.ndarray, BatchedArray)):
                    new.append(np.broadcast_to(x, (b,) + (1,) * (n - _ndim(x)) + tuple(_shape(x))))
                else:
                    new.append(x)
            res = fn(*new, **kwargs)
            return tuple(BatchedArray(r, level) for r in res) if isinstance(res, tuple) else BatchedArray(res, level)
        return wrapper
    return deco


def array(x, dtype=None):
    """``np.array`` (a copy) that leaves a batched array batched."""
    if x.__class__ is BatchedArray:
        return x.astype(dtype) if dtype is not None else x.copy()
    return np.array(x, dtype=dtype)


def values_of(x):
    """All the values of ``x`` as one ndarray (every sample of every level): for checks such as index bounds."""
    while x.__class__ is BatchedArray:
        x = x._p
    return x


def copy_for(x, *others):
    """``x.copy()``, batched like the most batched of ``others`` (indices, values) that will be written into it.

    Why: an op that copies its input and then scatters values or indices into the copy must give a batched
    result when those are batched, even if the input itself is shared by the batch.
    """
    level = _top_level(others)
    if not level or (x.__class__ is BatchedArray and x._level >= level):
        return x.copy()
    proto = next(o for o in _flat(others) if _is_b(o, level))
    out = np.empty_like(proto, shape=np.shape(x), dtype=x.dtype)
    out[...] = x
    return out


def zeros_for(shape, dtype, *likes):
    """``np.zeros(shape, dtype)``, batched like the most batched of ``likes`` (see copy_for)."""
    level = _top_level(likes)
    if not level:
        return np.zeros(shape, dtype)
    proto = next(o for o in _flat(likes) if _is_b(o, level))
    return np.zeros_like(proto, shape=shape, dtype=dtype)


def _flat(xs):
    for x in xs:
        if isinstance(x, (tuple, list)):
            yield from x
        else:
            yield x


def take_rows(table, i):
    """``table[i]`` for integer indices ``i``, also when ``i`` is batched and the table shared (an embedding
    lookup under vmap: NumPy's own indexing of an ndarray cannot hand a batched index to us)."""
    if i.__class__ is BatchedArray and not (table.__class__ is BatchedArray and table._level >= i._level):
        lifted = BatchedArray(np.broadcast_to(table, (i._p.shape[0],) + tuple(np.shape(table))), i._level)
        return lifted[i]
    return table[i]


def ascontiguousarray(x, dtype=None):
    """``np.ascontiguousarray`` that leaves a batched array batched (NumPy does not dispatch it)."""
    if x.__class__ is BatchedArray:
        return BatchedArray(np.ascontiguousarray(x._p, dtype=dtype), x._level)
    return np.ascontiguousarray(x, dtype=dtype)


def getitem_lifted(x, index):
    """``x[index]`` for a shared ``x`` and an index holding batched arrays (NumPy's own indexing of an
    ndarray cannot hand those to us): ``x`` is broadcast to the batch first (no copy)."""
    level = _top_level((index,) if not isinstance(index, tuple) else index)
    proto = next(o for o in _flat(index if isinstance(index, tuple) else (index,)) if _is_b(o, level))
    lifted = BatchedArray(np.broadcast_to(x, (proto._p.shape[0],) + tuple(np.shape(x))), level)
    return lifted[index]
