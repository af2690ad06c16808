"""Forward-mode automatic differentiation: dual tensors, as ``torch.autograd.forward_ad``.

Inside ``with dual_level():`` a tensor may carry a *tangent* (a direction ``t`` in input
space); every operation then also computes the tangent of its output, the Jacobian-vector
product ``J t``, alongside the value. One forward pass gives the derivative of every output
along one input direction, where backward gives the gradient of one output against every input.

How minigrad does it:

* A tangent is an ordinary minigrad Tensor, kept in the primal's ``_extra`` dict under the
  current level's token. Tangents are computed with minigrad operations, so they are themselves
  differentiable: a backward run with ``create_graph=True`` inside a dual level carries tangents
  (forward-over-reverse: Hessian-vector products).
* ``_ACTIVE`` is non-empty only while a level is active and propagation is not paused. Every
  ``apply`` path tests it first (``if _ACTIVE:``): with no dual level, forward AD costs one test.
* The apply paths then call ``_apply_builtin`` / ``_apply_custom`` below: the op runs as usual with
  propagation paused (its forward sees no tangents, as in PyTorch), then the op's jvp rule
  (``cls._jvp`` for minigrad's own ops, see ``_jvp_rules.py``; the ``jvp`` staticmethod of a
  custom Function) gives the output tangents, also computed with propagation paused (a tangent
  never has a tangent of its own at the same level).
"""
from __future__ import annotations

import sys
import weakref
from typing import Any, NamedTuple

import numpy as np

from .._tensor import Tensor

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual"]

# Non-empty (it holds the level's token) while a dual level is active and tangents propagate.
_ACTIVE: list = []
# The modules whose hot path tests a plain bool global ``_FWD_ACTIVE`` (a bool: the test is the cheapest
# Python has, no call; benchmarks/README.md); _set_hooks keeps it equal to bool(_ACTIVE).
_HOOK_MODULES = ("minigrad.autograd._builtin", "minigrad.autograd.function", "minigrad._ops")


def _set_hooks(on: bool) -> None:
    for name in _HOOK_MODULES:
        module = sys.modules.get(name)
        if module is not None:
            module._FWD_ACTIVE = on
_current_level = -1      # PyTorch's name: -1 when no level exists, else 0 (one level at most)
_token: object | None = None  # identifies the active level; tangents stored under an older token are stale
_carriers: dict = {}     # id(tensor) -> weakref: the tensors holding a tangent, cleared on exit
_ENGINE: list = []       # function.py's recording helpers, bound at the first level (no import cycle)


class _Level:
    """The token of one dual level (a fresh object per ``enter_dual_level``)."""

    __slots__ = ("__weakref__",)


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal (a view without tangent) and the tangent (or None)."""

    primal: Tensor
    tangent: Tensor | None


# --- levels -----------------------------------------------------------------------------------------------------
def enter_dual_level() -> int:
    """Open a new dual level and return it (0: PyTorch supports a single level)."""
    global _current_level, _token
    if _current_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment\n"
                           "forward_ad: exit the current dual level (leave its `with dual_level():` block) first; "
                           "for derivatives of derivatives nest minigrad.func.jvp or combine with backward.")
    from . import _jvp_rules
    from ._builtin import _finish
    from .function import _new, _next_seq, _pack_saved, _record_edges
    from .grad_mode import _GradMode

    _jvp_rules.install()
    _ENGINE[:] = (_new, _next_seq, _pack_saved, _record_edges, _finish, _GradMode)  # for _apply_builtin
    _current_level = 0
    _token = _Level()
    _ACTIVE[:] = [_token]
    _set_hooks(True)
    return _current_level


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the dual level: every tangent of that level is dropped."""
    global _current_level, _token
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.\n"
                           "forward_ad.exit_dual_level: no dual level is active (enter_dual_level() opens one).")
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           f"not supported.\nThe active level is {_current_level}, level={level} was given.")
    token = _token
    for ref in list(_carriers.values()):
        t = ref()
        if t is not None and t._extra is not None and t._extra.get("fw_grad", (None,))[0] is token:
            del t._extra["fw_grad"]
    _carriers.clear()
    _current_level = -1
    _token = None
    _ACTIVE.clear()
    _set_hooks(False)


