"""dtypes: thin named wrappers around NumPy dtypes, printed the way PyTorch prints them."""
from __future__ import annotations

import builtins

import numpy as np


class dtype:
    """A tensor element type (``minigrad.float32`` ...); wraps a NumPy dtype."""

    __slots__ = ("name", "np_dtype", "is_floating_point", "itemsize")

    def __init__(self, name: str, np_dtype) -> None:
        self.name = name
        self.np_dtype = np.dtype(np_dtype)
        self.is_floating_point = self.np_dtype.kind == "f"
        self.itemsize = self.np_dtype.itemsize

    def __repr__(self) -> str:
        # Printed as PyTorch prints it, so book output reads the same on both.
        return f"torch.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))


float16 = dtype("float16", np.float16)
float32 = dtype("float32", np.float32)
float64 = dtype("float64", np.float64)
int8 = dtype("int8", np.int8)
int16 = dtype("int16", np.int16)
int32 = dtype("int32", np.int32)
int64 = dtype("int64", np.int64)
uint8 = dtype("uint8", np.uint8)
bool = dtype("bool", np.bool_)  # noqa: A001 - mirrors torch.bool

half, float, double = float16, float32, float64  # noqa: A001
short, int, long = int16, int32, int64  # noqa: A001

_ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, bool)
_FROM_NUMPY = {d.np_dtype: d for d in _ALL}


def _by_name(name: str) -> dtype:
    return globals()[name]


# PyTorch's wording, listing minigrad's dtypes (PyTorch also has complex and uint16/32/64)
SUPPORTED = "float64, float32, float16, int64, int32, int16, int8, uint8, and bool"


def unsupported_array(np_dtype) -> TypeError:
    """PyTorch's TypeError for an ndarray whose dtype minigrad cannot hold (strings, objects, dates, complex...)."""
    d = np.dtype(np_dtype)
    why = ("minigrad has no complex dtype" if d.kind == "c" else
           "minigrad has no unsigned integer dtype wider than uint8" if d.kind == "u" else
           f"a tensor holds numbers, and NumPy dtype {d} does not")
    return TypeError(
        f"can't convert np.ndarray of type numpy.{d.type.__name__}. The only supported types are: {SUPPORTED}.\n"
        f"{why}; convert the array first (e.g. arr.astype(np.float32))."
    )


def from_numpy_dtype(np_dtype) -> dtype:
    """The minigrad dtype for a NumPy dtype (PyTorch's TypeError for unsupported ones)."""
    try:
        return _FROM_NUMPY[np.dtype(np_dtype)]
    except KeyError:
        raise unsupported_array(np_dtype) from None
    except TypeError:
        raise TypeError(f"minigrad does not support dtype {np_dtype!r}; supported: {SUPPORTED}") from None


def to_numpy_dtype(d) -> np.dtype:
    """Accept a minigrad dtype, a NumPy dtype or a Python type; return the NumPy dtype."""
    if isinstance(d, dtype):
        return d.np_dtype
    if d is builtins.float:
        return _default[0].np_dtype
    if d is builtins.int:
        return int64.np_dtype
    if d is builtins.bool:
        return bool.np_dtype
    return from_numpy_dtype(d).np_dtype


_default = [float32]


def get_default_dtype() -> dtype:
    """The dtype of floating tensors made from Python floats (float32, as in PyTorch)."""
    return _default[0]


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype (float32 or float64)."""
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"set_default_dtype expects a floating dtype such as minigrad.float64, got {d!r}")
    _default[0] = d


class finfo:
    """Machine limits of a floating dtype: ``finfo(minigrad.float32).eps``, ``.max``, ``.tiny`` (PyTorch's names)."""

    def __init__(self, type: dtype | None = None) -> None:  # noqa: A002
        t = _default[0] if type is None else type
        if not isinstance(t, dtype) or not t.is_floating_point:
            raise TypeError(f"torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            f"'torch.finfo'\ngot {t!r}.")
        info = np.finfo(t.np_dtype)
        self.dtype = t.name
        self.bits = builtins.int(info.bits)
        self.eps = builtins.float(info.eps)
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.tiny)
        self.resolution = 10.0 ** -builtins.int(info.precision)

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.tiny:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype: ``iinfo(minigrad.int64).max``."""

    def __init__(self, type: dtype) -> None:  # noqa: A002
        if not isinstance(type, dtype) or type.is_floating_point:
            raise TypeError(f"torch.iinfo() requires an integer input type. Use torch.finfo to handle "
                            f"'torch.iinfo'\ngot {type!r}.")
        info = np.iinfo(np.uint8 if type.np_dtype == np.bool_ else type.np_dtype)
        self.dtype = type.name
        self.bits = builtins.int(info.bits)
        self.max = builtins.int(info.max)
        self.min = builtins.int(info.min)

    def __repr__(self) -> str:
        return f"iinfo(min={builtins.float(self.min):g}, max={builtins.float(self.max):g}, dtype={self.dtype})"
