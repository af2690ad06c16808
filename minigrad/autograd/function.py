"""Custom differentiable operations: ``Function``, its ``ctx`` and the graph nodes.

How it fits together (the same design as PyTorch):

* You subclass ``Function`` and write static ``forward(ctx, *args)`` and
  ``backward(ctx, *grad_outputs)``; you call ``MyFunction.apply(*args)``.
* ``apply`` creates the ctx object. The ctx *is* the graph node: an instance of the
  class ``<YourName>Backward`` generated for your Function. It remembers the edges to
  the nodes that produced the inputs (``next_functions``), which inputs need a
  gradient (``needs_input_grad``) and the tensors you saved for backward.
* ``forward`` runs with grad mode off; ``apply`` then sets the outputs' ``grad_fn`` to
  the node. ``backward`` later receives one gradient per output and *returns* one
  gradient per input (``None`` for non-tensor inputs or inputs that need none).

Every built-in operation of minigrad (``_ops``) is written this way too; ``_builtin.py``
records them with the same node and ctx, minus the checks a user's Function needs.
"""
from __future__ import annotations

import functools
import itertools
import sys
import traceback
import types
import warnings
from typing import Any

import numpy as np

from .._tensor import _AT_ZERO, RemovableHandle, Tensor, _new_counter, _read_version
from ._saved_attrs import install as _install_saved_attributes
from .anomaly_mode import _Anomaly
from .grad_mode import _GradMode, _set_grad_mode, no_grad
from .graph import _HOOKED, _Packed, _pack_hooked
from . import forward_ad as _forward_ad
_FWD_ACTIVE = False  # True while a forward-AD dual level propagates tangents (set by forward_ad._set_hooks)
from ._transform_state import STATE as _TRANSFORMS
from ._transform_state import check_function_supported as _check_transform_support
from .._functorch._state import ACTIVE as _VMAP_ACTIVE
from .._functorch.batched import BatchedArray as _BatchedArray

_new = object.__new__
_wrap = Tensor._wrap
_next_seq = itertools.count(1).__next__  # creation order of graph nodes: the engine runs newest first

ERR_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)

_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "int64": "LongTensor", "int32": "IntTensor", "bool": "BoolTensor"}


def _op_name(node) -> str:
    """How PyTorch names the operation behind a node in errors: ``Exp`` for ExpBackward0, ``MyFn`` for MyFnBackward."""
    name = node.name()
    stem = name.rstrip("0123456789")
    return stem[:-len("Backward")] if stem.endswith("Backward") and len(stem) > len("Backward") else name


def _describe(t: Tensor) -> str:
    """``torch.FloatTensor [3, 4]``: how PyTorch names a tensor in its error messages."""
    return f"torch.{_TYPE_NAMES.get(t.dtype.name, t.dtype.name)} [{', '.join(map(str, t._data.shape))}]"


# A saved *output* of a node is kept as the tuple (array, version counter, output_nr), not
# as the Tensor, because the Tensor points back at the node through ``grad_fn`` and the
# cycle would outlive the graph.

_FREED = object()  # what a node's _saved becomes when backward frees its saved tensors