class dual_level:
    """``with dual_level():``: the region in which tensors can carry tangents.

    On exit every tangent made inside is dropped, so that a later forward pass starts clean.
    Also usable as a decorator, as PyTorch's.
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)

        return wrapper


# --- tangents ---------------------------------------------------------------------------------------------------
def _tangent(t: Any) -> Tensor | None:
    """The tangent of ``t`` at the active level (None: not a tensor, no tangent, no level, or paused:
    a custom Function's forward sees its inputs without tangents, as in PyTorch)."""
    extra = getattr(t, "_extra", None)
    if extra is None or not _ACTIVE:
        return None
    entry = extra.get("fw_grad")
    if entry is None or entry[0] is not _ACTIVE[0]:
        return None
    return entry[1]


def _set_tangent(t: Tensor, tangent: Tensor | None) -> None:
    """Attach ``tangent`` to ``t`` at the active level (None removes it). No checks."""
    if tangent is None:
        if t._extra is not None:
            t._extra.pop("fw_grad", None)
        return
    if t._extra is None:
        t._extra = {}
    t._extra["fw_grad"] = (_token, tangent)
    key = id(t)
    _carriers[key] = weakref.ref(t, lambda _r, key=key: _carriers.pop(key, None))


class _paused:
    """Stop tangent propagation for a block (the op's own forward and its jvp run like this)."""

    __slots__ = ("prev",)

    def __enter__(self) -> None:
        self.prev = _ACTIVE[:]
        if self.prev:
            _ACTIVE.clear()
            _set_hooks(False)

    def __exit__(self, *exc) -> None:
        if self.prev:
            _ACTIVE[:] = self.prev
            _set_hooks(True)


def _alias(t: Tensor) -> Tensor:
    """A view of ``t`` with the same values, recorded (``ViewBackward0``) so gradients reach ``t``."""
    from .._ops.shape import View

    with _paused():
        return View.apply(t, tuple(t._data.shape))


def _torch_dtype(t: Tensor) -> str:
    return f"torch.{t.dtype.name}" if not str(t.dtype).startswith("torch.") else str(t.dtype)


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` that carries ``tangent`` as its forward gradient (inside a dual level)."""
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.\nmake_dual is only valid inside `with "
                           "minigrad.autograd.forward_ad.dual_level():`.")
    if not isinstance(tensor, Tensor):
        raise AttributeError(f"'{type(tensor).__name__}' object has no attribute 'is_floating_point'\n"
                             "make_dual(tensor, tangent): the primal must be a tensor.")
    if tensor._data.dtype.kind != "f":
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}\n"
                         "make_dual: forward AD differentiates floating tensors; convert with .double().")
    if not isinstance(tangent, Tensor):
        raise AttributeError(f"'{type(tangent).__name__}' object has no attribute 'is_floating_point'\n"
                             "make_dual(tensor, tangent): the tangent must be a tensor of the primal's shape.")
    if tangent._data.dtype.kind != "f":
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}\n"
                         "make_dual: the tangent is a direction of change; give it a floating dtype.")
    if level != _current_level:
        raise RuntimeError(f"Invalid level given to _make_dual\nThe active dual level is {_current_level}.")
    if _tangent(tensor) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
                           f"level {level} is not supported.\nmake_dual: unpack_dual(x).primal is the tensor "
                           "without its tangent.")
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor._data.shape)} while the "
                           f"given forward gradient is of size {list(tangent._data.shape)}.\nmake_dual: the tangent "
                           "must have the primal's shape.")
    if _tangent(tangent) is not None:
        raise RuntimeError(f"Setting a forward grad that itself has a forward gradient at the same level{level} is "
                           "not supported.\nmake_dual: pass unpack_dual(tangent).primal as the tangent.")
    dual = _alias(tensor)
    _set_tangent(dual, tangent)
    return dual


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of a dual tensor; the tangent is None if it has none (or outside a level)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"_unpack_dual(): argument 'dual' (position 1) must be Tensor, not {type(tensor).__name__}"
                        "\nunpack_dual takes a tensor.")
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if level != _current_level:
        raise RuntimeError(f"Invalid level given to _fw_primal\nThe active dual level is {_current_level}.")
    tangent = _tangent(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_alias(tensor), tangent)


