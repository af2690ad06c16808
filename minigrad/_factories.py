"""Creating tensors: from data, filled, ranges and seeded random numbers."""
from __future__ import annotations

import builtins
import numbers
import warnings

import numpy as np

from . import _dtype
from ._tensor import Tensor, _check_device

_rng = [np.random.default_rng()]


def manual_seed(seed: int):
    """Make randn / rand / randint / randperm reproducible."""
    _rng[0] = np.random.default_rng(int(seed))
    return _rng[0]


def seed() -> int:
    s = int(np.random.SeedSequence().entropy % (2 ** 63))
    manual_seed(s)
    return s


def _finish(arr: np.ndarray, requires_grad: bool, device) -> Tensor:
    _check_device(device)
    t = Tensor._wrap(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _shape(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (numbers.Integral, np.integer)) or s < 0:
            raise TypeError(f"sizes must be non-negative integers, got {list(size)}")
    return tuple(int(s) for s in size)


def _float_dtype(dtype) -> np.dtype:
    return _dtype._default[0].np_dtype if dtype is None else _dtype.to_numpy_dtype(dtype)


def _infer(data, np_dtype=None) -> np.ndarray:
    """PyTorch's dtype inference: Python floats -> default dtype, ints -> int64, NumPy keeps its dtype.

    With ``np_dtype`` the data is converted straight to it (Python floats are exact doubles:
    going through float32 first would lose precision for ``tensor([0.2], dtype=float64)``).
    Data minigrad cannot hold (strings, objects, dates, complex numbers) is PyTorch's error."""
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{_type_name(data)}'")
    if isinstance(data, np.ndarray) or isinstance(data, np.generic):
        if data.dtype not in _dtype._FROM_NUMPY:
            raise _dtype.unsupported_array(data.dtype)
        return np.array(data, dtype=np_dtype)
    try:
        arr = np.array(_untensor(data))
    except ValueError:
        raise ValueError(
            f"{_ragged_message(data)}\n"
            "tensor(): nested lists must form a rectangular array, e.g. [[1, 2], [3, 4]]."
        ) from None
    if arr.dtype not in _dtype._FROM_NUMPY:
        raise _python_data_error(data, arr)
    if np_dtype is not None:
        return arr.astype(np_dtype)
    if arr.dtype.kind == "f":
        return arr.astype(_dtype._default[0].np_dtype)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    return arr


def _type_name(obj) -> str:
    """How PyTorch names a Python type in its errors (CPython's tp_name: 'decimal.Decimal', 'NoneType', 'Fraction')."""
    t = type(obj)
    if t.__module__ == "builtins" or t.__flags__ & (1 << 9):  # a builtin, or a class defined in Python
        return t.__name__
    return f"{t.__module__}.{t.__name__}"


def _python_data_error(data, arr: np.ndarray) -> Exception:
    """The error PyTorch raises for Python data that is not numbers (found by walking the data once)."""
    probe = data
    while isinstance(probe, (list, tuple)) and probe:  # the first element at every depth
        probe = probe[0]
    if isinstance(probe, str):  # a string is itself a sequence: PyTorch reads it as one more dimension
        return ValueError(f"too many dimensions 'str'\ntensor(): the data holds strings ({probe!r}); a tensor holds "
                          "numbers only.")
    for leaf in _leaves(data):
        if isinstance(leaf, (str, bytes)):
            return TypeError(f"new(): invalid data type '{_type_name(leaf)}'\ntensor(): the data holds {leaf!r}; "
                             "a tensor holds numbers only.")
        if isinstance(leaf, (complex, np.complexfloating)):
            return TypeError(f"can't convert complex data ({leaf!r}). The only supported types are: "
                             f"{_dtype.SUPPORTED}.\nminigrad has no complex dtype: keep the real and imaginary "
                             "parts in two real tensors.")
        if not isinstance(leaf, (int, float, np.number, np.bool_, Tensor)):
            if isinstance(leaf, np.generic):
                return _dtype.unsupported_array(leaf.dtype)
            return RuntimeError(f"Could not infer dtype of {_type_name(leaf)}\ntensor(): the data holds {leaf!r:.60} "
                                "(a tensor holds numbers, or nested lists of numbers).")
    return _dtype.unsupported_array(arr.dtype)


def _leaves(data):
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        else:
            yield item


def _ragged_message(data) -> str:
    """PyTorch's first line for ragged nested lists: the first sequence whose length differs."""
    shape = []
    probe = data
    while isinstance(probe, (list, tuple)):
        shape.append(len(probe))
        if not probe:
            break
        probe = probe[0]

    def walk(seq, dim):
        if dim >= len(shape) or not isinstance(seq, (list, tuple)):
            return None
        if len(seq) != shape[dim]:
            return f"expected sequence of length {shape[dim]} at dim {dim} (got {len(seq)})"
        for item in seq:
            found = walk(item, dim + 1)
            if found:
                return found
        return None

    return walk(data, 0) or "expected sequences of equal length at every level"


def _untensor(data):
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)):
        return [_untensor(d) for d in data]
    return data


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (numbers, nested lists, arrays, tensors)."""
    np_dtype = None if dtype is None else _dtype.to_numpy_dtype(dtype)
    arr = _infer(data.detach()._data if isinstance(data, Tensor) else data, np_dtype)
    return _finish(arr, requires_grad, device)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    if isinstance(data, Tensor) and dtype is None:
        return data
    if isinstance(data, np.ndarray) and dtype is None:
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(arr: np.ndarray) -> Tensor:
    """A tensor sharing memory with a NumPy array (dtype kept)."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    if arr.dtype not in _dtype._FROM_NUMPY:
        raise _dtype.unsupported_array(arr.dtype)
    if not arr.flags.writeable:
        arr = _writable_alias(arr)
    return Tensor._wrap(arr)