class FunctionCtx:
    """The ``ctx`` that ``forward`` and ``backward`` receive.

    Tensors needed by backward go through ``save_for_backward`` (they are checked for
    in-place changes and freed after backward); anything else can be stored as a plain
    attribute, e.g. ``ctx.scale = 2``.
    """

    # Class-level defaults: an instance only stores what an operation actually sets.
    _to_save: tuple | None = None
    _saved: tuple | None = None  # what save_for_backward saved (None: nothing; _FREED: freed by backward)
    _saved_versions: tuple | None = None  # bytes(counter) of each saved tensor when saved (None: all at 0)
    _saved_outputs = False  # some saved tensors are this node's outputs, kept as (array, counter, nr)
    _fw_out = None  # forward AD: (level token, {output_nr: tangent}) of saved outputs (forward_ad._attach)
    _dirty: tuple = ()
    _non_differentiable: tuple = ()
    _special = False  # set by mark_dirty / mark_non_differentiable: outputs need the general path
    materialize_grads = True
    needs_input_grad: tuple = ()

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep tensors for backward (call once, from forward)."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward can only save variables, but argument {i} is of type "
                    f"{type(t).__name__}\n{self._who()}: only tensors (or None) go through "
                    f"save_for_backward; store other values as ctx attributes, e.g. ctx.value = ..."
                )
        self._to_save = tensors

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Keep tensors for ``jvp`` (forward-mode AD), which reads them as ``ctx.saved_tensors``."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise AssertionError(
                    f"save_for_forward expects all arguments to be tensors; you should save non-tensors as "
                    f"attributes on ctx.\n{self._who()}: argument {i} is of type {type(t).__name__}."
                )
        self._saved_for_forward = tensors

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward``, checked against in-place changes."""
        __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
        saved = self._saved
        if type(saved) is not tuple:
            if saved.__class__ is _Packed:  # saved under saved_tensors_hooks: unpack_hook at every access
                return saved.unpack(self)
            if saved is _FREED:
                raise RuntimeError(
                    ERR_BACKWARD_TWICE + f"\n{self._who()}: its saved tensors were freed by the first "
                    "backward. Pass retain_graph=True to the first backward() if you need a second one."
                )
            return self._to_save or ()  # nothing saved, or read inside forward itself
        versions = self._saved_versions
        if not self._saved_outputs:
            # Only inputs (or None) were saved: check their versions and hand back the tuple itself.
            i = 0
            for t in saved:
                if t is not None:
                    vc = t._vc
                    if vc is not None and vc != (_AT_ZERO if versions is None else versions[i]):
                        raise self._modified_error(i, t, vc, _AT_ZERO if versions is None else versions[i])
                i += 1
            return saved
        out = []
        i = 0
        for s in saved:
            expected = _AT_ZERO if versions is None else versions[i]
            if type(s) is tuple:  # a saved output: a new tensor on its array, pointing back here
                data, vc, output_nr = s
                s = _wrap(data)
                s._vc, s.grad_fn, s._output_nr, s._rg = vc, self, output_nr, True
                if self._fw_out is not None:  # forward AD: the output's tangent comes back with it
                    _forward_ad._reattach(self, s, output_nr)
                if vc != expected:
                    raise self._modified_error(i, s, vc, expected)
            elif s is not None and s._vc is not None and s._vc != expected:
                raise self._modified_error(i, s, s._vc, expected)
            out.append(s)
            i += 1
        return tuple(out)

    # The same property under a private name: built-in nodes hide ``saved_tensors`` (as PyTorch's do) and
    # their backward code reads this one (see _private_saved_tensors).
    _tensors_saved_for_backward = saved_tensors

    @property
    def saved_variables(self) -> tuple:
        """The old name of ``saved_tensors`` (deprecated in PyTorch, which warns)."""
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    @property
    def _freed(self) -> bool:
        return self._saved is _FREED

    def _saved_arrays(self) -> tuple:
        """The arrays of ``saved_tensors``, after the same checks: for the NumPy formulas of the
        built-in backwards, which need no Tensor around a saved output."""
        saved = self._saved
        if type(saved) is tuple and len(saved) == 1 and type(s := saved[0]) is tuple and s[1] == _AT_ZERO:
            return (s[0],)  # the common case: the node's own output (exp, relu...), unchanged since (version 0)
        return tuple(None if t is None else t._data for t in self._tensors_saved_for_backward)

    def _modified_error(self, i: int, t: Tensor, counter, saved_at) -> RuntimeError:
        """The error for a saved tensor changed in place (returned, so that the traceback ends at the check)."""
        version, expected = _read_version(counter), _read_version(saved_at)
        origin = (f", which is output {t._output_nr} of {_op_name(t.grad_fn)}," if t.grad_fn is not None else "")
        hint = ("Hint: the backtrace further above shows the operation that failed to compute its gradient. "
                "The variable in question was changed in there or anywhere later. Good luck!"
                if _Anomaly.enabled else
                "Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
                "with torch.autograd.set_detect_anomaly(True, check_nan=False).")
        return RuntimeError(
            "one of the variables needed for gradient computation has been modified by an inplace "
            f"operation: [{_describe(t)}]{origin} is at version {version}; expected version {expected} "
            f"instead. {hint}\n{self._who()}: saved_tensors[{i}] was saved in forward and then changed in "
            "place (an op ending in '_', x[...] = ..., or +=), so backward would use the wrong values. "
            "Use an out-of-place op, or save a clone()."
        )

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Declare inputs that forward modified in place (they must be returned as outputs)."""
        self._dirty = tensors
        self._special = True

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Declare outputs that have no gradient (e.g. indices); backward gets zeros for them."""
        self._non_differentiable = tensors
        self._special = True

    def set_materialize_grads(self, value: bool) -> None:
        """If False, backward receives None (not zeros) for outputs that got no gradient."""
        self.materialize_grads = bool(value)

    def _who(self) -> str:
        fwd = getattr(self, "_forward_cls", None)
        return f"In {fwd.__name__ if fwd else 'this Function'} ({type(self).__name__})"


class BackwardNode(FunctionCtx):
    """A node of the backward graph. ``grad_fn`` of a tensor is one of these."""

    _forward_cls: Any = None
    _engine_forward_cls: Any = None  # when set, whose backward the engine runs (the grader's bridge nodes)
    _seq = 0                     # sequence number: every node is newer than the nodes its edges point to
    # The edges: 4 entries per forward argument, in one flat tuple (fewer objects per node):
    # node that produced it (False: a tensor that needs no grad, None: not a tensor), its
    # output_nr, and the argument's shape and dtype (the gradient must match them).
    _edges: tuple = ()
    _n_outputs = 1
    _output_meta: tuple = ()     # (shape, dtype) per output of a custom Function's node
    _fast = False                # a built-in op's node: the engine skips re-validating its results
    # The built-in's backward, for the engine's shortest path: one output and no hooks (else None).
    _fast_backward = None
    _hooked = False              # set when a tensor hook or retain_grad is registered on an output
    _hooks: dict | None = None   # {output_nr: {handle_id: hook}}: tensor hooks on non-leaf outputs
    _retain: dict | None = None  # {output_nr: weakref to tensor}: retain_grad()
    _forward_trace = None        # anomaly mode: where forward was called
    _metadata: dict | None = None

    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self) -> tuple:
        # One entry per tensor input (and per Python-number operand of arithmetic, as PyTorch
        # wraps those into tensors); (None, 0) for inputs that need no gradient.
        keep = self._forward_cls is not None and self._forward_cls._scalar_operands
        edges = self._edges
        return tuple((edges[j], edges[j + 1]) if edges[j] else (None, 0)
                     for j in range(0, len(edges), 4) if edges[j] is not None or keep)

    @property
    def metadata(self) -> dict:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def __dir__(self):
        # minigrad's own bookkeeping (_saved_versions...) is left out: tools read "_saved_*" names as PyTorch's
        names = [n for n in super().__dir__() if not n.startswith("_saved_")]
        if self._fast:
            from ._saved_attrs import saved_attributes

            names = [n for n in names if n != "saved_tensors"]
            try:
                names += ["_saved_" + k for k in saved_attributes(self)]
            except RuntimeError:
                pass  # freed by backward: nothing to show
        return names

    def _add_tensor_hook(self, output_nr: int, hook) -> RemovableHandle:
        self._hooked = True
        self._fast_backward = None
        if self._hooks is None:
            self._hooks = {}
        return RemovableHandle(self._hooks.setdefault(output_nr, {}), hook)

    def _add_retain_grad(self, output_nr: int, ref) -> None:
        self._hooked = True
        self._fast_backward = None
        if self._retain is None:
            self._retain = {}
        self._retain[output_nr] = ref

    def _release(self) -> None:
        """Free saved tensors after backward (unless retain_graph)."""
        if self._saved is not None:
            self._saved = _FREED


# A built-in node's saved values under PyTorch's names (_saved_self, _saved_result...): class-level descriptors
# (not __getattr__, which would slow every attribute read of every node); see _saved_attrs.py.
_install_saved_attributes(BackwardNode)


class AccumulateGrad(BackwardNode):
    """The node at the bottom of the graph that adds a gradient into a leaf's ``.grad``."""

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"  # PyTorch's name for it (a C++ class)

    def _accumulate(self, grad: Tensor, create_graph: bool) -> None:
        var = self.variable
        if grad._data.__class__ is _BatchedArray:  # per-sample gradients (vmap) for a tensor with fewer batch dims
            from .._functorch.vmap import unbatch_grad

            grad = unbatch_grad(grad, var)
        hooks = var._get_extra("hooks")
        if hooks:
            for hook in list(hooks.values()):
                new = hook(grad)
                if new is not None:
                    grad = new
        if var._grad is None:
            if create_graph:
                var._grad = grad
                return
            arr = grad._data
            if (not hooks and sys.getrefcount(grad) <= _HELD_BY_CALLER and sys.getrefcount(arr) <= _HELD_BY_ONE
                    and arr.base is None and arr.flags.writeable and not grad._rg and grad._extra is None):
                # Nothing but the engine's loop holds this fresh gradient, and nothing but the
                # gradient holds its array: .grad takes the tensor itself, without a copy, as
                # PyTorch's AccumulateGrad does. A gradient that also flows to another leaf
                # (x + y: the same tensor twice), that anyone else holds, or that carries autograd
                # state of its own (a custom backward returned a tensor that requires grad) is copied.
                var._grad = grad
            else:
                var._grad = Tensor._wrap(arr.copy())
        elif create_graph:
            var._grad = var._grad + grad
        else:
            var._grad = Tensor._wrap(var._grad._data + grad._data)


