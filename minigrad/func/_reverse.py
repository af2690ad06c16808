"""torch.func's reverse-mode transforms: grad, grad_and_value, vjp, jacrev, hessian.

How they run on minigrad's ordinary tape (PyTorch uses "levels" of wrapped tensors instead):
each differentiated argument enters the function as a fresh tensor of this transform alone, a
new leaf that requires grad, or ``x.view_as(x)`` when ``x`` already requires grad (so that an
enclosing transform, or plain autograd outside, still sees the path through it). After the call
the transform asks autograd.grad for the gradients. They are recorded (create_graph) only when
the result reaches something outside this transform, which is what makes grad(grad(f)) and
backward() through a transform's result work, and every result that reaches nothing outside is
detached: outside, it looks like any tensor that was computed without autograd.
"""
from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

import numpy as np

from .._tensor import Tensor
from ..autograd import engine as _engine
from ..autograd import forward_ad as _fwAD
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..autograd._transform_state import transform
from ._pytree import tree_flatten, tree_unflatten

__all__ = ["grad", "grad_and_value", "vjp", "jacrev", "hessian"]


# ---------------------------------------------------------------------------------------------
# argnums and inputs

def _check_argnums(argnums: Any, num_args: int) -> int | tuple:
    """``argnums`` with negative numbers wrapped, after PyTorch's checks (and its error texts)."""
    if not isinstance(argnums, (int, tuple)) or isinstance(argnums, bool):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, tuple):
        if len(argnums) == 0:
            raise RuntimeError("argnums must be non-empty")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        return tuple(_check_argnum(a, num_args) for a in argnums)
    return _check_argnum(argnums, num_args)


def _check_argnum(argnum: Any, num_args: int) -> int:
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _enter(t: Any) -> Tensor:
    """The tensor the function sees for a differentiated input ``t``."""
    if not isinstance(t, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(t)}")
    if t._rg:
        return t.view_as(t)  # differentiable alias: paths to t's own graph stay visible outside
    if _fwAD._tangent(t) is not None:  # a dual tensor (jacfwd(jacrev(f)), hessian): keep its tangent
        return t.view_as(t).requires_grad_(True)
    return t.detach().requires_grad_(True)


class _Inputs:
    """The differentiated arguments of one transform call: their pytree, and the tensors inside."""

    def __init__(self, args: tuple, argnums: int | tuple | None) -> None:
        self.argnums = argnums
        chosen = args if argnums is None else (args[argnums] if isinstance(argnums, int)
                                               else tuple(args[i] for i in argnums))
        flat, self.spec = tree_flatten(chosen)
        self.flat = [_enter(t) for t in flat]
        self.own = {id(t) for t in self.flat if t.grad_fn is None}  # the leaves this call created
        inside = tree_unflatten(self.flat, self.spec)
        if argnums is None:
            self.args = tuple(inside)
        elif isinstance(argnums, int):
            self.args = args[:argnums] + (inside,) + args[argnums + 1:]
        else:
            new = list(args)
            for i, v in zip(argnums, inside):
                new[i] = v
            self.args = tuple(new)

    def reaches_outside(self, t: Any) -> bool:
        """Does ``t`` depend, through the tape, on a tensor that requires grad outside this call?"""
        if not isinstance(t, Tensor) or not t._rg:
            return False
        if _fwAD._tangent(t) is not None:  # carries a forward-AD tangent: its backward must record (tangents)
            return True
        if t.grad_fn is None:
            return id(t) not in self.own
        own, seen, stack = self.own, set(), [t.grad_fn]
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            var = getattr(node, "variable", None)
            if var is not None:
                if id(var) not in own:
                    return True
                continue
            edges = node._edges
            for j in range(0, len(edges), 4):
                if edges[j]:
                    stack.append(edges[j])
        return False

    def leave(self, t: Any) -> Any:
        """``t`` as the caller sees it: detached unless it reaches a tensor outside this call."""
        if isinstance(t, Tensor) and t._rg and not self.reaches_outside(t):
            return t.detach()
        return t


