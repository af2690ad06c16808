"""repr/str of tensors, following PyTorch's formatting rules (so printed output matches)."""
from __future__ import annotations

import math

import numpy as np

from . import _dtype
from ._functorch.batched import BatchedArray as _BatchedArray

PRECISION = 4
LINEWIDTH = 80
THRESHOLD = 1000
EDGEITEMS = 3
SCI_MODE = None  # None: chosen from the values, as PyTorch; True / False: forced by set_printoptions

_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision: int | None = None, threshold: float | None = None, edgeitems: int | None = None,
                     linewidth: int | None = None, profile: str | None = None, sci_mode: bool | None = None) -> None:
    """PyTorch's print options: digits after the point, how many elements before summarising with "...",
    how many edge items a summary keeps, characters per line, and scientific notation (None: automatic)."""
    global PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH, SCI_MODE
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"profile must be one of {sorted(_PROFILES)}, got {profile!r}")
        PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = _PROFILES[profile]
    if precision is not None:
        PRECISION = int(precision)
    if threshold is not None:
        THRESHOLD = threshold
    if edgeitems is not None:
        EDGEITEMS = int(edgeitems)
    if linewidth is not None:
        LINEWIDTH = int(linewidth)
    SCI_MODE = sci_mode


def get_printoptions() -> dict:
    return {"precision": PRECISION, "threshold": THRESHOLD, "edgeitems": EDGEITEMS, "linewidth": LINEWIDTH,
            "sci_mode": SCI_MODE}


class _Formatter:
    def __init__(self, values: np.ndarray, floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if finite.size == 0:
            return  # as PyTorch: width 1, so nan / inf / 0 are printed unpadded
        absvals = np.abs(finite)
        lo, hi = absvals.min(), absvals.max()
        vals = finite.tolist()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if self.int_mode:
            if hi / lo > 1000.0 or hi > 1.0e8:
                self.sci_mode = True
                widths = [len(f"{v:.{PRECISION}e}") for v in vals]
            else:
                widths = [len(f"{v:.0f}") + 1 for v in vals]
        else:
            if hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4:
                self.sci_mode = True
                widths = [len(f"{v:.{PRECISION}e}") for v in vals]
            else:
                widths = [len(f"{v:.{PRECISION}f}") for v in vals]
        if SCI_MODE is not None and SCI_MODE != self.sci_mode:
            self.sci_mode = SCI_MODE
            widths = ([len(f"{v:.{PRECISION}e}") for v in vals] if SCI_MODE else
                      [len(f"{v:.0f}") + 1 for v in vals] if self.int_mode else [len(f"{v:.{PRECISION}f}") for v in vals])
        # Only nonzero finite values set the width (as in PyTorch): nan, inf and 0 never widen a column.
        self.max_width = max(widths)

    def _plain(self, value) -> str:
        if not self.floating:
            return str(value)
        if self.sci_mode:
            return f"{value:.{PRECISION}e}"
        if self.int_mode:
            s = f"{value:.0f}"
            return s if (math.isinf(value) or math.isnan(value)) else s + "."
        return f"{value:.{PRECISION}f}"

    def format(self, value) -> str:
        s = self._plain(value)
        return " " * (self.max_width - len(s)) + s


def _vector_str(arr: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    element_length = fmt.max_width + 2
    per_line = max(1, int(math.floor((LINEWIDTH - indent) / element_length)))
    if summarize and arr.shape[0] > 2 * EDGEITEMS:
        data = ([fmt.format(v) for v in arr[:EDGEITEMS].tolist()] + [" ..."]
                + [fmt.format(v) for v in arr[-EDGEITEMS:].tolist()])
    else:
        data = [fmt.format(v) for v in arr.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str(arr: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if arr.ndim == 0:
        return fmt.format(arr.item())
    if arr.ndim == 1:
        return _vector_str(arr, indent, summarize, fmt)
    if summarize and arr.shape[0] > 2 * EDGEITEMS:
        slices = ([_tensor_str(arr[i], indent + 1, summarize, fmt) for i in range(EDGEITEMS)] + ["..."]
                  + [_tensor_str(arr[i], indent + 1, summarize, fmt) for i in range(arr.shape[0] - EDGEITEMS, arr.shape[0])])
    else:
        slices = [_tensor_str(arr[i], indent + 1, summarize, fmt) for i in range(arr.shape[0])]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _summarized(arr: np.ndarray) -> np.ndarray:
    if arr.ndim == 0:
        return arr
    if arr.shape[0] > 2 * EDGEITEMS:
        arr = np.concatenate([arr[:EDGEITEMS], arr[-EDGEITEMS:]])
    return np.stack([_summarized(a) for a in arr]) if arr.ndim > 1 else arr


def _add_suffixes(s: str, suffixes: list, indent: int) -> str:
    parts = [s]
    last_line_len = len(s) - s.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t) -> str:
    arr = t._data
    if arr.__class__ is _BatchedArray:  # printed inside vmap: the physical tensor, as PyTorch shows it
        return _batched_repr(arr)
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    dt = _dtype._FROM_NUMPY[arr.dtype]
    floating = arr.dtype.kind == "f"
    if arr.size == 0:
        body = "[]"
        if arr.shape != (0,):
            suffixes.append(f"size={tuple(arr.shape)}")
        if dt is not _dtype._default[0]:  # empty tensors name every non-default dtype, int64 and bool too
            suffixes.append(f"dtype={dt!r}")
    else:
        summarize = arr.size > THRESHOLD
        shown = _summarized(arr) if summarize else arr
        body = _tensor_str(arr, indent, summarize, _Formatter(shown, floating))
    if arr.size and dt is not _dtype._default[0] and dt is not _dtype.int64 and dt is not _dtype.bool:
        suffixes.append(f"dtype={dt!r}")
    if t.grad_fn is not None:
        # PyTorch prints the node's class name: torch::autograd::NotImplemented's is NotImplemented
        suffixes.append(f"grad_fn=<{t.grad_fn.name().rpartition('::')[2]}>")
    elif t._rg:
        suffixes.append("requires_grad=True")
    if t._extra is not None and "fw_grad" in t._extra:  # a dual tensor (forward AD) shows its tangent
        from .autograd.forward_ad import _tangent

        tangent = _tangent(t)
        if tangent is not None:
            suffixes.append("tangent=" + tensor_repr(tangent))
    return _add_suffixes(prefix + body, suffixes, indent)


def _batched_repr(arr) -> str:
    """``BatchedTensor(lvl=1, bdim=0, value=...)``: PyTorch's repr of a tensor inside vmap (lvl: the nesting depth)."""
    from ._functorch import _state
    from ._tensor import Tensor

    depth = next((k + 1 for k, lv in enumerate(_state.LEVELS) if lv.id == arr._level), arr._level)
    inner = arr._p
    body = _batched_repr(inner) if inner.__class__ is _BatchedArray else tensor_repr(Tensor._wrap(inner))
    body = "\n".join("    " + line for line in body.split("\n"))
    return f"BatchedTensor(lvl={depth}, bdim=0, value=\n{body}\n)"