AccumulateGrad.__name__ = "AccumulateGrad"


def _refcount_in_callee(x) -> int:
    return sys.getrefcount(x)


def _unshared_refcounts() -> tuple[int, int]:
    """What ``sys.getrefcount`` reports in ``_accumulate`` for a gradient that nobody else holds.

    Measured in the same situation, not assumed (Python versions count differently): the gradient
    is held by a variable of its caller (the engine's loop) and by the argument; its array by
    the gradient and by a local variable.
    """
    grad = object()
    held_by_caller = _refcount_in_callee(grad)
    arr = object()
    tensor = [arr]  # noqa: F841  (holds arr, as a Tensor's _data does)
    return held_by_caller, sys.getrefcount(arr)


_HELD_BY_CALLER, _HELD_BY_ONE = _unshared_refcounts()


def _call_builtin_node(node, *grads):
    """``y.grad_fn(grad)``: run one built-in node's backward by hand, as PyTorch's nodes allow.

    One gradient per output of the node; returns the gradient for each of its next_functions
    (a tuple, or the tensor alone when there is one), computed in the current grad mode and
    not yet summed over broadcast dimensions (PyTorch's engine does that, not its nodes).
    """
    __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
    from .engine import _call_backward

    # Outputs that are not floating (max's and sort's indices) take no gradient, as in PyTorch.
    meta = node._output_meta
    no_grad = {k for k, (_, dtype) in enumerate(meta) if dtype.kind != "f"} if meta else set()
    expected = node._n_outputs - len(no_grad)
    if len(grads) != expected:
        raise TypeError(f"expected {expected} arguments, got {len(grads)} instead\n"
                        f"{node.name()} has {expected} differentiable output(s): pass one gradient for each.")
    for k, g in enumerate(grads):
        if g is not None and not isinstance(g, Tensor):
            raise TypeError(f"{node.name()}(): gradient {k} must be a Tensor or None, not {type(g).__name__}")
    if no_grad:
        given = iter(grads)
        grads = tuple(None if k in no_grad else next(given) for k in range(node._n_outputs))
    results = _call_backward(node, grads)
    edges = node._edges
    keep = node._forward_cls._scalar_operands
    out = []
    for i, g in enumerate(results):
        nxt = edges[4 * i]
        if nxt is None and not keep:
            continue  # not a tensor argument: not one of next_functions
        out.append(g if nxt else None)  # as returned: the engine, not the node, sums broadcast gradients
    return out[0] if len(out) == 1 else tuple(out)