def _gradients(outputs: list, inputs: list, cotangents: list | None, retain_graph: bool,
               create_graph: bool) -> list:
    """autograd.grad where outputs that need no grad, and inputs they do not reach, give zeros."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents or [None] * len(outputs)) if o._rg]
    if not pairs:
        return [Tensor._wrap(np.zeros_like(t._data)) for t in inputs]
    outs = [o for o, _ in pairs]
    cots = None if cotangents is None else [c for _, c in pairs]
    found = _engine.grad(outs, inputs, cots, retain_graph=retain_graph, create_graph=create_graph,
                         allow_unused=True)
    return [Tensor._wrap(np.zeros_like(t._data)) if g is None else g for t, g in zip(inputs, found)]


def _unwrap_aux(aux: Any, inputs: _Inputs) -> Any:
    flat, spec = tree_flatten(aux)
    for a in flat:
        if not isinstance(a, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(a)}")
    return tree_unflatten([inputs.leave(a) for a in flat], spec)


# ---------------------------------------------------------------------------------------------
# grad and grad_and_value

def grad_and_value(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """``func`` -> a function returning ``(gradient, value)`` (``((gradient, value), aux)`` with aux)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        __tracebackhide__ = True
        nums = _check_argnums(argnums, len(args))
        outer = is_grad_enabled()
        with enable_grad():
            inputs = _Inputs(args, nums)
            with transform("grad"):
                output = func(*inputs.args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: "
                                       "(output, aux) if has_aux is True")
                output, aux = output
            if not isinstance(output, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                                   f"{type(output)}")
            if output.dim() != 0:
                raise RuntimeError(
                    f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
                    f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            record = outer and inputs.reaches_outside(output)
            grads = _gradients([output], inputs.flat, None, retain_graph=record, create_graph=record)
            grads = tree_unflatten([inputs.leave(g) for g in grads], inputs.spec)
            value = output if record else output.detach()  # record: it reaches outside
            if has_aux:
                return grads, (value, _unwrap_aux(aux, inputs))
            return grads, value

    return wrapper


def grad(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """``func`` (returning a scalar tensor) -> a function returning its gradient w.r.t. ``argnums``.

    Why a transform and not ``backward()``: the gradient is a value returned by a function, so it
    nests (``grad(grad(f))``) and it leaves every ``.grad`` alone.
    """
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        __tracebackhide__ = True
        results = inner(*args, **kwargs)
        if has_aux:
            g, (_, aux) = results
            return g, aux
        return results[0]

    return wrapper


# ---------------------------------------------------------------------------------------------
# vjp

def _vjp(func: Callable, primals: tuple, argnums: int | tuple | None, has_aux: bool, api: str = "vjp"):
    """(output, vjp_fn, aux, inputs): the work behind vjp and jacrev (error texts as vjp's)."""
    outer = is_grad_enabled()
    with enable_grad():
        inputs = _Inputs(primals, argnums)
        with transform(api):
            output = func(*inputs.args)
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: (output, aux) "
                                   "if has_aux is True")
            output, aux = output
            aux = _unwrap_aux(aux, inputs)
        flat_out, out_spec = tree_flatten(output)
        if not flat_out or (len(flat_out) == 1 and flat_out[0] is None):
            raise RuntimeError("vjp(f, *primals): Expected f to be a function that has non-empty output (got "
                               f"output = {flat_out})")
        for o in flat_out:
            if not isinstance(o, Tensor):
                raise RuntimeError("vjp(f, *primals): expected f(*primals) to return only tensors, got "
                                   f"unsupported type {type(o)}")
            if o._data.dtype.kind != "f":
                raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or complex Tensors, "
                                   f"got Tensor with dtype {o.dtype}")
        reach = [outer and inputs.reaches_outside(o) for o in flat_out]  # one walk per output
        outside = any(reach)
        result = tree_unflatten([o if r else o.detach() for o, r in zip(flat_out, reach)], out_spec)

    def vjp_fn(cotangents, retain_graph: bool = True, create_graph: bool | None = None):
        """The vector-Jacobian product of ``cotangents`` (the structure of the output)."""
        __tracebackhide__ = True
        if create_graph is None:
            create_graph = is_grad_enabled()
        flat_cot, cot_spec = tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {cot_spec!r}, primal output: {out_spec!r}")
        record = bool(create_graph) and (outside or any(isinstance(c, Tensor) and c._rg for c in flat_cot))
        with enable_grad():
            grads = _gradients(flat_out, inputs.flat, flat_cot, retain_graph=retain_graph or record,
                               create_graph=record)
            grads = [inputs.leave(g) if record else g for g in grads]
        return tree_unflatten(grads, inputs.spec)

    return result, vjp_fn, aux, inputs, flat_out, out_spec


