"""The judge's side of the grading bridge: student objects as proxies, student graphs as bridge nodes.

Why: the check and the hidden tests must run where the student's code cannot reach them. The
judge (the grader, outside the sandbox) runs them on *proxies*; every use of a proxy is a request
to the worker (``_worker.py``, in the sandbox), which holds the real student objects and runs
their code. What comes back are observations in the strict schema of ``_bridge_wire``: data
(numbers, strings, arrays, tensors) or *handles* (the worker's objects by number). The judge
never executes student code and never unpickles anything.

Both processes share the :class:`Peer` machinery, because calls go both ways: a function of the
check handed to the student's code (``numerical_grad(f, x)``) is exported to the worker as a
handle, and the worker calls it back while it serves the judge's request.

Autograd across the bridge: a call whose tensor arguments require grad (with grad mode on) is a
*graph call*. The receiver runs it on fresh leaves with the same data, dtype and requires_grad,
keeps its graph (inputs, outputs) under a number and returns the outputs; the caller attaches
them to its own graph through a :class:`_Bridge` node, whose backward asks for the
vector-Jacobian product of the remote graph. When the caller differentiates again
(``create_graph=True``), that backward is itself a graph call: the receiver computes the vjp with
``create_graph=True`` and keeps *that* graph (its inputs: the original leaves and the
grad_outputs), so derivatives of any order work.

Forward mode across the bridge: a tensor that carries a tangent at the sender's dual level
crosses with it; the receiver runs the call inside a dual level of its own (unless one is active)
with the tensor made dual again, and the results' tangents come back the same way. So a check's
``make_dual(x, t)`` handed to a student's Function gets the tangent that the student's ``jvp``
computed, as an observation like any other value. Under ``vmap`` the same holds for batch
dimensions: the proxy takes them off, and the worker runs the student's ``apply`` under vmaps of
its own (``_vmapped_apply``).

A student's ``Function`` subclass becomes a real ``minigrad.autograd.Function`` subclass on the
judge (:func:`function_proxy`): ``apply`` is a graph call of the student's ``apply``; the node on
the judge's graph names the proxy class as its ``_forward_cls`` and forwards ``saved_tensors``,
``needs_input_grad``, ``next_functions``, ``name()`` and ctx attributes to the student's node;
``forward``/``backward`` called directly return what the student's methods return.

Exceptions raised by the other side come back as (type name, arguments, traceback entries) and
are raised again as the builtin type of that name (``NotImplementedError`` stays one), or as a
:class:`RemoteError` subclass of that name, with synthetic traceback entries at the student's
file and line so that feedback that names "the line where your code failed" still can.
"""
from __future__ import annotations

import builtins
import collections
import itertools
import keyword
import traceback
import types
import warnings
import weakref
from typing import Any, Callable, Iterable

import numpy as np

import minigrad
from minigrad._tensor import Tensor
from minigrad._functorch import _state as _functorch_state
from minigrad.autograd import forward_ad as _fwAD
from minigrad.autograd.function import _FREED, AccumulateGrad, BackwardNode, Function

from . import _bridge_wire as wire
from ._bridge_wire import PipeTransport, ProtocolError, local_pair  # noqa: F401  (re-exported)

__all__ = ["Bridge", "Peer", "ProtocolError", "RemoteError", "RemoteObject", "function_proxy",
           "PipeTransport", "local_pair"]

MAX_NESTING = 12   # requests in flight at once (calls that call back that call ...)
MAX_REPR = 2000    # characters of a remote repr
_PLUMBING = ("minigrad/course/_bridge", "minigrad/course/_worker")


_WARNINGS = {n: c for n, c in vars(builtins).items() if isinstance(c, type) and issubclass(c, Warning)}


def _warning_list(seen: list) -> list:
    out = []
    for w in seen[:wire.MAX_WARNINGS]:
        cat = w.category
        name = next((c.__name__ for c in cat.__mro__ if c.__module__ == "builtins" and issubclass(c, Warning)),
                    "UserWarning")
        out.append([name, str(w.message)[:2000]])
    return out


class RemoteError(Exception):
    """An exception of a type that is not a builtin, raised by the other side (named after it)."""


_BUILTIN_EXCEPTIONS = {n: c for n, c in vars(builtins).items()
                       if isinstance(c, type) and issubclass(c, Exception)}
_remote_types: dict[tuple, type] = {}


def _exception_type(name: str, builtin: bool, base: str = "Exception") -> type:
    """The class to raise for a remote exception: the builtin itself, or a RemoteError subclass of
    that name that also derives from the remote type's nearest builtin (``except RuntimeError``
    still catches a GradcheckError)."""
    if name == "ProtocolError":
        return ProtocolError
    if builtin and name in _BUILTIN_EXCEPTIONS:
        return _BUILTIN_EXCEPTIONS[name]
    if not name.isidentifier() or keyword.iskeyword(name):
        name = "RemoteError"
    parent = _BUILTIN_EXCEPTIONS.get(base, Exception)
    key = (name, parent)
    if key not in _remote_types:
        bases = (RemoteError,) if parent is Exception else (RemoteError, parent)
        try:
            _remote_types[key] = type(name, bases, {"__module__": "builtins"})
        except TypeError:  # an instance lay-out RemoteError cannot share (OSError ...)
            _remote_types[key] = type(name, (RemoteError,), {"__module__": "builtins"})
    return _remote_types[key]


def _raise_with_frames(exc: BaseException, frames: list) -> None:
    """Raise ``exc`` from synthetic frames at the remote file/line/function names (no remote code runs)."""
    def raiser():
        raise exc

    fn = raiser
    for filename, lineno, name in reversed(frames):
        template = compile("def f():\n    _next()\n", filename, "exec")
        code = next(c for c in template.co_consts if isinstance(c, types.CodeType))
        code = code.replace(co_firstlineno=max(lineno - 1, 0), co_name=name or "?", co_qualname=name or "?")
        fn = types.FunctionType(code, {"_next": fn, "__builtins__": {}})
    try:
        fn()
    finally:
        del fn, exc