# --- propagation through operations -------------------------------------------------------------------------------
def _op_label(cls) -> str:
    """How the error names an op: PyTorch's aten name where minigrad knows it (exp, mm...), else the class."""
    node = getattr(cls, "_node_name", None)
    if not node:
        return cls.__name__
    stem = node.rstrip("0123456789")
    return (stem[:-len("Backward")] if stem.endswith("Backward") and len(stem) > len("Backward") else stem).lower()


def _no_jvp(cls) -> NotImplementedError:
    return NotImplementedError(
        f"Trying to use forward AD with {_op_label(cls)} that does not support it because it has not been "
        f"implemented yet.\nminigrad: {cls.__name__} has no jvp rule (minigrad/autograd/_jvp_rules.py); compute "
        "this derivative with backward (reverse mode) instead."
    )


def _zeros_like(a: Tensor) -> Tensor:
    return Tensor._wrap(np.zeros(a._data.shape, a._data.dtype))


def _attach(cls, ctx, out, out_tangents, inputs: tuple = (), custom: bool = False) -> None:
    """Give each floating output its tangent (a tuple of outputs takes a tuple of tangents).

    ``custom``: the tangents come from a user's jvp, checked as PyTorch checks them. ``inputs``: the
    input tangents; a rule's result that *is* one of them (clone's, x + 1's) is copied, so that an
    in-place change of the output's tangent (a dirty Function's jvp) cannot reach the input's.
    """
    outs = out if isinstance(out, tuple) else (out,)
    if custom:
        got = out_tangents if isinstance(out_tangents, tuple) else (out_tangents,)
        if len(got) != len(outs):
            raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients (expected {len(outs)} "
                               f"but got {len(got)})\n{cls.__name__}.jvp must return one tangent per output of "
                               "forward (None for outputs that have none).")
        for i, (o, t) in enumerate(zip(outs, got)):
            if t is not None and not (isinstance(o, Tensor) and o._data.dtype.kind == "f" and not any(
                    o is n or o._data is n._data for n in ctx._non_differentiable)):
                raise RuntimeError(f"Function's jvp returned a gradient at position {i}, but  the corresponding "
                                   "forward output is not a differentiable Tensor.You should return None at that "
                                   f"position instead.\n{cls.__name__}.jvp: output {i} is an integer tensor, not a "
                                   "tensor, or marked non-differentiable.")
        pairs = zip(outs, got)
    elif isinstance(out, tuple):
        if not isinstance(out_tangents, (tuple, list)):
            out_tangents = (out_tangents,)
        pairs = zip(out, out_tangents)
    else:
        if isinstance(out_tangents, (tuple, list)):
            out_tangents = out_tangents[0] if len(out_tangents) == 1 else out_tangents
        pairs = ((out, out_tangents),)
    kept = {}
    for i, (o, t) in enumerate(pairs):
        if not isinstance(o, Tensor) or o._data.dtype.kind != "f" or t is None:
            continue
        if any(o is n or o._data is n._data for n in ctx._non_differentiable):
            continue
        if not custom and any(t is x for x in inputs):
            t = t.clone()
        if not isinstance(t, Tensor):
            t = Tensor._wrap(np.asarray(t, dtype=o._data.dtype))
        if t._data.shape != o._data.shape:
            if t._data.size == o._data.size:
                t = t.reshape(o._data.shape)
            else:
                try:
                    with _paused():
                        t = t.expand(*o._data.shape)  # a tangent that broadcasts (a rule's scalar factor)
                except Exception:
                    raise RuntimeError(
                        f"Trying to set a forward gradient that has a different size than that of the original "
                        f"Tensor, this is not supported. Tensor is of size {list(o._data.shape)} while the given "
                        f"forward gradient is of size {list(t._data.shape)}.\n{cls.__name__}.jvp returned a "
                        f"tangent of the wrong shape for output {i}.") from None
        _set_tangent(o, t)
        kept[i] = t
    if kept and ctx is not None and ctx._saved_outputs:
        # saved outputs are kept as arrays (function.py); saved_tensors gives them back their tangent
        ctx._fw_out = (_token, kept)