def vjp(func: Callable, *primals: Any, has_aux: bool = False):
    """``(func(*primals), vjp_fn)``: ``vjp_fn(v)`` is v^T J for every primal, as a tuple.

    Why: one backward pass per cotangent, callable as often as needed (the graph is kept).
    """
    result, vjp_fn, aux, _, _, _ = _vjp(func, primals, None, has_aux)
    if has_aux:
        return result, vjp_fn, aux
    return result, vjp_fn


# ---------------------------------------------------------------------------------------------
# jacrev and hessian

def jacrev(func: Callable, argnums: int | tuple = 0, *, has_aux: bool = False,
           chunk_size: int | None = None, _preallocate_and_copy: bool = False) -> Callable:
    """``func`` -> a function returning its Jacobian w.r.t. ``argnums``, one row per output element.

    Each output tensor ``o`` and differentiated input ``x`` give a block of shape
    ``o.shape + x.shape``, nested as output structure, then input structure (as PyTorch's).
    The rows are the vector-Jacobian products of the standard basis of the outputs, all at once
    under vmap (``chunk_size`` rows at a time); an op without a batching rule falls back, with a
    warning, to one product per row.
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args):
        __tracebackhide__ = True
        nums = _check_argnums(argnums, len(args))
        _, vjp_fn, aux, inputs, flat_out, out_spec = _vjp(func, args, nums, has_aux, api="jacrev")
        sizes = [o.numel() for o in flat_out]
        rows = _basis_vjps(vjp_fn, flat_out, out_spec, sizes, len(inputs.flat), chunk_size)
        blocks = []  # per output, per input
        starts = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        for j, o in enumerate(flat_out):
            per_input = []
            for x, r in zip(inputs.flat, rows):
                block = r[int(starts[j]):int(starts[j + 1])].reshape(tuple(o.shape) + tuple(x.shape))
                per_input.append(inputs.leave(block))
            blocks.append(tree_unflatten(per_input, inputs.spec))
        jac = tree_unflatten(blocks, out_spec)
        if has_aux:
            return jac, aux
        return jac

    return wrapper


def _basis_vjps(vjp_fn: Callable, flat_out: list, out_spec, sizes: list, n_inputs: int,
                chunk_size: int | None) -> list:
    """Per differentiated input, the tensor of shape (total output elements, *input.shape) of v^T J rows."""
    from .._ops import stack

    total = int(sum(sizes))
    # cotangent j: rows starts[j]..starts[j+1] of an identity of size total, reshaped as output j
    eye = np.eye(total, dtype=np.result_type(*[o._data.dtype for o in flat_out])) if total else None
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    if total == 0:
        raise RuntimeError("jacrev: the function's outputs have no elements")
    basis = [Tensor._wrap(eye[:, starts[j]:starts[j + 1]].astype(o._data.dtype).reshape((total,) + tuple(o.shape)))
             for j, o in enumerate(flat_out)]
    try:
        from .._functorch.vmap import vmap
    except ImportError:
        vmap = None
    if vmap is not None:
        try:
            rows = vmap(lambda *cots: vjp_fn(tree_unflatten(list(cots), out_spec)), chunk_size=chunk_size)(*basis)
            return tree_flatten(rows)[0]
        except RuntimeError as e:
            if "no batching rule" not in str(e):
                raise
            warnings.warn(f"jacrev: one vector-Jacobian product per row, as vmap cannot batch this function ({e})",
                          stacklevel=3)
    rows: list[list] = [[] for _ in range(n_inputs)]
    for k in range(total):  # the standard basis, one row at a time
        grads, _ = tree_flatten(vjp_fn(tree_unflatten([b[k] for b in basis], out_spec)))
        for r, g in zip(rows, grads):
            r.append(g)
    return [stack(r) for r in rows]


def hessian(func: Callable, argnums: int | tuple = 0) -> Callable:
    """``func`` -> a function returning its Hessian w.r.t. ``argnums`` (PyTorch: jacfwd(jacrev(func))).

    Forward over reverse when minigrad.func has jacfwd, else reverse over reverse (same values).
    """
    try:
        from ._forward import jacfwd
    except ImportError:
        jacfwd = None
    if jacfwd is not None:
        return jacfwd(jacrev(func, argnums), argnums)
    return jacrev(jacrev(func, argnums), argnums)