# ------------------------------------------------------------------------------ proxies
class RemoteObject:
    """An object of the other side: attribute reads, calls and repr are requests."""

    __slots__ = ("_peer", "_rid", "_kind", "_name", "__weakref__")

    def __init__(self, peer: "Peer", rid: int, kind: str, name: str):
        object.__setattr__(self, "_peer", peer)
        object.__setattr__(self, "_rid", rid)
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_name", name)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__") and name not in READABLE_DUNDERS:
            raise AttributeError(name)
        return self._peer.getattr(self._rid, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._peer.call(self._rid, args, kwargs)

    def __repr__(self) -> str:
        return self._peer.repr(self._rid)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("objects of the student's code are read-only from the judge")

    # The container protocol and truth value, asked of the real object (Python looks these up on
    # the type, so __getattr__ alone would never see them).
    def _dunder(self, name: str, *args: Any) -> Any:
        return self._peer.call(self._rid, args, {}, attr=name)

    def __len__(self) -> int:
        n = self._dunder("__len__")
        if type(n) is not int:
            raise TypeError("__len__ of the student's object did not return an int")
        return n

    def __getitem__(self, key: Any) -> Any:
        return self._dunder("__getitem__", key)

    def __iter__(self):
        it = self._dunder("__iter__")
        if type(it) is not RemoteObject:
            raise TypeError("__iter__ of the student's object did not return an iterator")
        while True:
            try:
                yield it._dunder("__next__")
            except StopIteration:
                return

    def __mro_entries__(self, bases: tuple) -> tuple:
        """``class FirstOnly(EngineFunction)`` with a remote class as the base: the class is made
        in the worker, its methods stay here (the worker calls them back), see :func:`_subclass_base`."""
        return (_subclass_base(self),)

    def __enter__(self) -> Any:
        return self._dunder("__enter__")

    def __exit__(self, *exc: Any) -> Any:
        return self._dunder("__exit__", None, None, None)

    def __bool__(self) -> bool:
        for name in ("__bool__", "__len__"):
            try:
                v = self._dunder(name)
            except AttributeError:
                continue
            if type(v) not in (bool, int):
                raise TypeError(f"{name} of the student's object returned a {type(v).__name__}")
            return bool(v)
        return True


def _operator(name: str) -> Callable:
    def op(self, *args: Any) -> Any:
        return self._dunder(name, *args)

    op.__name__ = name
    return op


# Arithmetic on the student's objects (the chapter's own Tensor in chapter 9, a tensor kept in the
# worker for a graph-walking exercise): each operator is one request. Comparisons and hashing stay
# by identity (proxies are dictionary keys in the checks).
for _name in ("add", "sub", "mul", "truediv", "matmul", "pow"):
    setattr(RemoteObject, f"__{_name}__", _operator(f"__{_name}__"))
    setattr(RemoteObject, f"__r{_name}__", _operator(f"__r{_name}__"))
for _name in ("__neg__", "__pos__", "__abs__"):
    setattr(RemoteObject, _name, _operator(_name))
del _name

_STD_DICTS = (collections.Counter, collections.defaultdict, collections.OrderedDict)

# attribute names with dunders that a check or a hidden test reads of a remote class or object
READABLE_DUNDERS = frozenset({"__bases__", "__name__", "__qualname__", "__module__"})


class _SubclassMeta(type):
    """The metaclass of a class statement whose base is a remote class: it returns a proxy of a new
    class made in the worker, with the statement's functions as callbacks of the judge."""

    def __new__(mcls, name: str, bases: tuple, ns: dict):
        if len(bases) != 1 or not hasattr(bases[0], "_remote_base"):
            return super().__new__(mcls, name, bases, ns)
        base = bases[0]._remote_base
        methods = {}
        for key, value in ns.items():
            fn = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
            if key.startswith("__") or not callable(fn):
                continue
            if isinstance(value, classmethod):
                raise TypeError("a classmethod cannot be given to a class made in the student's process")
            methods[key] = fn
        make = base._peer.lookup(SUBCLASS)
        return make(name, base, methods)


def _subclass_base(remote: RemoteObject) -> type:
    return _SubclassMeta("_RemoteBase", (), {"_remote_base": remote})


SUBCLASS = "__subclass__"        # the worker's factory of subclasses of its classes
ISINSTANCE = "__isinstance__"    # the worker's isinstance (of its objects and classes)
TENSOR_HANDLES = "__tensor_handles__"  # from now on the worker's tensors cross as handles (graphs stay there)
MODULE = "__module__:"           # the worker's copy of a library module (minigrad, numpy)


class _BridgeNode(BackwardNode):
    """The judge's node for a remote graph; attribute reads go to the remote output's own node.

    For a student's Function ``_forward_cls`` is the proxy class (what a check compares and calls:
    ``type(out.grad_fn)._forward_cls is P``, ``out.grad_fn._forward_cls.backward(...)``), while each
    instance carries the bridge Function as ``_engine_forward_cls``, whose backward the engine runs.
    """

    _link: "_Link | None" = None
    _nig = ()
    _bridge_fn: type | None = None

    def __init__(self) -> None:
        # the engine runs the bridge's backward (the remote vjp); a check that reads
        # out.grad_fn._forward_cls gets the proxy class, whose backward is the student's own
        self.__dict__["_engine_forward_cls"] = self._bridge_fn

    # The engine marks a node's saved tensors freed after its backward unless retain_graph: for a
    # bridge node that is the signal to free the remote graph's too (sent with the next request),
    # so that a second backward or a read of saved_tensors fails there as it would here.
    @property
    def _saved(self):
        return self.__dict__.get("_saved_state")

    @_saved.setter
    def _saved(self, value) -> None:
        link = self.__dict__.get("_link")
        if value is _FREED and link is not None and self.__dict__.get("_saved_state") is not _FREED:
            link.peer._freed.append(link.graph)
        self.__dict__["_saved_state"] = value

    def _remote(self):
        link = self._link
        if link is None or link.node is None:
            raise AttributeError("this bridge node has no remote node")
        return link.node

    def name(self) -> str:
        link = self._link
        return link.node.name() if link is not None and link.node is not None else "BridgeBackward"

    @property
    def saved_tensors(self) -> tuple:
        return tuple(self._remote().saved_tensors)

    @property
    def needs_input_grad(self) -> tuple:
        link = self._link
        return tuple(self._remote().needs_input_grad) if link is not None and link.node is not None else self._nig

    @needs_input_grad.setter
    def needs_input_grad(self, value) -> None:  # set by the engine when the node is recorded
        self._nig = value

    @property
    def next_functions(self) -> tuple:
        return tuple(self._remote().next_functions)

    def __getattr__(self, name: str) -> Any:  # a ctx attribute the student set (ctx.negative_slope ...)
        if name.startswith("__") or name in ("_link", "_leaves"):
            raise AttributeError(name)
        return getattr(self._remote(), name)

    def __repr__(self) -> str:
        return f"<{self.name()} (bridged) object at {hex(id(self))}>"


class _Link:
    """What a bridge node needs: the peer, the remote graph's number, its outputs and node."""

    __slots__ = ("peer", "graph", "outs", "node", "__weakref__")

    def __init__(self, peer: "Peer", graph: int, outs: list, node: Any):
        self.peer, self.graph, self.outs, self.node = peer, graph, outs, node


class _Bridge(Function):
    """Attaches a remote graph's outputs to the local graph; backward is the remote vjp."""

    # forward and setup_context apart (PyTorch 2's style): function transforms (func.grad around a
    # student's Function under vmap) accept only that style
    @staticmethod
    def forward(link: _Link, *leaves: Tensor):
        outs = tuple(Tensor._wrap(o._data) for o in link.outs)
        return outs[0] if len(outs) == 1 else outs

    @staticmethod
    def setup_context(ctx, inputs: tuple, output) -> None:
        ctx._link = inputs[0]
        ctx._leaves = inputs[1:]
        ctx.save_for_backward()  # nothing, but the engine now tells this node when it frees (see _saved)

    @staticmethod
    def backward(ctx, *grads):
        link = ctx._link
        return (None, *link.peer.vjp(link.graph, ctx._leaves, list(grads)))


_Bridge._backward_cls = type("BridgeBackward", (_BridgeNode,), {"_forward_cls": _Bridge, "_bridge_fn": _Bridge,
                                                                  "__module__": __name__})


class _ProxyMeta(type):
    """Class attributes of a student's Function that the proxy does not define are read remotely."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__") or "_peer" not in cls.__dict__:
            raise AttributeError(name)
        return cls._peer.getattr(cls._rid, name)


def function_proxy(peer: "Peer", rid: int, name: str) -> type:
    """A real ``Function`` subclass standing for the student's class ``rid`` of ``peer``."""
    def apply(cls, *args, **kwargs):
        if _functorch_state.ACTIVE[0]:
            return _vmapped_apply(lambda a, k, v: peer.call(rid, a, k, attr="apply", bridge=bridge, vmap=v),
                                  args, kwargs, [])
        return peer.call(rid, args, kwargs, attr="apply", bridge=bridge)

    def forward(*args, **kwargs):
        return peer.call(rid, args, kwargs, attr="forward")

    def backward(*args, **kwargs):
        return peer.call(rid, args, kwargs, attr="backward")

    safe = name if name.isidentifier() else "StudentFunction"
    proxy = _ProxyMeta(safe, (Function,), {"__module__": "__main__", "_peer": peer, "_rid": rid,
                                           "apply": classmethod(apply), "forward": staticmethod(forward),
                                           "backward": staticmethod(backward)})
    bridge = type(f"_{safe}Bridge", (_Bridge,), {"__module__": __name__})
    bridge._backward_cls = type(f"{safe}Backward", (_BridgeNode,),
                                {"_forward_cls": proxy, "_bridge_fn": bridge, "__module__": "__main__"})
    proxy._backward_cls = bridge._backward_cls
    return proxy


def _vmapped_apply(call: Callable, args: tuple, kwargs: dict, levels: list) -> Any:
    """A student Function's ``apply`` on the judge's batched tensors: the batch dims are taken off,
    level by level from the innermost (differentiably, as vmap does around a ``vmap`` staticmethod),
    the worker runs ``apply`` under the same nested vmaps (its own: the student's setup_context,
    vmap staticmethod or generated rule, with their errors), and each batch dim is put back on the
    results. ``levels``: what was taken off so far, outermost first."""
    from minigrad._functorch import vmap as _vm

    batched = [a._data._level for a in args if type(a) is Tensor and isinstance(a._data, _vm.BatchedArray)]
    if not batched:
        return call(args, kwargs, levels)
    top = max(batched)
    level = next(lv for lv in _functorch_state.LEVELS if lv.id == top)
    in_dims = [0 if _vm._batched_at(a, top) else None for a in args]
    inner = tuple(_vm._RemoveBatchDim.apply(a, top, level.batch_size, 0) if d is not None else a
                  for a, d in zip(args, in_dims))
    saved = list(_functorch_state.LEVELS)
    _functorch_state.LEVELS[:] = [lv for lv in saved if lv.id < top]  # below this level, as a vmap rule runs
    _functorch_state.ACTIVE[0] = len(_functorch_state.LEVELS)
    try:
        result = _vmapped_apply(call, inner, kwargs, [[in_dims, level.randomness]] + levels)
    finally:
        _functorch_state.LEVELS[:] = saved
        _functorch_state.ACTIVE[0] = len(saved)

    def put_back(v: Any) -> Any:
        if type(v) is Tensor:
            return _vm._add_batch_dim(v, 0, top)
        if type(v) in (tuple, list):
            return type(v)(put_back(x) for x in v)
        return v

    return put_back(result)


class _Out:
    """Placeholder for the j-th graph output while a reply is decoded."""

    __slots__ = ("j",)

    def __init__(self, j: int):
        self.j = j


def _substitute(v: Any, outs: list) -> Any:
    if type(v) is _Out:
        return outs[v.j]
    if type(v) is list:
        return [_substitute(x, outs) for x in v]
    if type(v) is tuple:
        return tuple(_substitute(x, outs) for x in v)
    if type(v) is dict:
        return {k: _substitute(x, outs) for k, x in v.items()}
    return v


# ------------------------------------------------------------------------------ the peer
class Peer:
    """One side of the bridge: its table of exported objects and graphs, its requests and answers.

    ``serves``: the ops this side answers. The judge answers only ``call`` (of the callables it
    exported) and ``vjp`` (of the graphs built by those calls); the worker answers every op.
    ``send(request) -> reply`` is the transport (set by ``local_pair`` or a ``PipeTransport``).
    """

    def __init__(self, send: Callable[[dict], dict] | None = None, *,
                 serves: frozenset = frozenset(wire.REQUESTS), exports: str = "callables"):
        self.send = send
        self.serves = serves
        self.exports = exports        # "callables": only functions cross as handles; "all": any object
        self.table: dict[int, Any] = {}
        self._ids: dict[int, int] = {}  # id(obj) -> table number (one handle per object)
        self.graphs: dict[int, tuple[list, list]] = {}
        self.proxies: dict[int, Any] = {}
        self._attrs: dict[tuple, int] = {}  # (object, attribute) -> the attribute's handle (apply, backward)
        self._count = itertools.count(1)
        self._req = itertools.count(1)
        self.depth = 0
        self.broken: str | None = None  # set on the first ProtocolError: every later request fails
        self.remote_serves = frozenset(wire.REQUESTS)  # what the other side answers (the judge: call, vjp)
        self._released: list[int] = []  # remote graphs whose outputs died here (sent with the next request)
        self._freed: list[int] = []     # remote graphs a backward here freed (their saved tensors go too)
        self.tensor_handles = False     # the worker: tensors cross as handles (their graphs stay here)

    # ---------------------------------------------------------------- requests (this side asks)
    def request(self, op: str, **fields: Any) -> dict:
        if self.broken:
            raise ProtocolError(f"the bridge is broken: {self.broken}")
        if self.depth >= MAX_NESTING:
            err = RecursionError(f"more than {MAX_NESTING} nested calls across the bridge")
            err._bridge_origin = True
            raise err
        msg = {"op": op, "id": next(self._req), **fields}
        if self._freed:
            msg["free"], self._freed = self._freed[:wire.MAX_ITEMS], self._freed[wire.MAX_ITEMS:]
        if self._released:
            msg["release"], self._released = self._released[:wire.MAX_ITEMS], self._released[wire.MAX_ITEMS:]
        self.depth += 1
        try:
            reply = wire.check_reply(self.send(msg), msg["id"])
        except ProtocolError as e:
            self.broken = str(e)
            raise
        except OSError as e:
            self.broken = f"transport: {e}"
            raise ProtocolError(self.broken) from None
        finally:
            self.depth -= 1
        for category, message in reply.get("warnings", ()):
            # raised again here, where the check's own filters (catch_warnings) decide what they mean
            warnings.warn(message, _WARNINGS.get(category, UserWarning), stacklevel=3)
        if "error" in reply:
            self._raise(reply["error"])
        return reply

    def _raise(self, err: dict) -> None:
        cls = _exception_type(err["type"], err["builtin"], err.get("base", "Exception"))
        try:  # plain data only: an exception argument is never a proxy (its str would ask the worker)
            args = [a for a in map(self.decode, err["args"]) if type(a) in (str, int, float, bool, type(None))]
            exc = cls(*args)
        except ProtocolError:
            raise
        except Exception:
            exc = cls(*[str(a) for a in err["args"]])
        exc._bridge_origin = True  # its text came from the other side: it may go back there
        if cls is ProtocolError:
            self.broken = str(exc)
        frames = [(f, ln, n) for f, ln, n in err["frames"]]
        _raise_with_frames(exc, frames)

    def lookup(self, name: str) -> Any:
        return self.decode(self.request("lookup", name=name)["value"])

    def getattr(self, rid: int, name: str) -> Any:
        if "getattr" not in self.remote_serves:  # the judge's functions are opaque to the student's code
            raise AttributeError(f"the grader's function has no attribute {name!r} that your code may read")
        return self.decode(self.request("getattr", obj=rid, name=name)["value"])

    def repr(self, rid: int) -> str:
        if "repr" not in self.remote_serves:
            return "<a function of the grader>"
        v = self.decode(self.request("repr", obj=rid)["value"])
        return v[:MAX_REPR] if type(v) is str else "<remote object>"

    def call(self, rid: int, args: tuple, kwargs: dict, *, attr: str | None = None,
             bridge: type | None = None, vmap: list | None = None) -> Any:
        """Call remote object ``rid`` (or its attribute ``attr``); a graph call when tensors need grad.

        ``bridge``: the ``_Bridge`` subclass whose node stands for the result's remote node (the
        proxy of a student's Function gives its own, so that checks see the proxy class)."""
        if attr is not None:
            key = (rid, attr)
            if key not in self._attrs:
                target = self.getattr(rid, attr)
                if type(target) is not RemoteObject:
                    raise TypeError(f"{attr} of the student's object is not a function")
                self._attrs[key] = target._rid
            rid = self._attrs[key]
        sent: list[Tensor] = []
        leaves: list[Tensor] = []
        grad = minigrad.is_grad_enabled()
        enc_args = [self.encode(a, sent, leaves if grad else None) for a in args]
        enc_kw = [[str(k), self.encode(v, sent, leaves if grad else None)] for k, v in kwargs.items()]
        extra = {"vmap": vmap} if vmap else {}
        reply = self.request("call", obj=rid, args=enc_args, kwargs=enc_kw, graph=bool(leaves), grad=grad, **extra)
        self._apply_effects(reply.get("effects", []), sent)
        return self._result(reply, leaves, bridge)

    def vjp(self, graph: int, leaves: tuple, grads: list) -> list:
        """The remote graph's vjp for these grad_outputs; a graph call again under create_graph."""
        create = minigrad.is_grad_enabled()
        new_leaves: list[Tensor] = []
        enc = [self.encode(g, [], new_leaves if create else None) for g in grads]
        reply = self.request("vjp", graph=graph, grads=enc, create_graph=create)
        got = self._result(reply, list(leaves) + new_leaves, None)
        if type(got) is not list or len(got) != len(leaves):
            raise ProtocolError("vjp: expected one gradient per input of the remote graph")
        for g, x in zip(got, leaves):
            if g is not None and (type(g) is not Tensor or tuple(g.shape) != tuple(x.shape)):
                raise ProtocolError("vjp: a gradient that is not a tensor of its input's shape")
        return got

    def _result(self, reply: dict, leaves: list, bridge: type | None) -> Any:
        outs: list = []
        tangents: dict = {}
        value = self.decode(reply["value"], outs, tangents=tangents)
        if not outs:
            return value
        if reply.get("graph") is None or not leaves:
            raise ProtocolError("a reply with graph outputs for a call that asked for no graph")
        node = self.decode(reply["node"]) if reply.get("node") is not None else None
        if bridge is None and type(node) is RemoteObject and self.exports == "callables":  # the judge
            # a plain function whose result comes from a Function's apply (scale_shift calling
            # ScaleShift.apply): its node stands for that Function, as in-process, so that
            # type(out.grad_fn)._forward_cls.backward is the student's own backward
            fwd = self.getattr(node._rid, "_forward_cls")
            if isinstance(fwd, type) and issubclass(fwd, Function) and hasattr(fwd, "_backward_cls"):
                bridge = getattr(fwd._backward_cls, "_bridge_fn", None)
        link = _Link(self, reply["graph"], outs, node)
        weakref.finalize(link, self._released.append, reply["graph"])  # only a list append: safe in any GC
        if _fwAD._current_level < 0:
            attached = (bridge or _Bridge).apply(link, *leaves)
        else:  # the remote side computed the tangents: the bridge node only carries the graph
            with _fwAD._paused():
                attached = (bridge or _Bridge).apply(link, *leaves)
        attached = list(attached) if type(attached) is tuple else [attached]
        for j, tangent in tangents.items():
            attached[j] = _fwAD.make_dual(attached[j], tangent)
        return _substitute(value, attached)

    def _apply_effects(self, effects: list, sent: list) -> None:
        """What the call did to the tensors it was given (in-place writes, ``.grad``), done here too."""
        for eff in effects:
            if eff["i"] >= len(sent):
                raise ProtocolError("effect on a tensor that was not sent")
            t = sent[eff["i"]]
            if "data" in eff:
                new = self.decode(eff["data"])
                if type(new) is not Tensor or new._data.shape != t._data.shape or new.dtype != t.dtype:
                    raise ProtocolError("effect: new data of another shape or dtype")
                try:
                    t._data[...] = new._data
                except ValueError:  # a read-only array: replace it
                    t._data = new._data.copy()
                t._bump_version()
            if "grad" in eff:
                g = self.decode(eff["grad"])
                if g is not None and (type(g) is not Tensor or g._data.shape != t._data.shape):
                    raise ProtocolError("effect: a .grad of another shape")
                try:
                    t.grad = None if g is None else g.detach()
                except (RuntimeError, TypeError, ValueError, AttributeError):
                    pass

    # ---------------------------------------------------------------- values
    def export(self, obj: Any) -> int:
        n = self._ids.get(id(obj))
        if n is None or self.table.get(n) is not obj:
            n = next(self._count)
            self.table[n] = obj
            self._ids[id(obj)] = n
        return n

    def encode(self, v: Any, sent: list | None = None, leaves: list | None = None,
               outs: list | None = None, depth: int = 0) -> dict:
        """``v`` as a wire value; tensors go into ``sent`` (for effects) and, when they require grad,
        ``leaves`` (graph inputs of a request) or ``outs`` (graph outputs of a reply)."""
        if depth > wire.MAX_DEPTH:
            raise ValueError("a value nested too deeply to cross the bridge")
        t = type(v)
        if v is None:
            return {"k": "none"}
        if t is bool:
            return {"k": "bool", "v": v}
        if t is int:
            if not -wire.MAX_INT <= v <= wire.MAX_INT:
                raise ValueError("an int too large to cross the bridge")
            return {"k": "int", "v": v}
        if t is float:
            return {"k": "float", "v": wire.float_to_wire(v)}
        if t is str:
            return {"k": "str", "v": v[:wire.MAX_STR]}
        if t in (list, tuple):
            if len(v) > wire.MAX_ITEMS:
                raise ValueError("a list too long to cross the bridge")
            return {"k": t.__name__, "items": [self.encode(x, sent, leaves, outs, depth + 1) for x in v]}
        if t is dict and all(type(k) is str for k in v):
            return {"k": "dict", "items": [[k, self.encode(x, sent, leaves, outs, depth + 1)] for k, x in v.items()]}
        if t is np.ndarray:
            return {"k": "array", **wire.array_to_wire(v)}
        if isinstance(v, np.generic) and v.dtype.name in wire.DTYPES:
            d = wire.array_to_wire(np.asarray(v))
            return {"k": "scalar", "dtype": d["dtype"], "b64": d["b64"]}
        if t is Tensor and self.tensor_handles:
            return self._handle(v)
        if t in _STD_DICTS and self.exports == "all" and all(type(k) is str for k in v):
            v, t = dict(v), dict  # a Counter or a defaultdict is the dict it holds (a subclass of the student's stays a proxy)
        if t is dict and all(type(k) is str for k in v):
            return {"k": "dict", "items": [[k, self.encode(x, sent, leaves, outs, depth + 1)] for k, x in v.items()]}
        if t is Tensor:
            d = {"k": "tensor", **wire.array_to_wire(v._data), "rg": bool(v.requires_grad)}
            if v.is_leaf and v.grad is not None:
                d["grad"] = {"k": "tensor", **wire.array_to_wire(v.grad._data), "rg": False}
            if _fwAD._current_level >= 0:
                tangent = _fwAD.unpack_dual(v).tangent
                if tangent is not None:
                    d["tangent"] = {"k": "tensor", **wire.array_to_wire(tangent._data.astype(v._data.dtype)),
                                    "rg": False}
            if sent is not None:
                sent.append(v)
            if v.requires_grad:
                if leaves is not None:
                    d["leaf"] = len(leaves)
                    leaves.append(v)
                elif outs is not None:
                    d["out"] = len(outs)
                    outs.append(v)
            return d
        if t is RemoteObject and v._peer is self:
            return {"k": "ref", "id": v._rid}
        if isinstance(v, type) and v.__dict__.get("_peer") is self:
            return {"k": "ref", "id": v.__dict__["_rid"]}
        if isinstance(v, _BridgeNode) and v._link is not None and v._link.peer is self and v._link.node is not None:
            return {"k": "ref", "id": v._link.node._rid}
        return self._handle(v)

    def _handle(self, v: Any) -> dict:
        if self.exports == "callables" and not isinstance(v, (types.FunctionType, types.MethodType,
                                                              types.BuiltinFunctionType, types.LambdaType)):
            raise TypeError(f"a {type(v).__name__} cannot be handed to the student's code (only data and functions)")
        if isinstance(v, type):
            kind = "function_class" if issubclass(v, Function) else "class"
        elif isinstance(v, BackwardNode):
            kind = "node"
        elif callable(v):
            kind = "callable"
        else:
            kind = "object"
        name = getattr(v, "__name__", None) if kind != "object" else None
        name = name if type(name) is str else type(v).__name__
        return {"k": "handle", "id": self.export(v), "kind": kind, "name": name[:wire.MAX_NAME]}

    def decode(self, v: dict, outs: list | None = None, leaves: list | None = None,
               received: list | None = None, tangents: dict | None = None) -> Any:
        """A checked wire value as a fresh object of a real type (or a proxy for a handle).

        A tensor with a tangent becomes a dual tensor at this side's active level; a graph output's
        tangent goes into ``tangents`` (by output number), for the tensor that bridges it."""
        k = v["k"]
        if k == "none":
            return None
        if k in ("bool", "int", "str"):
            return v["v"]
        if k == "float":
            return wire.float_from_wire(v["v"])
        if k in ("list", "tuple"):
            items = [self.decode(x, outs, leaves, received, tangents) for x in v["items"]]
            return items if k == "list" else tuple(items)
        if k == "dict":
            return {key: self.decode(x, outs, leaves, received, tangents) for key, x in v["items"]}
        if k == "array":
            return wire.array_from_wire(v)
        if k == "scalar":
            return wire.array_from_wire(v, ())[()]
        if k == "tensor":
            arr = wire.array_from_wire(v)
            t = Tensor._wrap(arr)
            if v["rg"]:
                if arr.dtype.kind != "f":
                    raise ProtocolError("a tensor of an integer or bool dtype that requires grad")
                t.requires_grad_(True)
            if "grad" in v:
                g = wire.array_from_wire(v["grad"])
                if g.shape != arr.shape:
                    raise ProtocolError("a tensor whose .grad has another shape")
                t.grad = Tensor._wrap(g.astype(arr.dtype, copy=False))
            if received is not None:
                received.append(t)
            tangent = None
            if "tangent" in v:
                if _fwAD._current_level < 0:
                    raise ProtocolError("a tangent outside a dual level")
                if arr.dtype.kind != "f":
                    raise ProtocolError("a tangent of a tensor that is not floating point")
                tangent = Tensor._wrap(wire.array_from_wire(v["tangent"]).astype(arr.dtype, copy=False))
            if "leaf" in v:
                if leaves is None or not v["rg"]:
                    raise ProtocolError("a graph input in a value that is not a graph call's argument")
                leaves.append(t)
            if "out" in v:
                if outs is None or not v["rg"] or v["out"] != len(outs):
                    raise ProtocolError("a graph output out of place (outputs are numbered in order, from 0)")
                outs.append(t)
                if tangent is not None:
                    if tangents is None:
                        raise ProtocolError("a graph output's tangent where none was asked for")
                    tangents[v["out"]] = tangent
                return _Out(v["out"])
            return t if tangent is None else _fwAD.make_dual(t, tangent)
        if k == "ref":
            if v["id"] not in self.table:
                raise ProtocolError("a reference to an object this side never exported")
            return self.table[v["id"]]
        if k == "handle":
            rid = v["id"]
            if rid not in self.proxies:
                self.proxies[rid] = (function_proxy(self, rid, v["name"]) if v["kind"] == "function_class"
                                     else RemoteObject(self, rid, v["kind"], v["name"]))
            return self.proxies[rid]
        raise ProtocolError(f"unknown value kind {k!r}")

    # ---------------------------------------------------------------- answers (the other side asks)
    def handle(self, msg: Any) -> dict:
        """Answer one request; exceptions of the served code become error replies."""
        rid = msg.get("id", 0) if type(msg) is dict and type(msg.get("id")) is int else 0
        try:
            msg = wire.check_request(msg)
            for g in msg.get("free", ()):
                self._free_graph(g)
            for g in msg.get("release", ()):
                self.graphs.pop(g, None)
            if msg["op"] not in self.serves:
                raise ProtocolError(f"this side does not answer {msg['op']!r} requests")
            if self.depth >= MAX_NESTING:
                raise RecursionError(f"more than {MAX_NESTING} nested calls across the bridge")
            self.depth += 1
            seen: list = []
            try:
                if self.exports == "all":  # the worker: the student's warnings travel with the reply
                    with warnings.catch_warnings(record=True) as seen:
                        warnings.simplefilter("always")
                        reply = self._answer(msg, seen)
                else:
                    reply = self._answer(msg, seen)
            finally:
                self.depth -= 1
            reply["re"] = rid
            wire.dumps(reply)  # over a limit: an error reply instead
            return reply
        except BaseException as e:  # noqa: BLE001 - whatever the served code raised is an observation
            if isinstance(e, (KeyboardInterrupt, SystemExit)) and self.exports == "callables":
                raise
            reply = {"re": rid, "error": self._error(e)}
            if getattr(e, "_bridge_warnings", None):
                reply["warnings"] = e._bridge_warnings
            return reply

    def _answer(self, msg: dict, seen: list) -> dict:
        """The op's reply, with the warnings recorded while it ran (an exception carries them too)."""
        try:
            reply = getattr(self, "_op_" + msg["op"])(msg)
        except BaseException as e:
            if seen:
                try:
                    e._bridge_warnings = _warning_list(seen)
                except (AttributeError, TypeError):
                    pass
            raise
        if seen:
            reply["warnings"] = _warning_list(seen)
        return reply

    def _error(self, e: BaseException) -> dict:
        t = type(e)

        builtin = t.__module__ == "builtins" and isinstance(e, Exception)
        try:
            args = [self.encode(a) for a in e.args[:16] if type(a) in (str, int, float, bool, type(None))]
            if len(args) != len(e.args):
                raise TypeError
        except (TypeError, ValueError):
            args = [self.encode(str(e)[:wire.MAX_STR])]
        args = [a if a["k"] != "str" else {"k": "str", "v": a["v"][:4000]} for a in args]
        frames = []
        for f in traceback.extract_tb(e.__traceback__):
            fname = str(f.filename).replace("\\", "/")
            if any(p in fname for p in _PLUMBING):
                continue
            frames.append([fname[:1000], int(f.lineno or 0), str(f.name)[:wire.MAX_NAME]])
        name = t.__name__ if isinstance(t.__name__, str) else "RemoteError"
        base = next((c.__name__ for c in t.__mro__ if c.__module__ == "builtins" and issubclass(c, Exception)),
                    "Exception")
        return {"type": name[:wire.MAX_NAME], "builtin": builtin, "base": base, "args": args,
                "frames": frames[-wire.MAX_FRAMES:]}

    def _target(self, rid: int) -> Any:
        if rid not in self.table:
            raise ProtocolError("a request for an object this side never exported")
        return self.table[rid]

    def _op_call(self, msg: dict) -> dict:
        if _fwAD._current_level < 0 and _has_tangent(msg["args"], msg["kwargs"]):
            with _fwAD.dual_level():  # the reply is encoded inside it, with the results' tangents
                return self._op_call(msg)
        target = self._target(msg["obj"])
        if not callable(target):
            raise TypeError(f"'{type(target).__name__}' object is not callable")
        received: list[Tensor] = []
        leaves: list[Tensor] = []
        args = [self.decode(a, None, leaves, received) for a in msg["args"]]
        kwargs = {k: self.decode(a, None, leaves, received) for k, a in msg["kwargs"]}
        if leaves and not msg["graph"]:
            raise ProtocolError("graph inputs in a call that asked for no graph")
        before = [(t._version, t.grad, None if t.grad is None else t.grad._data.copy()) for t in received]
        if "vmap" in msg:
            if self.exports == "callables":
                raise ProtocolError("the judge's functions are not called under vmap")
            for in_dims, randomness in reversed(msg["vmap"]):  # the innermost level wraps the call first
                target = minigrad.vmap(target, in_dims=tuple(in_dims), randomness=randomness)
        with minigrad.set_grad_enabled(msg["grad"] or msg["graph"]):
            if self.exports == "callables":
                result = _judge_call(target, args, kwargs)
            else:
                result = target(*args, **kwargs)
        reply = self._reply(result, leaves if msg["graph"] else None)
        effects = []
        for i, (t, (ver, grad, grad_data)) in enumerate(zip(received, before)):
            eff: dict = {"i": i}
            if t._version != ver:
                eff["data"] = self.encode(t.detach())
            now = t.grad if t.is_leaf else grad
            if now is not grad or (now is not None and not np.array_equal(now._data, grad_data)):
                eff["grad"] = self.encode(None if now is None else now.detach())
            if len(eff) > 1:
                effects.append(eff)
        if effects:
            reply["effects"] = effects
        return reply

    def _reply(self, result: Any, leaves: list | None) -> dict:
        """The reply for a result; with ``leaves`` (a graph call), its tensors that require grad are
        graph outputs, kept with the leaves under a new graph number."""
        if leaves is None:
            return {"value": self.encode(result)}
        outs: list[Tensor] = []
        value = self.encode(result, None, None, outs)
        if not outs:
            return {"value": value}
        gid = next(self._count)
        self.graphs[gid] = (list(leaves), outs)
        node = outs[0].grad_fn
        return {"value": value, "graph": gid, "node": None if node is None else self._handle_any(node)}

    def _handle_any(self, v: Any) -> dict:
        saved, self.exports = self.exports, "all"
        try:
            return self._handle(v)
        finally:
            self.exports = saved

    def _free_graph(self, gid: int) -> None:
        """Free the saved tensors of a graph's nodes, as a backward without retain_graph would have
        (the vjp itself retains them: the caller's engine decides, after it, whether to free)."""
        if gid not in self.graphs:
            return
        stack = [o.grad_fn for o in self.graphs[gid][1] if o.grad_fn is not None]
        seen: set[int] = set()
        while stack:
            node = stack.pop()
            if id(node) in seen or isinstance(node, AccumulateGrad):
                continue
            seen.add(id(node))
            if node._saved is not None:
                node._saved = _FREED
            stack.extend(n for n in node._edges[::4] if n)

    def _op_vjp(self, msg: dict) -> dict:
        if msg["graph"] not in self.graphs:
            raise ProtocolError("a vjp of a graph this side never built")
        inputs, outputs = self.graphs[msg["graph"]]
        if len(msg["grads"]) != len(outputs):
            raise ProtocolError("vjp: one grad_output per graph output expected")
        new_leaves: list[Tensor] = []
        grads = [self.decode(g, None, new_leaves) for g in msg["grads"]]
        create = msg["create_graph"]
        if new_leaves and not create:
            raise ProtocolError("graph inputs in a vjp without create_graph")
        for i, (g, o) in enumerate(zip(grads, outputs)):
            if g is None:
                grads[i] = minigrad.zeros_like(o.detach())
            elif type(g) is not Tensor or g._data.shape != o._data.shape:
                raise ProtocolError("vjp: a grad_output that is not a tensor of its output's shape")
        with minigrad.set_grad_enabled(create):
            gs = minigrad.autograd.grad(outputs, inputs, grads, retain_graph=True, create_graph=create,
                                        allow_unused=True)
        return self._reply(list(gs), inputs + new_leaves if create else None)

    def _op_lookup(self, msg: dict) -> dict:
        ns = getattr(self, "namespace", {})
        if msg["name"] not in ns:
            raise NameError(f"name {msg['name']!r} is not defined")
        return {"value": self.encode(ns[msg["name"]])}

    def _op_getattr(self, msg: dict) -> dict:
        return {"value": self.encode(getattr(self._target(msg["obj"]), msg["name"]))}

    def _op_repr(self, msg: dict) -> dict:
        return {"value": self.encode(repr(self._target(msg["obj"]))[:MAX_REPR])}


# ------------------------------------------------------------------------------ the judge
JUDGE_ERROR = "an error in a function of the grader"


def _has_tangent(args: list, kwargs: list) -> bool:
    """Whether a call's wire arguments carry a forward-mode tangent anywhere."""
    stack = list(args) + [v for _, v in kwargs]
    while stack:
        v = stack.pop()
        if "tangent" in v:
            return True
        if v["k"] in ("list", "tuple"):
            stack.extend(v["items"])
        elif v["k"] == "dict":
            stack.extend(x for _, x in v["items"])
    return False


def _judge_call(target: Callable, args: list, kwargs: dict) -> Any:
    """A judge function called back by the student's code: an exception tells its type only (its
    message and lines may hold text of the check), never the judge's traceback."""
    try:
        return target(*args, **kwargs)
    except Exception as e:  # noqa: BLE001
        if isinstance(e, ProtocolError) or getattr(e, "_bridge_origin", False):
            raise  # the bridge's own errors, and the worker's own exceptions coming back
        t = type(e) if type(e).__module__ == "builtins" else Exception
        try:
            err = t(JUDGE_ERROR)
        except Exception:  # noqa: BLE001 - a type that takes other arguments (UnicodeDecodeError ...)
            err = Exception(JUDGE_ERROR)
    raise err


class Bridge(Peer):
    """The judge's peer: proxies for the worker's objects; it answers only callbacks and their vjps."""

    def __init__(self, send: Callable[[dict], dict] | None = None):
        super().__init__(send, serves=frozenset({"call", "vjp"}), exports="callables")

    def verify(self) -> bool:
        """One more round trip: False (and ``broken`` set) if a reply was forged or left unread.

        A frame written by the student's code that happened to parse as the reply to a request
        leaves the worker's real reply in the pipe; this request then reads a reply to another
        request, which is a ProtocolError. Call it after the check, before trusting its verdict.
        """
        try:
            self.request("lookup", name="__load_error__")
        except ProtocolError:
            return False
        return self.broken is None

    def namespace(self, names: Iterable[str]) -> dict:
        """{name: proxy or value} for the student's names that the worker has."""
        out = {}
        for n in names:
            try:
                out[n] = self.lookup(n)
            except NameError:
                pass
        return out


def start_worker(load: list, values: dict | None = None, *, timeout: float | None = 60.0,
                 command: list[str] | None = None, env: dict | None = None):
    """A worker process (``python -m minigrad.course._worker``) on pipes, and the judge's Bridge to it.

    Returns ``(bridge, process)``. ``values``: already encoded by ``_values.encode``. Close
    ``process.stdin`` (or kill it) when done. The grader's runner will relay these frames
    instead; this is the direct form (tests, ``--no-sandbox``).
    """
    import subprocess
    import sys

    proc = subprocess.Popen(command or [sys.executable, "-m", "minigrad.course._worker"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    transport = PipeTransport(proc.stdout.fileno(), proc.stdin.fileno(), timeout)
    if transport.io.read() != {"ready": True}:  # the worker's first frame (see _worker.READY)
        raise ProtocolError("the worker did not start")
    transport.io.write({"load": load, "values": values or {}})
    bridge = Bridge(transport.send)
    transport.on_request = bridge.handle
    return bridge, proc


# ------------------------------------------------------------------------------ one exercise, judged
class ExerciseJudge:
    """What ``_checker.main`` does for one exercise, done by the judge on proxies.

    ``check`` and ``hidden`` return the same dicts as the checker's two replies (``{"phase":
    "check", "results", "error", "tamper"}`` and ``run_hidden``'s verdict with ``phase`` and
    ``tamper``), so that the runner's feedback code can read them unchanged. A bridge that was
    tampered with (a forged or left-over frame, a broken protocol) shows as ``tamper``: the
    grader gives 0 whatever the check said, since a check may swallow a ProtocolError in an
    ``except Exception``.
    """

    def __init__(self, bridge: Bridge, names, instructor_imports: str = ""):
        from . import _checker

        self.bridge = bridge
        self.names = sorted(names)
        self._checker = _checker
        try:
            self.load_error = bridge.lookup("__load_error__")
            self.student_ns = bridge.namespace(self.names)
        except ProtocolError as e:  # the worker died loading the definitions, or answered nonsense
            self.load_error, self.student_ns = f"the grader could not read your definitions ({e})", {}
        self.inst_ns: dict = {"__builtins__": builtins}
        exec(compile(instructor_imports or "", "<instructor imports>", "exec"), self.inst_ns)

    def _tamper(self) -> list[str]:
        if self.bridge.verify():
            return []
        return [f"the grading channel was tampered with ({str(self.bridge.broken)[:200]})"]

    def check(self, check_source: str, exercise_id: str) -> dict:
        import minigrad.course as course

        results: list = []

        def fresh_check(eid, answer=None, **kw):
            r = course.run_check(eid, answer, **kw)
            results.append(r)
            return r

        where = self._checker._where
        error = None
        if self.load_error:
            error = {"kind": "load", "text": str(self.load_error)[:1500]}
        elif check_source:
            ns = self._checker._namespace(self.student_ns, self.names, self.inst_ns)
            ns["check"] = fresh_check
            try:
                exec(compile(check_source, "<check>", "exec"), ns)
            except ProtocolError as e:
                error = {"kind": "raised", "text": f"ProtocolError: {e}"[:1500], "where": None}
            except NameError as e:
                error = {"kind": "missing", "name": str(getattr(e, "name", "") or "")}
            except NotImplementedError as e:
                error = {"kind": "stub", "where": where(e.__traceback__)}
            except Exception as e:  # noqa: BLE001 - the student's code raised through a proxy
                error = {"kind": "raised", "text": f"{type(e).__name__}: {e}"[:1500], "where": where(e.__traceback__)}
        mine = [r.as_dict() for r in results if r.exercise_id == exercise_id] or [r.as_dict() for r in results]
        return {"phase": "check", "results": mine, "error": error, "tamper": self._tamper()}

    def hidden(self, source: str) -> dict:
        ns = self._checker._namespace(self.student_ns, self.names, self.inst_ns)
        try:
            verdict = self._checker.run_hidden(source, ns)
        except SyntaxError:
            verdict = {"passed": False, "failed": 0, "kind": "broken"}
        tamper = self._tamper()
        if tamper:
            verdict = {"passed": False, "failed": 0, "kind": "raised", "failures": []}
        verdict["tamper"] = bool(tamper)
        verdict["phase"] = "hidden"
        return verdict