def _call_accumulate_grad(node, grad):
    """``AccumulateGrad(grad)``: add ``grad`` into the leaf's ``.grad``, as PyTorch's node does."""
    node._accumulate(grad, _GradMode.enabled and grad._rg)
    return ()


AccumulateGrad.__call__ = _call_accumulate_grad


class _NotExposed:
    """``saved_tensors`` of a built-in node: absent, as on PyTorch's built-in nodes (tools such as torchviz
    tell custom nodes from built-in ones by it); their saved values are the ``_saved_*`` attributes."""

    def __get__(self, node, owner=None):
        if node is None:
            return self
        raise AttributeError(
            f"'{type(node).__name__}' object has no attribute 'saved_tensors'\nA built-in node shows what its "
            "forward saved as PyTorch's nodes do, in _saved_* attributes (e.g. _saved_self, _saved_result); "
            "saved_tensors is the API of custom Functions."
        )


_BUILTIN_SAVED = _NotExposed()


def _private_saved_tensors(cls) -> None:
    """Point the built-in ``backward``'s reads of ``ctx.saved_tensors`` at ``ctx._tensors_saved_for_backward``.

    The source keeps the public spelling (the book shows it: built-ins are written like custom Functions);
    only the compiled attribute name changes, once, when the class is created, so it costs nothing per call.
    """
    raw = cls.__dict__.get("backward")
    fn = getattr(raw, "__func__", raw)
    if fn is None or not hasattr(fn, "__code__"):
        return
    code = _renamed(fn.__code__)
    if code is fn.__code__:
        return
    new = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    new.__kwdefaults__, new.__qualname__, new.__doc__ = fn.__kwdefaults__, fn.__qualname__, fn.__doc__
    new.__module__, new.__dict__ = fn.__module__, dict(fn.__dict__)
    new.__wrapped__ = fn
    setattr(cls, "backward", type(raw)(new) if isinstance(raw, (staticmethod, classmethod)) else new)


