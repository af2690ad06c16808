"""What a built-in node shows of its saved state, named as PyTorch names it: ``_saved_self``,
``_saved_other``, ``_saved_result``, ``_saved_self_sym_sizes``, ``_saved_dim``...

PyTorch's built-in nodes are C++ objects without ``saved_tensors`` (that is the custom Function's
ctx API); they expose each saved value as a ``_saved_<name>`` attribute, which is what tools such
as torchviz (``make_dot(..., show_saved=True, show_attrs=True)``) read. minigrad's built-in nodes do
the same through this table: for each node name, a function of the node that returns its
attributes. Nodes missing from the table name their saved tensors by position (``self``, ``other``,
``result`` for the node's own output).
"""
from __future__ import annotations

import numpy as np

INT64_MAX = 9223372036854775807


def _scalar_tensor(value):
    from .._tensor import Tensor

    return Tensor._wrap(np.asarray(value))


def _shape(node, k: int = 0) -> tuple:
    return tuple(node._edges[4 * k + 2] or ())


def _reduced_dims(node) -> tuple:
    shape, kept = getattr(node, "shape", ()), getattr(node, "kept", ())
    return tuple(i for i, (s, k) in enumerate(zip(shape, kept)) if k == 1 and s != 1)


def _pair(node, saved):
    return {"self": saved[0], "other": saved[1]}


def _self(node, saved):
    return {"self": saved[0]}


def _result(node, saved):
    return {"result": saved[0]}


def _index_attrs(node, saved):
    """SelectBackward0 / SliceBackward0: the one dim an index like x[:, 1:3] or x[2] touches."""
    index = getattr(node, "index", None)
    items = index if isinstance(index, tuple) else (index,)
    out = {"self_sym_sizes": _shape(node)}
    for dim, item in enumerate(items):
        if isinstance(item, slice):
            if item == slice(None):
                continue
            out.update(dim=dim, start=0 if item.start is None else item.start,
                       end=INT64_MAX if item.stop is None else item.stop, step=1 if item.step is None else item.step)
            return out
        if isinstance(item, (int, np.integer)):
            out.update(dim=dim, index=int(item))
            return out
    return out


TABLE = {
    "MulBackward0": lambda n, s: ({"self": None, "other": _scalar_tensor(n.c)} if hasattr(n, "c") else _pair(n, s)),
    "DivBackward0": lambda n, s: ({"self": None, "other": _scalar_tensor(n.c)} if hasattr(n, "c") else _pair(n, s)),
    "AddBackward0": lambda n, s: {"alpha": 1},
    "SubBackward0": lambda n, s: {"alpha": 1},
    "RsubBackward1": lambda n, s: {"alpha": 1},
    "NegBackward0": lambda n, s: {},
    "PowBackward0": lambda n, s: {"self": s[0], "exponent": n.c},
    "PowBackward1": lambda n, s: {"self": s[0], "exponent": s[1], "result": s[2]},
    "ExpBackward0": _result, "TanhBackward0": _result, "SigmoidBackward0": _result, "ReluBackward0": _result,
    "SqrtBackward0": _result,
    "LogBackward0": _self, "SinBackward0": _self, "CosBackward0": _self, "SinhBackward0": _self,
    "CoshBackward0": _self, "AbsBackward0": _self, "Log1PBackward0": _self,
    "MaximumBackward0": _pair, "MinimumBackward0": _pair,
    "SumBackward0": lambda n, s: {"self_sym_sizes": _shape(n)},
    "SumBackward1": lambda n, s: {"dim": _reduced_dims(n), "keepdim": False,
                                  "self_sym_sizes": _shape(n)},
    "MeanBackward0": lambda n, s: {"self_sym_numel": int(np.prod(_shape(n), dtype=np.int64)),
                                   "self_sym_sizes": _shape(n)},
    "ViewBackward0": lambda n, s: {"self_sym_sizes": _shape(n)},
    "UnsafeViewBackward0": lambda n, s: {"self_sym_sizes": _shape(n)},
    "ExpandBackward0": lambda n, s: {"self_sym_sizes": _shape(n)},
    "TransposeBackward0": lambda n, s: {"dim0": n.d0, "dim1": n.d1},
    "PermuteBackward0": lambda n, s: {"dims": tuple(int(i) for i in np.argsort(n.inverse))},
    "UnsqueezeBackward0": lambda n, s: {"dim": getattr(n, "d", 0)},
    "SqueezeBackward1": lambda n, s: {"dim": next((i for i, k in enumerate(_shape(n)) if k == 1), 0),
                                      "self_sym_sizes": _shape(n)},
    "SelectBackward0": _index_attrs, "SliceBackward0": _index_attrs,
    "CatBackward0": lambda n, s: {"dim": n.d}, "StackBackward0": lambda n, s: {"dim": n.d},
    "CumsumBackward0": lambda n, s: {"dim": n.dim},
    "SoftmaxBackward0": lambda n, s: {"dim": n.d, "result": s[0]},
    "LogSoftmaxBackward0": lambda n, s: {"dim": n.d, "result": s[0]},
    "MseLossBackward0": lambda n, s: {"reduction": {"none": 0, "mean": 1, "sum": 2}[n.reduction], "self": s[0],
                                      "target": s[1]},
    "ClampBackward1": lambda n, s: {"max": n.hi, "min": n.lo, "self": s[0]},
    "WhereBackward0": lambda n, s: {"condition": n.cond},
    "CloneBackward0": lambda n, s: {}, "SignBackward0": lambda n, s: {},
}


def saved_attributes(node) -> dict:
    """``{name: value}`` for the ``_saved_<name>`` attributes of built-in ``node`` (PyTorch's names)."""
    saved = node._tensors_saved_for_backward if node._saved is not None or node._freed else ()
    fn = TABLE.get(node.name())
    if fn is not None:
        try:
            return fn(node, saved)
        except (AttributeError, IndexError, KeyError, TypeError):
            pass  # an attribute this variant of the op does not store: fall back to the saved tensors
    names = {}
    for k, t in enumerate(saved):
        is_output = t is not None and t.grad_fn is node
        names["result" if is_output else ("self", "other")[k] if k < 2 else f"saved{k}"] = t
    return names


# Every name the table (or the positional fallback) can produce: one descriptor each on the node base class.
NAMES = ("self", "other", "result", "alpha", "exponent", "self_sym_sizes", "self_sym_numel", "dim", "keepdim", "dim0",
         "dim1", "dims", "index", "start", "end", "step", "reduction", "target", "max", "min", "condition") + tuple(
    f"saved{k}" for k in range(2, 8))


class SavedAttribute:
    """``node._saved_<name>``: the value for built-in nodes that have it; AttributeError otherwise (custom nodes)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, node, owner=None):
        if node is None:
            return self
        if node._fast:
            attrs = saved_attributes(node)
            if self.name in attrs:
                return attrs[self.name]
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '_saved_{self.name}'")


def install(node_cls) -> None:
    for name in NAMES:
        setattr(node_cls, "_saved_" + name, SavedAttribute(name))
