"""How minigrad's own operations (``_ops``) are recorded: the same node and ctx as a custom
Function (function.py), through a shorter path, because every recorded operation pays for it.

What the built-ins guarantee, and so what this path does not check or do:

* their forwards are pure NumPy (no minigrad operation inside), so grad mode is not
  switched off around them, and they always return fresh tensors;
* they pass only tensors (or None) to ``save_for_backward``, and positional arguments only;
* they return one gradient per input, so the engine runs their backward directly.

``_apply_pair`` / ``_apply_first`` are ``apply`` specialised for the operators and tensor
methods (two tensors; one tensor and plain values). Shared tuples stand for the values that
repeat (``needs_input_grad``, zero versions, the edges of arguments that need no gradient),
so each recorded operation creates few objects for Python's garbage collector to track.
"""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _new_counter
from .anomaly_mode import _Anomaly
from .function import (_NEEDS, _NOT_TENSOR_EDGE, FunctionCtx, _leaf_node, _new, _next_seq,
                       _pack_saved, _record_edges, _record_saved, _user_stack, _wrap_outputs)
from .grad_mode import _GRAD_OFF, _GradMode
from .graph import _HOOKED, _pack_hooked
_FWD_ACTIVE = False  # True while a forward-AD dual level propagates tangents (set by forward_ad._set_hooks)
from .forward_ad import _apply_builtin as _apply_dual


def _builtin_apply(cls, *args):
    """``apply`` of minigrad's own ops: positional arguments only, no checks they don't need."""
    __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
    if _FWD_ACTIVE:  # a forward-AD dual level is active: tangents too (forward_ad.py)
        return _apply_dual(cls, args)
    if len(args) == 1 and args[0].__class__ is Tensor:
        # One tensor (F.relu, nn.ReLU...): the operators' lean path, 7 Python calls per op instead of 13.
        return _apply_first(cls, args[0])
    if not _GRAD_OFF or _GradMode.enabled:  # grad mode is on (_GRAD_OFF: see grad_mode.py)
        for a in args:
            if isinstance(a, Tensor) and a._rg:
                return _record_builtin(cls, args)
    return cls.forward(_NO_GRAPH_CTX, *args)


_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)


def _record_builtin(cls, args: tuple):
    """``_apply_recording`` (function.py) for a built-in op, with any number of arguments."""
    __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
    ctx = _new(cls._backward_cls)
    ctx._seq = seq = _next_seq()
    _record_edges(ctx, args, seq)
    return _finish(cls, ctx, args, cls.forward(ctx, *args))


def _apply_pair(cls, a: Tensor, b: Tensor):
    """``cls.apply(a, b)`` for a built-in op on two tensors: the binary operators' hot path."""
    __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
    if _FWD_ACTIVE:
        return _apply_dual(cls, (a, b))
    if not ((a._rg or b._rg) and (not _GRAD_OFF or _GradMode.enabled)):
        return cls.forward(_NO_GRAPH_CTX, a, b)
    ctx = _new(cls._backward_cls)
    seq = ctx._seq = _next_seq()
    # The edges (what _record_edges in function.py computes), inline: a call costs as much.
    # Each branch builds its tuple in one go (no concatenation: one tuple fewer per operation).
    if a._rg:
        fa, d = a.grad_fn, a._data
        if fa is None:
            fa = _leaf_node(a, seq, 0)
        if b._rg:
            fb, e = b.grad_fn, b._data
            ctx._edges = (fa, a._output_nr, d.shape, d.dtype,
                          fb if fb is not None else _leaf_node(b, seq, 1), b._output_nr, e.shape, e.dtype)
            ctx.needs_input_grad = _BOTH
        else:
            ctx._edges = (fa, a._output_nr, d.shape, d.dtype, False, 0, None, None)  # _NO_GRAD_EDGE for b
            ctx.needs_input_grad = _FIRST
    else:
        fb, e = b.grad_fn, b._data
        ctx._edges = (False, 0, None, None,  # _NO_GRAD_EDGE for a
                      fb if fb is not None else _leaf_node(b, seq, 1), b._output_nr, e.shape, e.dtype)
        ctx.needs_input_grad = _SECOND
    out = cls.forward(ctx, a, b)
    # Attach the output and record what was saved: _finish, inline for the common case.
    if type(out) is Tensor and ((dt := out._data.dtype) is _F64 or dt is _F32) and not ctx._special:
        out.grad_fn = ctx
        out._rg = True
        saved = ctx._saved
        if saved is not None and not (_HOOKED and _pack_hooked(ctx, saved)):
            for t in saved:
                if t is not None and (t._vc is not None or t is out):
                    _pack_saved(ctx, saved)  # versions to record, or the output to keep as an array
                    break
        if _Anomaly.enabled:
            ctx._forward_trace = _user_stack()
        return out
    return _finish(cls, ctx, (a, b), out)