def _renamed(code: types.CodeType) -> types.CodeType:
    consts = tuple(_renamed(c) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    if "saved_tensors" not in code.co_names and consts == code.co_consts:
        return code
    names = tuple("_tensors_saved_for_backward" if n == "saved_tensors" else n for n in code.co_names)
    return code.replace(co_names=names, co_consts=consts)


class _Cleared:
    """``ctx._saved`` after a read of ``saved_tensors`` with ``clear_saved_tensors_on_access``."""

    def __bool__(self) -> bool:
        return False  # nothing to show (viz)


_CLEARED = _Cleared()
ERR_SAVED_ONCE = ("saved_tensors can only be accessed once when clear_saved_tensors_on_access=True is set on the "
                  "autograd.Function. Either access saved_tensors only once, or set "
                  "clear_saved_tensors_on_access=False.")


def _saved_tensors_once(ctx) -> tuple:
    """``saved_tensors`` of a Function with ``clear_saved_tensors_on_access = True``: the first read hands the
    tensors over and drops the node's references (a second read, in this backward or a later one, raises)."""
    __tracebackhide__ = True
    saved = ctx._saved
    if saved is _CLEARED:
        raise RuntimeError(ERR_SAVED_ONCE + f"\n{ctx._who()}: keep the tuple from the first read, e.g. "
                           "x, y = ctx.saved_tensors, and use x and y from then on.")
    out = FunctionCtx.saved_tensors.fget(ctx)
    if type(saved) is tuple or saved.__class__ is _Packed:  # recorded (not read inside forward itself)
        ctx._saved = _CLEARED
    return out


def _apply_custom_node(node, *grads):
    """``grad_fn.apply(*grads)`` of a custom Function's node: its backward, called by hand (as PyTorch's
    BackwardCFunction.apply), returning what backward returns."""
    return node._forward_cls.backward(node, *grads)


def _saved_tensors_options(cls) -> None:
    """Install PyTorch's two class options of a custom Function, when set (no cost otherwise).

    * ``clear_saved_tensors_on_access = True``: ``ctx.saved_tensors`` may be read once; the read drops the
      node's references, so each tensor is freed as soon as backward lets go of it.
    * ``boxed_grads_call = True``: ``backward(ctx, grads)`` receives the gradients as one ``list`` (which it
      may empty to let go of them) instead of one argument per output.
    """
    cls._backward_cls.apply = _apply_custom_node
    if getattr(cls, "clear_saved_tensors_on_access", False):
        cls._backward_cls.saved_tensors = property(_saved_tensors_once)
    user = cls.backward
    if getattr(cls, "boxed_grads_call", False) and not getattr(user, "_minigrad_boxed", False):
        @functools.wraps(user)
        def boxed(ctx, *grads):
            return user(ctx, list(grads))

        boxed._minigrad_boxed = True
        cls.backward = staticmethod(boxed)


class Function:
    """Base class for differentiable operations with a hand-written backward.

    Subclass it, write ``forward`` and ``backward`` as static methods, and call
    ``YourFunction.apply(*args)``.
    """

    _node_name: str | None = None  # built-in ops use PyTorch's node names, e.g. "MulBackward0"
    _backward_cls: type = BackwardNode
    _new_style = False
    _scalar_operands = False  # built-in arithmetic on Python numbers: next_functions lists them
    _builtin = False  # minigrad's own ops (set in minigrad._ops); their forwards only *store* into ctx
    # PyTorch 2.13's options (see _saved_tensors_options): saved_tensors readable once, and frees its
    # tensors when read; backward(ctx, grads) receives the gradients as one list it may empty.
    clear_saved_tensors_on_access = False
    boxed_grads_call = False

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("_node_name") or f"{cls.__name__}Backward"
        cls._backward_cls = type(name, (BackwardNode,), {"_forward_cls": cls, "__module__": cls.__module__})
        cls._new_style = cls.setup_context is not Function.setup_context
        # PyTorch binds forward's defaults for the setup_context style, so ``inputs`` holds them
        cls._bind_defaults = cls._new_style and _has_defaults(cls.forward)
        cls._builtin = cls.__module__.startswith("minigrad._ops")
        cls._backward_cls._fast = cls._builtin
        if cls._builtin:  # minigrad's own ops record through the lean path of _builtin.py
            _private_saved_tensors(cls)
            cls._backward_cls.__call__ = _call_builtin_node  # custom nodes are not callable, as in PyTorch
            cls._backward_cls.saved_tensors = _BUILTIN_SAVED
            cls._backward_cls.save_for_backward = _trusted_save_for_backward
            cls._backward_cls._fast_backward = staticmethod(cls.backward)
            cls.apply = classmethod(_builtin_apply)
        if "vjp" in cls.__dict__ and "backward" in cls.__dict__:
            raise TypeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
                            "You should only implement one of them.")
        if "vjp" in cls.__dict__:
            cls.backward = cls.__dict__["vjp"]
        if not cls._builtin:
            _saved_tensors_options(cls)

    def __init__(self, *args, **kwargs) -> None:
        warnings.warn(
            f"{type(self).__name__} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd function "
            "will raise an error in a future version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use new-style "
            f"autograd function with static forward method.\nCall {type(self).__name__}.apply(...) on the "
            "class instead of creating and calling an instance."
        )

    @staticmethod
    def forward(ctx: Any, *args: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom autograd.Function to "
            "use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        """Forward mode: one tangent per forward input in, one tangent per output out (forward_ad.py)."""
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with forward mode AD."
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run forward and, if any input requires grad, record a node for backward."""
        __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
        if kwargs or cls._bind_defaults:
            args = _bind_kwargs(cls, args, kwargs)
        if _TRANSFORMS.depth:  # under torch.func's grad/vjp/jacrev/vmap...: setup_context is required
            _check_transform_support(cls)
        if _VMAP_ACTIVE[0]:  # a vmap level is active: PyTorch's rules for custom Functions (_functorch/vmap.py)
            return _vmap_custom_function(cls, args)
        if _FWD_ACTIVE:  # a forward-AD dual level is active: tangents too (forward_ad.py)
            return _forward_ad._apply_custom(cls, args)
        if _GradMode.enabled:
            for a in args:
                if isinstance(a, Tensor) and a._rg:
                    return _apply_recording(cls, args)
        if cls._builtin:
            # Nothing to record: built-in forwards only store into ctx, so a shared one will do.
            return cls.forward(_NO_GRAPH_CTX, *args)
        ctx = cls._backward_cls()
        ctx.needs_input_grad = (False,) * len(args)
        enabled = _set_grad_mode(False)  # forward never records, as in PyTorch
        try:
            if cls._new_style:
                out = cls.forward(*args)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args)
        finally:
            _set_grad_mode(enabled)
        if ctx._dirty:
            _check_dirty_leaves(cls, ctx._dirty)
        return out


