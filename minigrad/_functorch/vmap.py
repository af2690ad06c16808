"""``minigrad.vmap`` (``torch.vmap`` / ``torch.func.vmap``): vectorize a function over a batch dimension.

How: each batched input becomes a tensor whose ``_data`` is a ``BatchedArray`` (batched.py), the sample
dimension moved to the front of the physical array and hidden from the logical shape. The user's function
then runs ONCE on the whole batch: every built-in op is NumPy code on ``_data``, so each NumPy call is
batched by the rules in batched.py, and so are the backward formulas (``vmap(grad(f))`` gives per-sample
gradients, ``vmap(vjp_fn)`` is jacrev). The outputs are unwrapped with the batch dim moved to ``out_dims``.

Entering and leaving a level are autograd Functions (``_AddBatchDim`` / ``_RemoveBatchDim``, each the
other's backward), so gradients flow through ``vmap`` from the outside too, to any order.

Custom ``autograd.Function``s follow PyTorch's rules (``custom_function_vmap``): ``setup_context`` is
required, then either ``generate_vmap_rule = True`` (forward runs on the batched inputs) or a ``vmap``
staticmethod ``vmap(info, in_dims, *args) -> (outputs, out_dims)``.
"""
from __future__ import annotations

import functools
import itertools
from collections import namedtuple
from typing import Any, Callable

import numpy as np

from .._tensor import Tensor
from ..autograd.function import Function
from . import _state
from .batched import BatchedArray, VmapError

__all__ = ["vmap", "VmapInfo"]

_level_ids = itertools.count(1)
_DOCS = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"


class _Level:
    __slots__ = ("id", "batch_size", "randomness")

    def __init__(self, batch_size: int, randomness: str) -> None:
        self.id = next(_level_ids)
        self.batch_size = batch_size
        self.randomness = randomness


def current_level() -> "_Level | None":
    """The innermost active vmap level (random ops read its ``randomness``), or None outside vmap."""
    return _state.LEVELS[-1] if _state.LEVELS else None


# --- a small pytree (tuple / list / dict / namedtuple nodes, as torch.utils._pytree) ----------------------
class _Spec:
    __slots__ = ("type", "context", "children", "num_leaves")

    def __init__(self, type_, context, children) -> None:
        self.type, self.context, self.children = type_, context, children
        self.num_leaves = 1 if type_ is None else sum(c.num_leaves for c in children)

    def __repr__(self, indent: int = 0) -> str:
        """PyTorch 2.13's TreeSpec repr, so that error texts match: ``TreeSpec(tuple, None, [*, *])``."""
        if self.type is None:
            return "*"
        s = f"TreeSpec({self.type.__name__}, {self.context}, ["
        if self.children:
            indent += 2
            s += self.children[0].__repr__(indent)
            s += "," if len(self.children) > 1 else ""
            s += ",".join("\n" + " " * indent + c.__repr__(indent) for c in self.children[1:])
        return s + "])"


_LEAF = _Spec(None, None, [])


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _children(x):
    """(node type, context, children) of a pytree node, or None for a leaf."""
    if _is_namedtuple(x):
        return type(x), type(x), list(x)
    if type(x) in (tuple, list):
        return type(x), None, list(x)
    if isinstance(x, dict):
        keys = list(x)
        return type(x), keys, [x[k] for k in keys]
    return None


def tree_flatten(x) -> tuple[list, _Spec]:
    node = _children(x)
    if node is None:
        return [x], _LEAF
    type_, ctx, kids = node
    leaves, specs = [], []
    for k in kids:
        lv, sp = tree_flatten(k)
        leaves += lv
        specs.append(sp)
    return leaves, _Spec(type_, ctx, specs)