def _apply_first(cls, a: Tensor, *rest):
    """``cls.apply(a, *rest)`` for a built-in op whose only tensor argument is ``a``."""
    __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
    if _FWD_ACTIVE:
        return _apply_dual(cls, (a, *rest))
    if not (a._rg and (not _GRAD_OFF or _GradMode.enabled)):
        return cls.forward(_NO_GRAPH_CTX, a, *rest)
    ctx = _new(cls._backward_cls)
    seq = ctx._seq = _next_seq()
    fn, d = a.grad_fn, a._data
    edges = (fn if fn is not None else _leaf_node(a, seq, 0)), a._output_nr, d.shape, d.dtype
    if rest:
        k = len(rest)
        ctx._edges = edges + _NOT_TENSOR_EDGE * k
        ctx.needs_input_grad = _NEEDS[k + 1][1 << k] if k < 6 else (True,) + (False,) * k
        return _finish(cls, ctx, (a, *rest), cls.forward(ctx, a, *rest))
    ctx._edges = edges
    ctx.needs_input_grad = _FIRST_OF_ONE
    out = cls.forward(ctx, a)
    # As in _apply_pair.
    if type(out) is Tensor and ((dt := out._data.dtype) is _F64 or dt is _F32) and not ctx._special:
        out.grad_fn = ctx
        out._rg = True
        saved = ctx._saved
        if saved is not None and not (_HOOKED and _pack_hooked(ctx, saved)):
            if len(saved) == 1 and saved[0] is out:
                # exp, relu, sigmoid, tanh, sqrt save only their fresh output (_pack_saved's first case,
                # inline: 2 of the 5 ops of benchmark (a) skip a call)
                vc = out._vc = _new_counter()
                ctx._saved = ((out._data, vc, 0),)
                ctx._saved_outputs = True
            else:
                for t in saved:
                    if t is not None and (t._vc is not None or t is out):
                        _pack_saved(ctx, saved)
                        break
        if _Anomaly.enabled:
            ctx._forward_trace = _user_stack()
        return out
    return _finish(cls, ctx, (a,), out)


_BOTH, _FIRST, _SECOND, _FIRST_OF_ONE = (True, True), (True, False), (False, True), (True,)


def _finish(cls, ctx, args: tuple, out):
    """Attach the output(s) of a built-in forward to its node and record the saved tensors' versions."""
    __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
    if type(out) is Tensor and out._data.dtype.kind == "f" and not ctx._special:
        out.grad_fn = ctx  # the common case: one fresh floating output
        out._rg = True
    else:
        out, _ = _wrap_outputs(cls, ctx, args, out)
    if ctx._saved is not None:  # set by _trusted_save_for_backward
        _record_saved(ctx, ctx._saved)
    if _Anomaly.enabled:
        ctx._forward_trace = _user_stack()
    return out


def _trusted_save_for_backward(self, *tensors) -> None:
    """save_for_backward for minigrad's own ops: they pass tensors or None, so skip the checks.

    The tuple goes straight to ``_saved``; ``_finish`` (or its inline copies) then records the versions.
    """
    self._saved = tensors


class _NoGraphCtx(FunctionCtx):
    """The ctx given to built-in forwards when nothing is recorded: it keeps nothing."""

    needs_input_grad = (False,) * 64

    def save_for_backward(self, *tensors) -> None:
        pass

    def mark_non_differentiable(self, *tensors) -> None:
        pass

    def __setattr__(self, name, value) -> None:
        pass


_NO_GRAPH_CTX = _NoGraphCtx()
