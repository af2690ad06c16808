"""Comparisons, tests and logic: bool results, never differentiable (no graph is recorded).

eq ne lt le gt ge (and PyTorch's aliases), isclose, isinf/isposinf/isneginf, signbit,
logical_and/or/xor/not, bitwise ones, all / any, count_nonzero. Shapes broadcast as NumPy;
a mismatch is PyTorch's "The size of tensor a ... must match" error.
"""
from __future__ import annotations

import numpy as np

from .._functorch.batched import asarray as _asarray  # np.asarray, batched arrays kept (vmap)

from .._tensor import Tensor
from .arithmetic import _broadcast_error
from .reduction import _TORCH_TYPE, _axes

_wrap = Tensor._wrap


def _data(x):
    return x._data if isinstance(x, Tensor) else x


def _compare(op: str, ufunc, a, b) -> Tensor:
    if not isinstance(a, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(a).__name__}")
    try:
        return _wrap(_asarray(ufunc(a._data, _data(b))))
    except ValueError:
        raise _broadcast_error(op, a._data, _asarray(_data(b))) from None


def eq(a, b) -> Tensor:
    return _compare("eq", np.equal, a, b)


def ne(a, b) -> Tensor:
    return _compare("ne", np.not_equal, a, b)


def lt(a, b) -> Tensor:
    return _compare("lt", np.less, a, b)


def le(a, b) -> Tensor:
    return _compare("le", np.less_equal, a, b)


def gt(a, b) -> Tensor:
    return _compare("gt", np.greater, a, b)


def ge(a, b) -> Tensor:
    return _compare("ge", np.greater_equal, a, b)


greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def isclose(a: Tensor, b: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """|a - b| <= atol + rtol |b|, elementwise (the tensors must have the same dtype, as in PyTorch)."""
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"{_TORCH_TYPE.get(a.dtype.name)} did not match {_TORCH_TYPE.get(b.dtype.name)}\n"
                           f"isclose compares tensors of one dtype; got {a.dtype} and {b.dtype}.")
    try:
        return _wrap(np.isclose(a._data, b._data, rtol=rtol, atol=atol, equal_nan=equal_nan))
    except ValueError:
        raise _broadcast_error("isclose", a._data, b._data) from None


def isinf(a: Tensor) -> Tensor:
    return _wrap(np.isinf(a._data))


def isposinf(a: Tensor) -> Tensor:
    return _wrap(np.isposinf(a._data) if a._data.dtype.kind == "f" else np.zeros(a._data.shape, bool))


def isneginf(a: Tensor) -> Tensor:
    return _wrap(np.isneginf(a._data) if a._data.dtype.kind == "f" else np.zeros(a._data.shape, bool))


def isfinite(a: Tensor) -> Tensor:
    return _wrap(np.isfinite(a._data))


def isnan(a: Tensor) -> Tensor:
    return _wrap(np.isnan(a._data))


def isreal(a: Tensor) -> Tensor:
    return _wrap(np.ones(a._data.shape, bool))  # minigrad has no complex dtype


def signbit(a: Tensor) -> Tensor:
    return _wrap(np.signbit(a._data))


def logical_and(a: Tensor, b) -> Tensor:
    return _compare("logical_and", np.logical_and, a, b)


def logical_or(a: Tensor, b) -> Tensor:
    return _compare("logical_or", np.logical_or, a, b)


def logical_xor(a: Tensor, b) -> Tensor:
    return _compare("logical_xor", np.logical_xor, a, b)


def logical_not(a: Tensor) -> Tensor:
    return _wrap(np.logical_not(a._data))


def _bitwise(op: str, ufunc, a, b) -> Tensor:
    for t in (a, b):
        if isinstance(t, Tensor) and t._data.dtype.kind == "f":
            raise NotImplementedError(f'"{op}_cpu" not implemented for \'{_TORCH_TYPE.get(t.dtype.name)}\'\n'
                                      f"{op} works on integer and bool tensors.")
    return _compare(op, ufunc, a, b)


def bitwise_and(a: Tensor, b) -> Tensor:
    return _bitwise("bitwise_and", np.bitwise_and, a, b)


def bitwise_or(a: Tensor, b) -> Tensor:
    return _bitwise("bitwise_or", np.bitwise_or, a, b)


def bitwise_xor(a: Tensor, b) -> Tensor:
    return _bitwise("bitwise_xor", np.bitwise_xor, a, b)


def bitwise_not(a: Tensor) -> Tensor:
    if a._data.dtype.kind == "f":
        raise NotImplementedError(f'"bitwise_not_cpu" not implemented for \'{_TORCH_TYPE.get(a.dtype.name)}\'')
    return _wrap(np.invert(a._data))


def _truth(op: str, fn, a: Tensor, dim, keepdim: bool) -> Tensor:
    x = a._data
    axes = _axes(dim, x.ndim, op)
    out = fn(x, axis=axes, keepdims=keepdim)
    # bool for every dtype but uint8, which PyTorch keeps (a legacy of uint8 masks)
    return _wrap(_asarray(out, dtype=np.uint8 if x.dtype == np.uint8 else bool))


def all(a: Tensor, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where every element (along ``dim``) is nonzero."""
    return _truth("all", np.all, a, dim, keepdim)


def any(a: Tensor, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where some element (along ``dim``) is nonzero."""
    return _truth("any", np.any, a, dim, keepdim)


def count_nonzero(a: Tensor, dim=None) -> Tensor:
    x = a._data
    axes = _axes(dim, x.ndim, "count_nonzero")
    return _wrap(_asarray(np.count_nonzero(x, axis=axes), dtype=np.int64))