def tree_unflatten(leaves: list, spec: _Spec):
    it = iter(leaves)

    def build(sp):
        if sp.type is None:
            return next(it)
        kids = [build(c) for c in sp.children]
        if sp.type is dict or (isinstance(sp.type, type) and issubclass(sp.type, dict)):
            return sp.type(zip(sp.context, kids))
        if sp.context is not None and sp.type is sp.context:  # namedtuple
            return sp.type(*kids)
        return sp.type(kids)

    return build(spec)


def _broadcast_to_and_flatten(tree, spec: _Spec):
    """``tree`` (a prefix of ``spec``'s structure) with each leaf repeated over its subtree; None if it does not fit."""
    node = _children(tree)
    if node is None:
        return [tree] * spec.num_leaves
    if spec.type is None:
        return None
    type_, ctx, kids = node
    if type_ is not spec.type or len(kids) != len(spec.children) or (
            isinstance(tree, dict) and ctx != spec.context):
        return None
    out = []
    for k, sp in zip(kids, spec.children):
        sub = _broadcast_to_and_flatten(k, sp)
        if sub is None:
            return None
        out += sub
    return out


def _name(func) -> str:
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)


# --- entering and leaving a level (differentiable) ----------------------------------------------------
def _batched_at(t, level: int) -> bool:
    return isinstance(t, Tensor) and isinstance(t._data, BatchedArray) and t._data._level == level


class _AddBatchDim(Function):
    """A tensor's dim ``dim`` becomes the batch dim of ``level`` (hidden from its shape)."""

    _vmap_internal = True

    @staticmethod
    def forward(x, dim, level):
        return Tensor._wrap(BatchedArray(np.moveaxis(x._data, dim, 0), level))

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, ctx.dim, ctx.level = inputs
        ctx.batch_size = x.shape[ctx.dim]

    @staticmethod
    def backward(ctx, g):
        return _RemoveBatchDim.apply(g, ctx.level, ctx.batch_size, ctx.dim), None, None


class _RemoveBatchDim(Function):
    """The batch dim of ``level`` becomes dim ``out_dim`` of an ordinary tensor (broadcast if x has none)."""

    _vmap_internal = True

    @staticmethod
    def forward(x, level, batch_size, out_dim):
        data = x._data
        if isinstance(data, BatchedArray) and data._level == level:
            return Tensor._wrap(np.moveaxis(data._p, 0, out_dim))
        shape = list(np.shape(data))
        shape.insert(out_dim, batch_size)
        return Tensor._wrap(np.broadcast_to(np.expand_dims(data, out_dim), tuple(shape)))

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, ctx.level, _, ctx.out_dim = inputs
        ctx.batched = isinstance(x._data, BatchedArray) and x._data._level == ctx.level

    @staticmethod
    def backward(ctx, g):
        if ctx.batched:
            return _AddBatchDim.apply(g, ctx.out_dim, ctx.level), None, None, None
        return g.sum(ctx.out_dim), None, None, None


def _add_batch_dim(x: Tensor, dim: int, level: int) -> Tensor:
    return _AddBatchDim.apply(x, dim, level)


def _remove_batch_dim(x: Tensor, level: int, batch_size: int, out_dim: int) -> Tensor:
    return _RemoveBatchDim.apply(x, level, batch_size, out_dim % (x.dim() + 1))


# --- vmap ---------------------------------------------------------------------------------------------
def _check_randomness(randomness) -> None:
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")


def _check_out_dims(out_dims, func) -> None:
    if isinstance(out_dims, int):
        return
    leaves, _ = tree_flatten(out_dims)
    for x in leaves:
        if x is not None and not isinstance(x, int):
            raise ValueError(
                f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a python "
                "collection of ints representing where in the outputs the vmapped dimension should appear.")


