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


def eq(input, other) -> Tensor:
    return _compare("eq", np.equal, input, other)


def ne(input, other) -> Tensor:
    return _compare("ne", np.not_equal, input, other)


def lt(input, other) -> Tensor:
    return _compare("lt", np.less, input, other)


def le(input, other) -> Tensor:
    return _compare("le", np.less_equal, input, other)


def gt(input, other) -> Tensor:
    return _compare("gt", np.greater, input, other)


def ge(input, other) -> Tensor:
    return _compare("ge", np.greater_equal, input, other)


greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """|a - b| <= atol + rtol |b|, elementwise (the tensors must have the same dtype, as in PyTorch)."""
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"{_TORCH_TYPE.get(input.dtype.name)} did not match {_TORCH_TYPE.get(other.dtype.name)}\n"
                           f"isclose compares tensors of one dtype; got {input.dtype} and {other.dtype}.")
    try:
        return _wrap(np.isclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))
    except ValueError:
        raise _broadcast_error("isclose", input._data, other._data) from None


def isinf(input: Tensor) -> Tensor:
    return _wrap(np.isinf(input._data))


def isposinf(input: Tensor) -> Tensor:
    return _wrap(np.isposinf(input._data) if input._data.dtype.kind == "f" else np.zeros(input._data.shape, bool))


def isneginf(input: Tensor) -> Tensor:
    return _wrap(np.isneginf(input._data) if input._data.dtype.kind == "f" else np.zeros(input._data.shape, bool))


def isfinite(input: Tensor) -> Tensor:
    return _wrap(np.isfinite(input._data))


def isnan(input: Tensor) -> Tensor:
    return _wrap(np.isnan(input._data))


def isreal(input: Tensor) -> Tensor:
    return _wrap(np.ones(input._data.shape, bool))  # minigrad has no complex dtype


def signbit(input: Tensor) -> Tensor:
    return _wrap(np.signbit(input._data))


def logical_and(input: Tensor, other) -> Tensor:
    return _compare("logical_and", np.logical_and, input, other)


def logical_or(input: Tensor, other) -> Tensor:
    return _compare("logical_or", np.logical_or, input, other)


def logical_xor(input: Tensor, other) -> Tensor:
    return _compare("logical_xor", np.logical_xor, input, other)


def logical_not(input: Tensor) -> Tensor:
    return _wrap(np.logical_not(input._data))


def _bitwise(op: str, ufunc, a, b) -> Tensor:
    for t in (a, b):
        if isinstance(t, Tensor) and t._data.dtype.kind == "f":
            raise NotImplementedError(f'"{op}_cpu" not implemented for \'{_TORCH_TYPE.get(t.dtype.name)}\'\n'
                                      f"{op} works on integer and bool tensors.")
    return _compare(op, ufunc, a, b)


def bitwise_and(input: Tensor, other) -> Tensor:
    return _bitwise("bitwise_and", np.bitwise_and, input, other)


def bitwise_or(input: Tensor, other) -> Tensor:
    return _bitwise("bitwise_or", np.bitwise_or, input, other)


def bitwise_xor(input: Tensor, other) -> Tensor:
    return _bitwise("bitwise_xor", np.bitwise_xor, input, other)


def bitwise_not(input: Tensor) -> Tensor:
    if input._data.dtype.kind == "f":
        raise NotImplementedError(f'"bitwise_not_cpu" not implemented for \'{_TORCH_TYPE.get(input.dtype.name)}\'')
    return _wrap(np.invert(input._data))


def _truth(op: str, fn, a: Tensor, dim, keepdim: bool) -> Tensor:
    x = a._data
    axes = _axes(dim, x.ndim, op)
    out = fn(x, axis=axes, keepdims=keepdim)
    # bool for every dtype but uint8, which PyTorch keeps (a legacy of uint8 masks)
    return _wrap(_asarray(out, dtype=np.uint8 if x.dtype == np.uint8 else bool))


def all(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where every element (along ``dim``) is nonzero."""
    return _truth("all", np.all, input, dim, keepdim)


def any(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where some element (along ``dim``) is nonzero."""
    return _truth("any", np.any, input, dim, keepdim)


def count_nonzero(input: Tensor, dim=None) -> Tensor:
    x = input._data
    axes = _axes(dim, x.ndim, "count_nonzero")
    return _wrap(_asarray(np.count_nonzero(x, axis=axes), dtype=np.int64))
