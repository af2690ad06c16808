"""``torch.autograd.graph``: hooks on the tensors that operations save for backward.

``saved_tensors_hooks(pack_hook, unpack_hook)`` decides how every tensor saved for backward is
kept while the context is active: the tensors given to ``ctx.save_for_backward`` by a custom
Function, and those the built-in operations save. As in PyTorch:

* ``pack_hook(tensor)`` runs once, when the operation is recorded (never under ``no_grad``, never
  when no input requires grad), and receives the tensor itself (a saved output: the output);
  the node keeps what it returns instead of the tensor;
* ``unpack_hook(packed)`` runs at every access: each read of ``ctx.saved_tensors`` (once per saved
  tensor, None excepted), each backward through the node (again after ``retain_graph=True``);
* only the innermost pair of nested contexts applies; the hooks belong to the thread that set them;
* the unpacked tensor is a new tensor on the unpacked data, with the original's place in the graph
  (same ``grad_fn``, or the same leaf), and no in-place version check (PyTorch makes none either).

Speed: while no thread has hooks, the recording path pays one test of an empty set (``_HOOKED``).
"""
from __future__ import annotations

import abc
import contextlib
import threading
import weakref
from typing import NamedTuple

from .._tensor import Tensor

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "Node", "GradientEdge",
           "get_gradient_edge", "increment_version"]


class Node(abc.ABC):
    """The type of every graph node (``grad_fn`` objects and AccumulateGrad), for ``isinstance`` checks:
    as in PyTorch, a class counts as a Node when it defines ``next_functions``."""

    @classmethod
    def __subclasshook__(cls, C):
        if cls is Node and any("next_functions" in B.__dict__ for B in C.__mro__):
            return True
        return NotImplemented


class GradientEdge(NamedTuple):
    """Where a tensor's gradient enters the graph: its node and which of the node's outputs it is."""

    node: object
    output_nr: int
    ownership_token: object = None


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The ``GradientEdge`` of ``tensor``: (grad_fn, output_nr), or its AccumulateGrad node for a leaf."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    fn = tensor.grad_fn
    return GradientEdge(tensor._grad_accumulator(), 0) if fn is None else GradientEdge(fn, tensor._output_nr)


def increment_version(tensor) -> None:
    """Count one in-place change of ``tensor`` (or of each tensor of an iterable), without changing its data:
    backward then refuses a saved copy of it, as after a real in-place operation."""
    for t in ((tensor,) if isinstance(tensor, Tensor) else tensor):
        t._bump_version()


class _HooksState(threading.local):
    """This thread's stack of (pack_hook, unpack_hook) pairs, and the message of an active
    ``disable_saved_tensors_hooks`` (None when not disabled)."""

    def __init__(self) -> None:
        self.stack = []
        self.disabled = None


_state = _HooksState()

# The threads (by ident) whose stack is not empty. The recording path tests only this set: while it is
# empty, saving costs one truth test more than without hooks.
_HOOKED: set = set()


def _current():
    """The innermost (pack, unpack) pair of this thread, or None."""
    stack = _state.stack
    return stack[-1] if stack else None


class saved_tensors_hooks:
    """Context manager: ``pack_hook(tensor) -> Any`` runs when an operation saves a tensor for backward,
    ``unpack_hook(packed) -> Tensor`` when backward (or ``ctx.saved_tensors``) needs it back."""

    def __init__(self, pack_hook, unpack_hook) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        st = _state
        if st.disabled is not None:
            raise RuntimeError(st.disabled)
        st.stack.append((self.pack_hook, self.unpack_hook))
        _HOOKED.add(threading.get_ident())

    def __exit__(self, *args) -> None:
        st = _state
        st.stack.pop()
        if not st.stack:
            _HOOKED.discard(threading.get_ident())


class save_on_cpu(saved_tensors_hooks):
    """PyTorch's hooks that move saved tensors to the CPU and back for backward. minigrad keeps every
    tensor on the CPU already, so the move is none; with ``pin_memory=True`` PyTorch packs a copy
    (into pinned memory when CUDA is available), and so does minigrad (a plain copy)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor):
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            return (tensor.device, Tensor._wrap(tensor._data.copy()))

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str):
    """Inside, entering ``saved_tensors_hooks`` raises ``RuntimeError(error_message)``; entering this
    while hooks are active raises it too (as in PyTorch)."""
    st = _state
    prev = st.disabled
    try:
        if st.stack:
            raise RuntimeError(error_message)
        st.disabled = error_message
        yield
    finally:
        st.disabled = prev


# --- how a node keeps hooked saved tensors -------------------------------------------------------------------
# Kinds of entries: where the saved tensor stood in the graph, so that the unpacked one stands there too.
_OUTPUT, _INTERIOR, _LEAF, _PLAIN = range(4)


class _Packed:
    """``ctx._saved`` when hooks were active at save time: per saved item None, or
    (packed, unpack_hook, kind, node, output_nr)."""

    __slots__ = ("items",)

    def __init__(self, items: tuple) -> None:
        self.items = items

    def __bool__(self) -> bool:
        return False  # opaque to readers of _saved such as viz (reading would run the unpack hooks)

    def unpack(self, ctx) -> tuple:
        out = []
        for item in self.items:
            if item is None:
                out.append(None)
                continue
            packed, unpack, kind, node, nr = item
            u = unpack(packed)
            if not isinstance(u, Tensor):
                raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                                f"{type(u).__name__}")
            t = Tensor._wrap(u._data)
            t._vc = u._vc
            if kind == _OUTPUT:
                t.grad_fn, t._output_nr, t._rg = ctx, nr, True
            elif kind == _INTERIOR:
                t.grad_fn, t._output_nr, t._rg = node, nr, True
            elif kind == _LEAF:  # the same leaf: a gradient through it reaches the original's AccumulateGrad
                t._rg = True
                t._extra = {"acc": weakref.ref(node)}
            out.append(t)
        return tuple(out)


def _pack_hooked(ctx, saved: tuple) -> bool:
    """Pack ``saved`` (what ctx saved) with this thread's hooks into ``ctx._saved``; False when this
    thread has none (another thread's hooks are active), and nothing is done."""
    hooks = _current()
    if hooks is None:
        return False
    pack, unpack = hooks
    items = []
    for t in saved:
        if t is None:
            items.append(None)
            continue
        fn = t.grad_fn
        if fn is ctx:
            kind, node = _OUTPUT, None
        elif fn is not None:
            kind, node = _INTERIOR, fn
        elif t._rg:
            kind, node = _LEAF, t._grad_accumulator()
        else:
            kind, node = _PLAIN, None
        items.append((pack(t), unpack, kind, node, t._output_nr))
    ctx._saved = _Packed(tuple(items))
    ctx._saved_versions = None
    ctx._saved_outputs = False
    return True