def _apply_recording(cls, args: tuple):
    """``apply`` when the graph must be recorded: build the node, run forward, attach outputs."""
    __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
    ctx = cls._backward_cls()
    seq = ctx._seq = _next_seq()
    _record_edges(ctx, args, seq)

    _set_grad_mode(False)
    try:
        if cls._new_style:
            out = cls.forward(*args)
            cls.setup_context(ctx, args, out)
        else:
            out = cls.forward(ctx, *args)
    finally:
        _set_grad_mode(True)

    if out.__class__ is Tensor and out.grad_fn is None and not ctx._special and out._data.dtype.kind == "f":
        for a in args:
            if a is out:
                out, _ = _wrap_outputs(cls, ctx, args, out)
                break
        else:
            out.grad_fn = ctx  # the common case: one fresh floating output
            out._rg = True
            ctx._output_meta = ((out._data.shape, out._data.dtype),)  # zeros, if only None reaches it
    else:
        out, _ = _wrap_outputs(cls, ctx, args, out)

    to_save = ctx._to_save
    if to_save is not None:
        ctx._to_save = None  # from now on the tuple lives in _saved (outputs as arrays: no cycle)
        _record_saved(ctx, to_save)
    if _Anomaly.enabled:
        ctx._forward_trace = _user_stack()
    return out


_NO_GRAD_EDGE = (False, 0, None, None)   # the edge entries of a tensor argument that needs no grad
_NOT_TENSOR_EDGE = (None, 0, None, None)  # ... and of an argument that is not a tensor


def _edge(t: Tensor, seq: int, k: int) -> tuple:
    """The 4 edge entries for argument ``k``, a tensor that requires grad, of node number ``seq``."""
    fn = t.grad_fn
    data = t._data
    return (_leaf_node(t, seq, k) if fn is None else fn), t._output_nr, data.shape, data.dtype


# needs_input_grad tuples, shared: _NEEDS[number of arguments][bit mask, first argument highest]
_NEEDS = [[tuple(bool(m >> (n - 1 - k) & 1) for k in range(n)) for m in range(1 << n)] for n in range(7)]