_warned_not_writable = [False]


class _WritableAlias:
    """Presents the memory of a read-only array as writable (``__array_interface__``), keeping the array alive."""

    def __init__(self, arr: np.ndarray) -> None:
        self.keep = arr
        iface = dict(arr.__array_interface__)
        iface["data"] = (iface["data"][0], False)  # False: not read-only
        self.__array_interface__ = iface


def _writable_alias(arr: np.ndarray) -> np.ndarray:
    """What PyTorch does with a read-only array: warn (once), then share its memory anyway, writes included.

    Only memory that NumPy itself allocated is written to (an array made read-only with
    ``arr.flags.writeable = False``, or a view of one); memory NumPy merely borrows (a bytes
    object, a memory-mapped file) and broadcast views stay read-only, so that in-place
    operations on them raise a clear error instead of crashing or corrupting Python objects.
    """
    if not _warned_not_writable[0]:
        _warned_not_writable[0] = True
        warnings.warn(
            "The given NumPy array is not writable, and PyTorch does not support non-writable tensors. This means "
            "writing to this tensor will result in undefined behavior. You may want to copy the array to protect "
            "its data or make it writable before converting it to a tensor. This type of warning will be suppressed "
            "for the rest of this program.", UserWarning, stacklevel=3)
    root = arr
    while isinstance(root.base, np.ndarray):
        root = root.base
    if root.base is not None or not root.flags.owndata or any(st == 0 and n > 1 for st, n in zip(arr.strides,
                                                                                                 arr.shape)):
        return arr
    return np.asarray(_WritableAlias(arr))