def _reattach(ctx, t: Tensor, output_nr: int) -> None:
    """``saved_tensors`` rebuilt output ``output_nr`` of ``ctx``: give it its tangent back."""
    token, kept = ctx._fw_out
    if token is _token and _token is not None and output_nr in kept:
        _set_tangent(t, kept[output_nr])


def _apply_builtin(cls, args: tuple):
    """``cls.apply(*args)`` of a built-in op while a dual level is active."""
    tangents = tuple(_tangent(a) if isinstance(a, Tensor) else None for a in args)
    if not any(t is not None for t in tangents):
        with _paused():
            return cls.apply(*args)
    rule = cls.__dict__.get("_jvp") or getattr(cls, "_jvp", None)
    if rule is None:
        raise _no_jvp(cls)
    _new, _next_seq, _pack_saved, _record_edges, _finish, _GradMode = _ENGINE

    with _paused():
        ctx = _new(cls._backward_cls)
        recording = _GradMode.enabled and any(isinstance(a, Tensor) and a._rg for a in args)
        if recording:
            ctx._seq = seq = _next_seq()
            _record_edges(ctx, args, seq)
            recorded_needs = ctx.needs_input_grad
        need = tuple((isinstance(a, Tensor) and a._rg and recording) or t is not None for a, t in zip(args, tangents))
        ctx.needs_input_grad = need
        out = cls.forward(ctx, *args)
        if recording:
            out = _finish(cls, ctx, args, out)
        else:
            saved = ctx._saved
            if saved is not None and any(s is not None and s._vc is not None for s in saved):
                _pack_saved(ctx, saved)  # record the versions of inputs changed in place earlier
        out_t = rule(cls, ctx, args, out, tangents)
        if recording:
            ctx.needs_input_grad = recorded_needs  # what the graph needs (backward may skip the others)
    _attach(cls, ctx, out, out_t, tangents)
    return out


def _has_custom_jvp(cls) -> bool:
    from .function import Function

    return getattr(cls, "jvp", None) is not Function.jvp


def _apply_custom(cls, args: tuple):
    """``Function.apply`` while a dual level is active: forward without tangents, then ``jvp``."""
    tangents = tuple(_tangent(a) if isinstance(a, Tensor) else None for a in args)
    if not any(t is not None for t in tangents):
        with _paused():
            return cls.apply(*args)
    rule = getattr(cls, "_jvp", None)
    if rule is None and not _has_custom_jvp(cls):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with forward mode AD.\n"
            f"{cls.__name__} has a backward but no jvp: add @staticmethod jvp(ctx, *tangents) returning one tangent "
            "per output (ctx.save_for_forward(...) keeps what it needs)."
        )
    from .anomaly_mode import _Anomaly
    from .function import _check_dirty_leaves, _next_seq, _record_edges, _record_saved, _user_stack, _wrap_outputs
    from .grad_mode import _GradMode, _set_grad_mode

    with _paused():
        ctx = cls._backward_cls()
        recording = _GradMode.enabled and any(isinstance(a, Tensor) and a._rg for a in args)
        if recording:
            ctx._seq = seq = _next_seq()
            _record_edges(ctx, args, seq)
        else:
            ctx.needs_input_grad = (False,) * len(args)
        recorded_needs = ctx.needs_input_grad
        if rule is not None:  # minigrad's own op: forward saves what the rule's backward call will need
            ctx.needs_input_grad = tuple(n or t is not None for n, t in zip(recorded_needs, tangents))
        enabled = _set_grad_mode(False)
        try:
            if cls._new_style:
                out = cls.forward(*args)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args)
        finally:
            _set_grad_mode(enabled)
        if recording:
            out, _ = _wrap_outputs(cls, ctx, args, out)
            to_save = ctx._to_save
            if to_save is not None:
                ctx._to_save = None
                _record_saved(ctx, to_save)
            if _Anomaly.enabled:
                ctx._forward_trace = _user_stack()
        elif ctx._dirty:
            _check_dirty_leaves(cls, ctx._dirty)
        if rule is not None:  # one of minigrad's own ops written as a Function (nn: conv2d, pooling...)
            out_t = rule(cls, ctx, args, out, tangents)
            ctx.needs_input_grad = recorded_needs
        else:
            out_t = _call_user_jvp(cls, ctx, args, tangents)
    _attach(cls, ctx, out, out_t, tangents, custom=rule is None)
    return out