def _record_edges(ctx, args: tuple, seq: int) -> None:
    """Set the node's edges (4 entries per argument) and needs_input_grad from the arguments."""
    edges = []
    mask = 0
    for k, a in enumerate(args):
        mask <<= 1
        if isinstance(a, Tensor):
            if a._rg:
                edges += _edge(a, seq, k)
                mask |= 1
            else:
                edges += _NO_GRAD_EDGE
        else:
            edges += _NOT_TENSOR_EDGE
    n = len(args)
    ctx._edges = tuple(edges)
    ctx.needs_input_grad = _NEEDS[n][mask] if n < len(_NEEDS) else tuple(bool(e) for e in edges[::4])


def _leaf_node(t: Tensor, seq: int, k: int) -> "AccumulateGrad":
    """The AccumulateGrad node of leaf ``t``, used as argument ``k`` by the node numbered ``seq``.

    A new one is numbered just below its first consumer: older than every node that will
    send it a gradient, newer than everything else, so it runs as soon as its consumers
    have (PyTorch runs AccumulateGrad first among ready nodes). Leaves of one node are
    numbered in argument order, the first newest, as PyTorch's queue pops them.
    """
    node = t._grad_accumulator()
    if not node._seq:
        node._seq = seq - 1 + 1 / (k + 2)
    return node


def _record_saved(ctx, saved: tuple) -> None:
    """Keep what forward saved in ``ctx._saved``, with each tensor's version at this moment.

    An output of this node is kept as (array, version counter, output_nr), not as the tensor,
    which points back at the node through grad_fn: that cycle would outlive the graph.
    """
    if _HOOKED and _pack_hooked(ctx, saved):  # saved_tensors_hooks are active (graph.py)
        return
    ctx._saved = saved
    for t in saved:
        if t is not None and (t._vc is not None or t.grad_fn is ctx):
            _pack_saved(ctx, saved)  # versions to record, or outputs to keep as arrays
            return
    # The common case: fresh tensors (version 0, the default of _saved_versions), none an output.


def _pack_saved(ctx, to_save: tuple) -> None:
    """``_record_saved`` when versions must be read or outputs converted."""
    t = to_save[0]
    if len(to_save) == 1 and t._vc is None and t.grad_fn is ctx:
        # The common case (exp, relu, sigmoid, tanh, sqrt): an op that saves only its fresh output.
        vc = t._vc = _new_counter()
        ctx._saved = ((t._data, vc, t._output_nr),)
        ctx._saved_outputs = True
        return
    saved = []
    versions = []
    has_output = changed = False
    for t in to_save:
        if t is None:
            saved.append(None)
            versions.append(_AT_ZERO)
        elif t.grad_fn is ctx:  # one of this node's outputs: avoid a reference cycle
            vc = t._vc
            if vc is None:
                vc = t._vc = _new_counter()
            has_output = True
            saved.append((t._data, vc, t._output_nr))
            versions.append(bytes(vc))
            changed = changed or vc != _AT_ZERO
        else:
            saved.append(t)
            vc = t._vc
            if vc is None or vc == _AT_ZERO:
                versions.append(_AT_ZERO)
            else:
                versions.append(bytes(vc))
                changed = True
    ctx._saved = tuple(saved)
    if changed:
        ctx._saved_versions = tuple(versions)
    if has_output:
        ctx._saved_outputs = True


def _wrap_outputs(cls, ctx, args, out):
    """The general case of attaching outputs to the node: tuples, dirty / non-differentiable / aliased outputs."""
    single = not isinstance(out, tuple)
    outs = (out,) if single else out
    dirty = ctx._dirty
    for d in dirty:
        if not any(d is o for o in outs):
            raise RuntimeError(
                "Some elements marked as dirty during the forward method were not returned as output. The "
                "inputs that are modified inplace must all be outputs of the Function.\n"
                f"In {cls.__name__}.forward: every tensor passed to ctx.mark_dirty(...) must also be returned."
            )
    if dirty:
        _check_dirty_leaves(cls, dirty)
    if single and not isinstance(out, Tensor):
        return out, ()  # not a tensor (a number, a list...): returned as is, outside the graph (as PyTorch does)
    result = []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            result.append(o)  # a non-tensor in the tuple: passed through; backward gets None for it
            continue
        is_dirty = any(o is d for d in dirty)
        if is_dirty:
            o._bump_version()
        elif any(o is a for a in args) or o.grad_fn is not None:
            o = Tensor._wrap(o._data)  # an input returned as is becomes a new alias, as in PyTorch
        if any(o is n or (n._data is o._data) for n in ctx._non_differentiable) or o._data.dtype.kind != "f":
            o._rg = False
        else:
            o.grad_fn, o._output_nr, o._rg = ctx, i, True
        result.append(o)
    ctx._n_outputs = len(result)
    if len(result) > 1:
        ctx._fast_backward = None
    # (shape, dtype) per output: the zeros a backward gets for an output no gradient reached
    ctx._output_meta = tuple((o._data.shape, o._data.dtype) if isinstance(o, Tensor) else None for o in result)
    result = tuple(result)
    return (result[0] if single else result), result