def zeros(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _finish(np.zeros(_shape(size), _float_dtype(dtype)), requires_grad, device)


def ones(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _finish(np.ones(_shape(size), _float_dtype(dtype)), requires_grad, device)


def empty(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _finish(np.empty(_shape(size), _float_dtype(dtype)), requires_grad, device)


def full(size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    if dtype is None:
        if isinstance(fill_value, builtins.bool):
            dtype = _dtype.bool
        elif isinstance(fill_value, numbers.Integral):
            dtype = _dtype.int64
    return _finish(np.full(_shape((size,)), fill_value, _float_dtype(dtype)), requires_grad, device)


def eye(n, m=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _finish(np.eye(n, m, dtype=_float_dtype(dtype)), requires_grad, device)


def _like(t: Tensor, dtype):
    return t._data.dtype if dtype is None else _dtype.to_numpy_dtype(dtype)


def zeros_like(input: Tensor, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _finish(np.zeros(input._data.shape, _like(input, dtype)), requires_grad, device)


def ones_like(input: Tensor, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _finish(np.ones(input._data.shape, _like(input, dtype)), requires_grad, device)


def empty_like(input: Tensor, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _finish(np.empty(input._data.shape, _like(input, dtype)), requires_grad, device)


def full_like(input: Tensor, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _finish(np.full(input._data.shape, fill_value, _like(input, dtype)), requires_grad, device)


def randn_like(t: Tensor, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _finish(_rng[0].standard_normal(t._data.shape).astype(_like(t, dtype)), requires_grad, device)


def rand_like(t: Tensor, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _finish(_rng[0].random(t._data.shape).astype(_like(t, dtype)), requires_grad, device)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False) -> Tensor:
    if end is None:
        start, end = 0, start
    integral = all(isinstance(v, (numbers.Integral, np.integer)) for v in (start, end, step))
    np_dtype = (np.int64 if integral else _dtype._default[0].np_dtype) if dtype is None else _dtype.to_numpy_dtype(dtype)
    return _finish(np.arange(start, end, step).astype(np_dtype), requires_grad, device)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _finish(np.linspace(start, end, int(steps)).astype(_float_dtype(dtype)), requires_grad, device)


def randn(*size, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
    """Standard normal samples (seed with ``manual_seed``)."""
    return _finish(_rng[0].standard_normal(_shape(size)).astype(_float_dtype(dtype)), requires_grad, device)


def rand(*size, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
    """Uniform samples in [0, 1)."""
    return _finish(_rng[0].random(_shape(size)).astype(_float_dtype(dtype)), requires_grad, device)


def randint(low, high=None, size=None, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
    if size is None:  # randint(high, size)
        low, high, size = 0, low, high
    np_dtype = np.int64 if dtype is None else _dtype.to_numpy_dtype(dtype)
    return _finish(_rng[0].integers(low, high, size=_shape((size,))).astype(np_dtype), requires_grad, device)


def randperm(n, dtype=None, device=None) -> Tensor:
    np_dtype = np.int64 if dtype is None else _dtype.to_numpy_dtype(dtype)
    return _finish(_rng[0].permutation(int(n)).astype(np_dtype), False, device)


def normal(mean=0.0, std=1.0, size=(), dtype=None) -> Tensor:
    return _finish((_rng[0].standard_normal(_shape((size,))) * std + mean).astype(_float_dtype(dtype)), False, None)


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    return input.numel()


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    return bool(np.allclose(input._data, other._data if isinstance(other, Tensor) else other, rtol=rtol, atol=atol,
                            equal_nan=equal_nan))


def equal(input, other) -> bool:
    return input.equal(other)


def isnan(t):
    return t.isnan()


def isfinite(t):
    return t.isfinite()


# --- Tensor.new_*: new tensors with the dtype of an existing one (PyTorch's methods) ---------------
def _new_zeros(self: Tensor, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of zeros with this tensor's dtype (unless ``dtype`` is given)."""
    return _finish(np.zeros(_shape(size), _like(self, dtype)), requires_grad, device)


def _new_ones(self: Tensor, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of ones with this tensor's dtype (unless ``dtype`` is given)."""
    return _finish(np.ones(_shape(size), _like(self, dtype)), requires_grad, device)


def _new_empty(self: Tensor, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """An uninitialised tensor with this tensor's dtype (unless ``dtype`` is given)."""
    return _finish(np.empty(_shape(size), _like(self, dtype)), requires_grad, device)


def _new_full(self: Tensor, size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor filled with ``fill_value``, with this tensor's dtype (unless ``dtype`` is given)."""
    return _finish(np.full(_shape((size,)), fill_value, _like(self, dtype)), requires_grad, device)


def _new_tensor(self: Tensor, data, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A copy of ``data`` as a tensor with this tensor's dtype (unless ``dtype`` is given)."""
    arr = np.array(data.detach()._data if isinstance(data, Tensor) else data, dtype=_like(self, dtype))
    return _finish(arr, requires_grad, device)


Tensor.new_zeros, Tensor.new_ones, Tensor.new_empty = _new_zeros, _new_ones, _new_empty
Tensor.new_full, Tensor.new_tensor = _new_full, _new_tensor


# --- sampling (issue 12): multinomial, and the in-place random fills of nn.init-style code --------------------
def _multinomial(probs: Tensor, num_samples: int, replacement: bool) -> Tensor:
    """Indices drawn from the categorical distributions in the rows of ``probs`` (weights need not sum to 1).

    With replacement: inverse CDF. Without: the Gumbel-top-k trick (the k largest of log p + Gumbel noise
    are a sample of k distinct categories drawn in order with probabilities proportional to p).
    """
    p = probs._data
    if p.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if p.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {probs.dtype.name.capitalize()}")
    rows = p.reshape(1, -1) if p.ndim == 1 else p
    if not np.all(np.isfinite(rows)) or np.any(rows < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(rows.sum(axis=1) <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    n = int(num_samples)
    if n <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement:
        if n > rows.shape[1]:
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
        if np.any((rows > 0).sum(axis=1) < n):
            raise RuntimeError("invalid multinomial distribution (with replacement=False, not enough non-negative "
                               "category to sample)")
        with np.errstate(divide="ignore"):
            keys = np.log(rows) - np.log(-np.log(_rng[0].random(rows.shape)))
        out = np.argsort(-keys, axis=1, kind="stable")[:, :n]
    else:
        cdf = np.cumsum(rows, axis=1)
        cdf /= cdf[:, -1:]
        u = _rng[0].random((rows.shape[0], n))
        out = np.minimum((u[:, :, None] >= cdf[:, None, :]).sum(axis=2), rows.shape[1] - 1)
    out = out.astype(np.int64)
    return Tensor._wrap(out[0] if p.ndim == 1 else out)


def _fill_random(t: Tensor, values: np.ndarray, what: str) -> Tensor:
    from . import _ops

    return _ops._run_inplace(t, _ops.Copy, (Tensor._wrap(values.astype(t._data.dtype, copy=False)),), f"{what}()")


def _floating_fill(t: Tensor, kernel: str, what: str) -> None:
    if t._data.dtype.kind != "f":
        from ._ops.reduction import _TORCH_TYPE

        raise NotImplementedError(f'"{kernel}" not implemented for \'{_TORCH_TYPE[t._data.dtype.name]}\'\n{what}() '
                                  f"draws real numbers: fill a floating tensor (this one is {t.dtype}).")


def _uniform_(self: Tensor, a: float = 0.0, to: float = 1.0, *, generator=None) -> Tensor:
    """Fill with samples of U(a, to) (in place). PyTorch names the first bound ``from``, a Python keyword."""
    _floating_fill(self, "check_uniform_bounds", "uniform_")
    return _fill_random(self, _rng[0].uniform(a, to, self._data.shape), "uniform_")


def _normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """Fill with samples of N(mean, std^2) (in place)."""
    _floating_fill(self, "normal_kernel_cpu", "normal_")
    return _fill_random(self, _rng[0].normal(mean, std, self._data.shape), "normal_")


def _bernoulli_(self: Tensor, p: float = 0.5, *, generator=None) -> Tensor:
    """Fill with 1 with probability p, else 0 (in place)."""
    return _fill_random(self, _rng[0].random(self._data.shape) < p, "bernoulli_")


def _exponential_(self: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    return _fill_random(self, _rng[0].exponential(1.0 / lambd, self._data.shape), "exponential_")


def _random_(self: Tensor, low: int = 0, to: int | None = None, *, generator=None) -> Tensor:
    # PyTorch names the bounds ``from`` (a Python keyword) and ``to``
    if to is None:
        low, to = 0, low if low else 2 ** 24
    return _fill_random(self, _rng[0].integers(low, to, self._data.shape), "random_")


Tensor.uniform_, Tensor.normal_, Tensor.bernoulli_ = _uniform_, _normal_, _bernoulli_
Tensor.exponential_, Tensor.random_ = _exponential_, _random_


# --- saving ---------------------------------------------------------------------------------------------------
def save(obj, f) -> None:
    """Save tensors, state dicts or any picklable object (a path or a binary file); read back with ``load``."""
    import pickle

    if isinstance(f, (str, bytes)) or hasattr(f, "__fspath__"):
        with open(f, "wb") as fh:
            pickle.dump(obj, fh, protocol=pickle.HIGHEST_PROTOCOL)
    else:
        pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)


def load(f, map_location=None, weights_only: bool | None = None, **kwargs):
    """Read what ``save`` wrote (only load files you trust: like PyTorch's, they are pickles)."""
    import pickle

    if isinstance(f, (str, bytes)) or hasattr(f, "__fspath__"):
        with open(f, "rb") as fh:
            return pickle.load(fh)
    return pickle.load(f)