def _call_user_jvp(cls, ctx, args: tuple, tangents: tuple):
    """Run the user's ``jvp(ctx, *tangents)`` with ``saved_tensors`` giving what save_for_forward kept."""
    grads = tuple(t if t is not None else (_zeros_like(a) if isinstance(a, Tensor) else None)
                  for a, t in zip(args, tangents))
    saved, to_save = ctx.__dict__.get("_saved"), ctx.__dict__.get("_to_save")
    ctx._saved, ctx._to_save = None, getattr(ctx, "_saved_for_forward", None) or ()
    try:
        return cls.jvp(ctx, *grads)
    finally:
        ctx._saved, ctx._to_save = saved, to_save
        if saved is None:
            del ctx._saved
        if to_save is None:
            del ctx._to_save


def _inplace(target: Tensor, source: Tensor) -> None:
    """An in-place op wrote ``source``'s values into ``target``: the tangent follows."""
    t = _tangent(source)
    if t is not None or _tangent(target) is not None:
        _set_tangent(target, t if t is not None else _zeros_like(target))


def _apply_inplace(a: Tensor, fn_cls, args: tuple, what: str) -> Tensor:
    """An in-place op (``x.mul_(y)``, ``x[i] = v``...) while a dual level is active.

    The op runs twice: once out of place on a copy that carries ``a``'s tangent (that gives the
    new tangent), once as the ordinary in-place write with propagation paused. The tangent is
    then replaced, not written into: tangent arrays may be shared (clone's is its input's). On
    a view, the base's tangent becomes "the base's tangent with the view's region replaced",
    and the view's tangent the same view of it.
    """
    from .._ops import _run_inplace
    from .._ops.shape import ViewCopySlices, replay_view

    ta = _tangent(a)
    if ta is None and not any(_tangent(x) is not None for x in args):
        with _paused():
            return _run_inplace(a, fn_cls, args, what)
    probe = Tensor._wrap(a._data.copy())
    # on a's place in the graph, as _run_inplace's snapshot: the tangent stays differentiable (reverse-over-forward)
    probe.grad_fn, probe._output_nr, probe._rg = a.grad_fn, a._output_nr, a._rg
    if ta is not None:
        _set_tangent(probe, ta)
    out = fn_cls.apply(probe, *args)
    new_t = _tangent(out)
    base, steps = a._base, a._get_extra("view_steps")
    bt = _tangent(base) if base is not None else None
    with _paused():
        result = _run_inplace(a, fn_cls, args, what)
        if new_t is None:
            new_t = _zeros_like(a)
        elif new_t._data.shape != a._data.shape or new_t._data.dtype != a._data.dtype:
            new_t = new_t.expand(*a._data.shape).to(a.dtype)
        if base is not None and steps is not None:
            new_bt = ViewCopySlices.apply(bt if bt is not None else _zeros_like(base), new_t, steps)
            _set_tangent(base, new_bt)
            _set_tangent(a, replay_view(new_bt, steps, tensor=True))
        else:
            _set_tangent(a, new_t)
    return result