def _check_dirty_leaves(cls, dirty) -> None:
    if not _GradMode.enabled:
        return
    for d in dirty:
        if d.grad_fn is None and d._rg:
            raise RuntimeError(
                "a leaf Variable that requires grad has been used in an in-place operation.\n"
                f"{cls.__name__} marked a leaf tensor that requires grad as dirty (modified in place); "
                "pass a clone() of it instead, or do the update inside `with minigrad.no_grad():`."
            )


def _has_defaults(fn) -> bool:
    import inspect

    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.default is not p.empty for p in params)


def _bind_kwargs(cls, args, kwargs):
    import inspect

    fwd = cls.forward
    if cls._new_style:  # as PyTorch: bind to forward's signature and fill in its defaults
        try:
            bound = inspect.signature(fwd).bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{cls.__name__}.apply(): {e}") from None
        bound.apply_defaults()
        return tuple(bound.args) + tuple(bound.kwargs.values())
    params = list(inspect.signature(fwd).parameters)
    if not cls._new_style:
        params = params[1:]
    bound = list(args)
    for name in params[len(args):]:
        if name not in kwargs:
            break
        bound.append(kwargs.pop(name))
    if kwargs:
        raise TypeError(f"{cls.__name__}.apply() got unexpected keyword arguments {sorted(kwargs)}")
    return tuple(bound)


class _DelayedError(Function):
    """Stands in the graph of a once_differentiable backward's result and fails if reached."""

    @staticmethod
    def forward(ctx, x, fn_name):
        ctx.fn_name = fn_name
        return Tensor._wrap(x._data)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(
            "trying to differentiate twice a function that was marked with @once_differentiable\n"
            f"{ctx.fn_name}.backward is decorated with @once_differentiable, so its result has no backward "
            "of its own: you cannot take a second derivative (create_graph=True) through it. Remove the "
            "decorator and write backward with differentiable minigrad operations."
        )


def once_differentiable(fn):
    """Decorate a ``backward`` that is not itself differentiable (e.g. pure NumPy).

    It runs under ``no_grad``; differentiating its result again raises a clear error.
    """

    @functools.wraps(fn)
    def wrapper(ctx, *grad_outputs):
        with no_grad():
            outputs = fn(ctx, *grad_outputs)
        if not _GradMode.enabled or not any(isinstance(g, Tensor) and g._rg for g in grad_outputs):
            return outputs
        name = ctx._forward_cls.__name__ if ctx._forward_cls else "this Function"
        single = not isinstance(outputs, tuple)
        wrapped = []
        for o in ((outputs,) if single else outputs):
            if isinstance(o, Tensor) and o._data.dtype.kind == "f":
                o._rg = True  # a stand-in leaf, so that the error node below is recorded
                o = _DelayedError.apply(o, name)
            wrapped.append(o)
        return wrapped[0] if single else tuple(wrapped)

    return wrapper


_PACKAGE_DIR = __file__.rsplit("autograd", 1)[0]  # .../minigrad/


def _user_stack() -> list:
    """The stack (formatted) where an operation was called, without minigrad's own frames (anomaly mode)."""
    frames = traceback.extract_stack()
    while frames and frames[-1].filename.startswith(_PACKAGE_DIR):
        frames.pop()
    return traceback.format_list(frames)


def _materialize(node: BackwardNode, grads: list) -> list:
    meta = node._output_meta
    return [Tensor._wrap(np.zeros(meta[i][0], meta[i][1])) if g is None and meta[i] is not None else g
            for i, g in enumerate(grads)]


# The recording path of minigrad's own operations (imported last: it builds on the above).
from ._builtin import _NO_GRAPH_CTX, _builtin_apply, _trusted_save_for_backward  # noqa: E402


def _vmap_custom_function(cls, args: tuple):
    """``apply`` under vmap (imported on first use: no cost without vmap)."""
    from .._functorch.vmap import custom_function_vmap

    return custom_function_vmap(cls, args)
