"""Values that cross between grading processes as plain data: never pickle, never code.

The grader takes the values a notebook computed (``grad_at_two = 12.0``, an array, a tensor) from
the student's kernel and hands them to the checker process. Both ends are untrusted or must not
trust each other, so values travel as JSON made of a few exact types: None, bool, int, float,
complex, str, list, tuple, dict, NumPy arrays and scalars of numeric or boolean dtype, and
minigrad tensors (their data and ``requires_grad``). Anything else is refused by name, and the
decoder builds fresh objects of the real types: an object of the student's own class (with a
``__eq__`` that always says yes) can never come through.
"""
from __future__ import annotations

import base64
import json
import math

MAX_BYTES = 16 * 2**20   # the JSON of all values exported for one exercise
MAX_DEPTH = 20
_KINDS = "biufc"         # NumPy dtype kinds that cross: bool, int, uint, float, complex


class Unsupported(TypeError):
    """A value of a type that does not cross (its type name is the message)."""


def _float(x: float):
    return x if math.isfinite(x) else {"f": repr(x)}


def _array(arr) -> dict:
    import numpy as np

    if arr.dtype.kind not in _KINDS or arr.dtype.hasobject:
        raise Unsupported(f"numpy array of dtype {arr.dtype}")
    arr = arr if arr.flags.c_contiguous else arr.copy(order="C")  # (ascontiguousarray makes 0-d arrays 1-d)
    return {"dtype": arr.dtype.str, "shape": list(arr.shape), "b64": base64.b64encode(arr.tobytes()).decode()}


def encode(value, depth: int = 0):
    """A JSON-able form of ``value``; raises Unsupported for anything outside the list above."""
    if depth > MAX_DEPTH:
        raise Unsupported("nesting deeper than 20 levels")
    t = type(value)
    if value is None or t is bool or t is str:
        return value
    if t is int:
        if abs(value) >= 10**300:
            raise Unsupported("int with more than 300 digits")
        return value
    if t is float:
        return _float(value)
    if t is complex:
        return {"c": [_float(value.real), _float(value.imag)]}
    if t is list:
        return {"l": [encode(v, depth + 1) for v in value]}
    if t is tuple:
        return {"t": [encode(v, depth + 1) for v in value]}
    if t is dict:
        if not all(type(k) in (str, int) for k in value):
            raise Unsupported("dict with keys other than str or int")
        return {"d": [[k, encode(v, depth + 1)] for k, v in value.items()]}
    mod = getattr(t, "__module__", "") or ""
    if mod == "numpy":
        import numpy as np

        if t is np.ndarray:
            return {"nd": _array(value)}
        if isinstance(value, np.generic) and type(value).__module__ == "numpy":
            return {"ns": _array(np.asarray(value))}
    if mod.startswith("minigrad"):
        from minigrad._tensor import Tensor

        if t is Tensor:
            return {"tensor": _array(value._data), "requires_grad": bool(value.requires_grad)}
    raise Unsupported(f"{mod + '.' if mod and mod != 'builtins' else ''}{t.__name__}")


def _decode_array(d: dict):
    import numpy as np

    dtype = np.dtype(str(d["dtype"]))
    if dtype.kind not in _KINDS or dtype.hasobject:
        raise ValueError(f"dtype {dtype} does not cross")
    shape = tuple(int(s) for s in d["shape"])
    raw = base64.b64decode(str(d["b64"]), validate=True)
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def _num(x):
    if isinstance(x, dict) and set(x) == {"f"}:
        return float(str(x["f"]))
    if type(x) in (int, float):
        return float(x)
    raise ValueError("not a number")


def decode(obj, depth: int = 0):
    """The value that ``encode`` described, built from the real types; raises ValueError on anything else."""
    if depth > MAX_DEPTH + 1:
        raise ValueError("nesting too deep")
    t = type(obj)
    if obj is None or t in (bool, str, int, float):
        return obj
    if t is not dict or len(obj) not in (1, 2):
        raise ValueError(f"unexpected {t.__name__} in the values")
    (key, val), *rest = obj.items()
    if key == "f" and not rest:
        return _num(obj)
    if key == "c" and not rest:
        re, im = val
        return complex(_num(re), _num(im))
    if key == "l" and not rest:
        return [decode(v, depth + 1) for v in val]
    if key == "t" and not rest:
        return tuple(decode(v, depth + 1) for v in val)
    if key == "d" and not rest:
        out = {}
        for k, v in val:
            if type(k) not in (str, int):
                raise ValueError("dict key")
            out[k] = decode(v, depth + 1)
        return out
    if key == "nd" and not rest:
        return _decode_array(val)
    if key == "ns" and not rest:
        return _decode_array(val)[()]
    if key == "tensor":
        import minigrad

        t = minigrad.tensor(_decode_array(val))
        if obj.get("requires_grad") is True:
            t.requires_grad_(True)
        return t
    raise ValueError(f"unknown value tag {key!r}")


def export(namespace: dict, names, nonce: str) -> str:
    """One line, ``nonce + JSON``: each name's encoded value, or why it cannot cross.

    Runs inside the student's kernel (untrusted): whatever it prints is only ever decoded as data.
    """
    import types

    out, size = {}, 0
    for name in names:
        if name not in namespace:
            out[name] = {"missing": True}
            continue
        value = namespace[name]
        if isinstance(value, (types.FunctionType, type)):
            out[name] = {"definition": True}
            continue
        if isinstance(value, types.ModuleType):
            out[name] = {"module": True}
            continue
        try:
            enc = encode(value)
            text = json.dumps(enc)
        except Unsupported as e:
            out[name] = {"unsupported": str(e)[:200]}
            continue
        except (RecursionError, ValueError) as e:
            out[name] = {"unsupported": type(e).__name__}
            continue
        size += len(text)
        out[name] = {"too_large": True} if size > MAX_BYTES else {"value": enc}
    return nonce + json.dumps(out)


def parse_export(text: str, nonce: str, names) -> dict:
    """The values a kernel exported: {name: ("value", v) | ("definition" | "module" | "unsupported", why) |
    ("missing", "")}.

    ``text`` is everything the kernel printed; only the last line starting with the nonce counts,
    and only the requested names are read.
    """
    line = None
    for candidate in text.splitlines():
        if candidate.startswith(nonce):
            line = candidate[len(nonce):]
    result = {n: ("missing", "the kernel did not report it") for n in names}
    if line is None or len(line) > 2 * MAX_BYTES:
        return result
    try:
        got = json.loads(line)
    except ValueError:
        return result
    if not isinstance(got, dict):
        return result
    for n in names:
        entry = got.get(n)
        if not isinstance(entry, dict):
            continue
        if "value" in entry:
            result[n] = ("value", entry["value"])   # still encoded: the checker decodes it
        elif entry.get("definition") or entry.get("module"):
            result[n] = ("definition" if entry.get("definition") else "module", "")
        elif "unsupported" in entry:
            result[n] = ("unsupported", str(entry["unsupported"])[:200])
        elif entry.get("too_large"):
            result[n] = ("unsupported", "too large to pass to the checker (more than 16 MB)")
        else:
            result[n] = ("missing", "")
    return result