def _process_inputs(in_dims, args: tuple, func):
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(
            f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a (potentially "
            f"nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(
            f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying to vmap "
            "over a function with no inputs. The latter is unsupported.")
    flat_args, spec = tree_flatten(args)
    flat_in_dims = _broadcast_to_and_flatten(in_dims, spec)
    if flat_in_dims is None:
        raise ValueError(
            f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the structure of "
            f"`inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs has structure {spec}.")
    for i, (arg, d) in enumerate(zip(flat_args, flat_in_dims)):
        if not isinstance(d, int) and d is not None:
            raise ValueError(
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but in_dim must "
                "be either an integer dimension or None.")
        if isinstance(d, int) and not isinstance(arg, Tensor):
            raise ValueError(
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but the input "
                f"is of type {_torch_type(arg)}. We cannot vmap over non-Tensor arguments, please use None as the "
                "respective in_dim")
        if d is not None and not -arg.dim() <= d < arg.dim():
            raise ValueError(
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, but that "
                f"input is a Tensor of dimensionality {arg.dim()} so expected in_dim to satisfy "
                f"-{arg.dim()} <= in_dim < {arg.dim()}.")
        if d is not None and d < 0:
            flat_in_dims[i] = d % arg.dim()
    sizes = [arg.shape[d] for arg, d in zip(flat_args, flat_in_dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0], flat_in_dims, flat_args, spec


def _torch_type(x) -> str:
    """``type(x)`` as PyTorch prints it in its errors (minigrad's Tensor as torch.Tensor)."""
    return "<class 'torch.Tensor'>" if isinstance(x, Tensor) else str(type(x))


def _unwrap_outputs(outputs, out_dims, level: _Level, func):
    flat, spec = tree_flatten(outputs)

    def incompatible():
        raise ValueError(
            f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the structure "
            f"of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but outputs has structure {spec}.")

    if isinstance(outputs, Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            flat_dims = [out_dims]
        elif isinstance(out_dims, tuple) and len(out_dims) == 1:
            flat_dims = list(out_dims)
        else:
            incompatible()
    else:
        flat_dims = _broadcast_to_and_flatten(out_dims, spec)
        if flat_dims is None:
            incompatible()
    name = _name(func)
    result = []
    for out, d in zip(flat, flat_dims):
        if d is None:
            if _batched_at(out, level.id):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            result.append(out)
            continue
        if not isinstance(out, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {_torch_type(out)}. "
                             "Did you mean to set out_dims= to None for output?")
        n = out.dim() + 1
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        result.append(_remove_batch_dim(out, level.id, level.batch_size, d))
    return tree_unflatten(result, spec)


def _run_level(func, flat_args, flat_in_dims, spec, batch_size: int, randomness: str, out_dims, kwargs):
    from .._factories import _rng
    from ..autograd._transform_state import transform

    level = _Level(batch_size, randomness)
    batched = [a if d is None else _add_batch_dim(a, d, level.id) for a, d in zip(flat_args, flat_in_dims)]
    _state.LEVELS.append(level)
    _state.ACTIVE[0] = len(_state.LEVELS)
    real_rng = _rng[0]
    _rng[0] = _VmapRNG(real_rng, level)
    try:
        with transform("vmap"):
            outputs = func(*tree_unflatten(batched, spec), **kwargs)
    finally:
        if isinstance(_rng[0], _VmapRNG) and _rng[0]._level is level:
            _rng[0] = real_rng
        _state.LEVELS.remove(level)
        _state.ACTIVE[0] = len(_state.LEVELS)
    return _unwrap_outputs(outputs, out_dims, level, func)


ERR_RANDOM = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
              "'different' randomness flags on vmap or perform the randomness operation out of vmap")


class _VmapRNG:
    """The global generator while a vmap level runs (minigrad draws every random number from ``_rng[0]``).

    ``randomness='error'``: any draw raises PyTorch's error. 'same': one draw, shared by the batch (the real
    generator). 'different': one draw per sample, as a batched array (a draw of batch_size times the shape).
    """

    __slots__ = ("_real", "_level")

    def __init__(self, real, level: _Level) -> None:
        self._real, self._level = real, level

    def _draw(self, method: str, size, *args, **kwargs):
        mode = self._level.randomness
        if mode == "error":
            raise RuntimeError(ERR_RANDOM)
        fn = getattr(self._real, method)
        if mode == "same":
            return fn(*args, size=size, **kwargs)
        shape = () if size is None else ((size,) if isinstance(size, int) else tuple(size))
        return BatchedArray(fn(*args, size=(self._level.batch_size,) + shape, **kwargs), self._level.id)

    def standard_normal(self, size=None, dtype=np.float64):
        return self._draw("standard_normal", size, dtype=dtype)

    def random(self, size=None, dtype=np.float64):
        return self._draw("random", size, dtype=dtype)

    def uniform(self, low=0.0, high=1.0, size=None):
        return self._draw("uniform", size, low, high)

    def normal(self, loc=0.0, scale=1.0, size=None):
        return self._draw("normal", size, loc, scale)

    def exponential(self, scale=1.0, size=None):
        return self._draw("exponential", size, scale)

    def integers(self, low, high=None, size=None, dtype=np.int64):
        return self._draw("integers", size, low, high, dtype=dtype)

    def permutation(self, n):
        mode = self._level.randomness
        if mode == "error":
            raise RuntimeError(ERR_RANDOM)
        if mode == "same":
            return self._real.permutation(n)
        return BatchedArray(np.argsort(self._real.random((self._level.batch_size, int(n))), axis=1), self._level.id)

    def __getattr__(self, name):
        if self._level.randomness == "error":
            raise RuntimeError(ERR_RANDOM)
        if self._level.randomness == "same":
            return getattr(self._real, name)
        raise RuntimeError(f"vmap: minigrad cannot draw {name} per sample (randomness='different'); "
                           "use randomness='same' or draw outside vmap")


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """Vectorize ``func`` over dimension ``in_dims`` of its inputs; the results stack along ``out_dims``.

    Why: per-sample computations (per-sample gradients, Jacobians row by row, ensembles) written for one
    sample run on the whole batch at once, through the same vectorized NumPy code as a batched program.

    ``in_dims``: an int, or a tuple (nested like the arguments; None: not batched); ``out_dims`` likewise
    for the outputs. ``randomness``: 'error' (random ops raise), 'different' (each sample draws its own) or
    'same' (one draw shared by the batch). ``chunk_size``: run at most that many samples at a time.
    """
    _check_randomness(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        _check_out_dims(out_dims, func)
        batch_size, flat_in_dims, flat_args, spec = _process_inputs(in_dims, args, func)
        if chunk_size is None or chunk_size >= batch_size:
            return _run_level(func, flat_args, flat_in_dims, spec, batch_size, randomness, out_dims, kwargs)
        return _chunked(func, flat_args, flat_in_dims, spec, batch_size, randomness, out_dims, kwargs, chunk_size)

    return wrapped


def _chunked(func, flat_args, flat_in_dims, spec, batch_size, randomness, out_dims, kwargs, chunk_size):
    """``chunk_size``: the batch split in chunks, each vmapped, the outputs concatenated along their out_dims."""
    from .. import _ops

    results = []
    for start in range(0, batch_size, chunk_size):
        n = min(chunk_size, batch_size - start)
        chunk = [a if d is None else a.narrow(d, start, n) for a, d in zip(flat_args, flat_in_dims)]
        results.append(_run_level(func, chunk, flat_in_dims, spec, n, randomness, out_dims, kwargs))
    flat0, out_spec = tree_flatten(results[0])
    dims = [out_dims] if isinstance(results[0], Tensor) and not isinstance(out_dims, tuple) else (
        list(out_dims) if isinstance(results[0], Tensor) else _broadcast_to_and_flatten(out_dims, out_spec))
    columns = zip(*(tree_flatten(r)[0] for r in results))
    merged = [col[0] if d is None else _ops.cat(list(col), d) for col, d in zip(columns, dims)]
    return tree_unflatten(merged, out_spec)


# --- custom autograd.Functions under vmap --------------------------------------------------------------
VmapInfo = namedtuple("VmapInfo", ["batch_size", "randomness"])
VmapInfo.__doc__ = "What a Function's ``vmap`` staticmethod learns about the level: batch size and randomness."


def _plain_apply(cls, args):
    """``cls.apply(*args)`` with vmap's check switched off (the Function runs on what it is given)."""
    saved = _state.ACTIVE[0]
    _state.ACTIVE[0] = 0
    try:
        return Function.apply.__func__(cls, *args)
    finally:
        _state.ACTIVE[0] = saved


def custom_function_vmap(cls, args: tuple):
    """``Function.apply`` of a custom Function while a vmap level is active: PyTorch's rules.

    * ``setup_context`` must be overridden (checked by _transform_state before this is called);
    * ``generate_vmap_rule = True``: forward (a composition of minigrad / NumPy ops) runs on the batched inputs;
    * a ``vmap(info, in_dims, *args)`` staticmethod: it gets the inputs with the batch dim where ``in_dims``
      says (0 here, or None), returns ``(outputs, out_dims)``;
    * neither, or both: PyTorch's errors.
    """
    if getattr(cls, "_vmap_internal", False) or cls.__module__.startswith(("minigrad.nn.", "minigrad.autograd.",
                                                                         "minigrad.utils.", "minigrad.func.")):
        return _plain_apply(cls, args)
    from ..autograd._transform_state import check_function_supported

    check_function_supported(cls)
    has_rule = "vmap" in _own_attrs(cls)
    generate = getattr(cls, "generate_vmap_rule", False)
    if generate and has_rule:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True and an overridden vmap "
            "staticmethod. Please set generate_vmap_rule=False or delete the overridden vmap staticmethod to avoid "
            f"ambiguity. {_DOCS}")
    if not generate and not has_rule:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please override and "
            f"implement the vmap staticmethod or set generate_vmap_rule=True. {_DOCS}")
    levels = [a._data._level for a in args if isinstance(a, Tensor) and isinstance(a._data, BatchedArray)]
    top = max(levels) if levels else 0
    if generate or not top:
        return _plain_apply(cls, args)
    level = next(lv for lv in _state.LEVELS if lv.id == top)
    in_dims = tuple(0 if _batched_at(a, top) else None for a in args)
    inner = tuple(_RemoveBatchDim.apply(a, top, level.batch_size, 0) if d is not None else a
                  for a, d in zip(args, in_dims))
    outer_levels = [lv for lv in _state.LEVELS if lv.id < top]
    saved_levels = list(_state.LEVELS)
    _state.LEVELS[:] = outer_levels  # the rule runs below this level (its ops are not batched at it)
    _state.ACTIVE[0] = len(outer_levels)
    try:
        result = cls.vmap(VmapInfo(level.batch_size, level.randomness), in_dims, *inner)
    finally:
        _state.LEVELS[:] = saved_levels
        _state.ACTIVE[0] = len(saved_levels)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuntimeError(
            "Expected the vmap staticmethod to have two returns, an output and out_dims with pytree structure "
            f"compatible with the output. Instead, got {result!r}. {_DOCS}")
    outputs, out_dims = result
    flat, spec = tree_flatten(outputs)
    flat_dims = _broadcast_to_and_flatten(out_dims, spec)
    if flat_dims is None:
        raise RuntimeError(
            "The autograd.Function's vmap staticmethod returned an incompatible (output, out_dims) tuple. Expected "
            f"out_dims={out_dims} to be compatible with the structure of `output`. out_dims has structure "
            f"{tree_flatten(out_dims)[1]} but output has structure {spec}. {_DOCS}")
    wrapped = [o if d is None or not isinstance(o, Tensor) else _add_batch_dim(o, d % o.dim(), top)
               for o, d in zip(flat, flat_dims)]
    return tree_unflatten(wrapped, spec)


def _own_attrs(cls) -> set:
    """The names defined by ``cls`` and its bases below ``Function`` (a ``vmap`` there is an override)."""
    names = set()
    for k in cls.__mro__:
        if k is Function:
            break
        names.update(k.__dict__)
    return names


# --- gradients that reach a tensor with fewer batch levels than they have ---------------------------------
def _levels_of(data) -> set:
    levels = set()
    while isinstance(data, BatchedArray):
        levels.add(data._level)
        data = data._p
    return levels


def unbatch_grad(g: Tensor, target: Tensor) -> Tensor:
    """The gradient for ``target`` summed over the batch levels that ``target`` itself is not batched at.

    Why: a tensor used unbatched inside vmap (a captured weight, an input with in_dim None) receives, through
    the batched backward formulas, one gradient per sample; its gradient is their sum, as in PyTorch (where
    the broadcast over the batch dim is summed by autograd). Only levels that have ended are summed: inside
    an active level (``vmap(grad(f))``) the gradient stays per-sample. Called by the engine only for batched
    gradients.
    """
    keep = _levels_of(target._data) | {lv.id for lv in _state.LEVELS}
    while isinstance(g._data, BatchedArray) and g._data._level not in keep:
        data = g._data
        g = _RemoveBatchDim.apply(g, data._level, data._p.shape[0], 0).sum(0)
    return g


def _sum_levels(g: Tensor, levels: set) -> Tensor:
    while isinstance(g._data, BatchedArray) and g._data._level in levels:
        data = g._data
        g = _RemoveBatchDim.apply(g, data._level, data._p.shape[0], 0).sum(0)
    return g


def add_grads(a: Tensor, b: Tensor) -> Tensor:
    """The sum of two gradients for one tensor when one of them is per-sample (batched at a level that ended)
    and the other is not: the per-sample one is summed over its batch first, as PyTorch's broadcast backward
    would have (adding them as they are would count the other gradient once per sample)."""
    la, lb = _levels_of(a._data), _levels_of(b._data)
    if la != lb:
        active = {lv.id for lv in _state.LEVELS}
        a, b = _sum_levels(a, la - lb - active), _sum_levels(b, lb - la - active)
    return a + b


# --- autograd.grad(..., is_grads_batched=True) ------------------------------------------------------------
def grad_batched(outputs: tuple, inputs: tuple, grad_outputs: tuple, retain_graph, create_graph: bool,
                 allow_unused, materialize_grads: bool) -> tuple:
    """``autograd.grad`` with a batch of grad_outputs (their first dim): one backward under vmap.

    Why: a Jacobian row by row (autograd.functional.jacobian(vectorize=True), gradcheck's batched-grad check)
    costs one traversal of the graph instead of one per row.
    """
    from ..autograd.engine import grad as _grad

    for i, (o, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            raise RuntimeError("grad can be implicitly created only for scalar outputs\nWith is_grads_batched=True "
                               f"pass grad_outputs[{i}] of shape [batch, *output.shape].")
        if tuple(g.shape[1:]) != tuple(o.shape):
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch "
                "dimension. The sizes of the remaining dimensions are expected to match the shape of "
                f"corresponding output, but a mismatch was detected: grad_output[{i}] has a shape of "
                f"torch.Size({list(g.shape[1:])}) and output[{i}] has a shape of torch.Size({list(o.shape)}). If you "
                "only want some tensors in `grad_output` to be considered batched, consider using vmap.")
    unused: list = []

    def one(*gos):
        res = _grad(outputs, inputs, gos, retain_graph=retain_graph, create_graph=create_graph,
                    allow_unused=allow_unused, materialize_grads=materialize_grads)
        unused[:] = [r is None for r in res]
        return tuple(Tensor._wrap(np.zeros(())) if r is None else r for r in res)

    res = vmap(one)(*grad_outputs)
    return tuple(None if u else r for r, u in zip(res, unused))
