"""torch.func's forward-mode transforms, jvp and jacfwd, on minigrad's dual tensors (forward_ad).

``jvp(f, primals, tangents)`` runs ``f`` once inside a dual level, each primal carrying its
tangent, and reads the output tangents: the Jacobian-vector product ``J t`` costs about one
forward pass (plus the tangent arithmetic), whatever the number of outputs. ``jacfwd`` builds
the whole Jacobian from one such pass per input element (a basis tangent each): the better
choice over jacrev when there are fewer inputs than outputs.

minigrad has one dual level at a time (as torch.autograd.forward_ad), so a jvp inside a jvp
(jacfwd of jacfwd) computes the inner one by reverse mode (the double-vjp trick, recorded, so the
outer level's tangents flow through it); forward-over-reverse (jacfwd of jacrev, hessian) is direct.
"""
from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

import numpy as np

from .. import _ops
from .._tensor import Tensor
from ..autograd import forward_ad as fwAD
from ..autograd._transform_state import transform
from ._pytree import tree_flatten, tree_unflatten

__all__ = ["jvp", "jacfwd"]

_PREFIX = "jvp(f, primals, tangents): "


def _check_tree_of_tensors(leaves: list, what: str) -> None:
    for x in leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"{_PREFIX}Expected {what} to only contain Tensors, got {type(x)}")


def _outputs(out: Any, api: str) -> tuple[list, Any]:
    leaves, spec = tree_flatten(out)
    for o in leaves:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}expected f(*primals) to return only tensors, got unsupported type {type(o)}")
    return leaves, spec


def _split_aux(out: Any, has_aux: bool, api: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}output of function f should be a tuple: (output, aux) if has_aux is True")
    return out


def _plain(t: Tensor) -> Tensor:
    """A result as the caller sees it: the primal without the tangent of this (now closed) level."""
    return fwAD.unpack_dual(t).primal


def _detach_tree(tree: Any) -> Any:
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([_plain(x) if isinstance(x, Tensor) else x for x in leaves], spec)


def _spec_text(spec, indent: int = 0) -> str:
    """A pytree spec as PyTorch prints one in its errors: ``TreeSpec(tuple, None, [*,\n  *])``."""
    if spec.kind is None:
        return "*"
    name = spec.kind.__name__ if spec.kind in (tuple, list, dict) else spec.kind.__qualname__
    context = list(spec.context) if spec.kind is dict else None
    sep = ",\n" + " " * (indent + 2)
    return f"TreeSpec({name}, {context}, [{sep.join(_spec_text(c, indent + 2) for c in spec.children)}])"


def _nested_jvp(func: Callable, p_leaves: list, p_spec, t_leaves: list, has_aux: bool):
    """A jvp inside another (jacfwd(jacfwd(f)), jvp of jvp), by reverse mode: minigrad has one dual level,
    which the outer transform holds. J t = d/du <J^T u, t> (the double-vjp trick: J^T u is linear in u),
    everything recorded (create_graph), so the outer level's tangents flow through both backwards."""
    from ..autograd.engine import grad as _grad
    from ..autograd.grad_mode import enable_grad

    with enable_grad(), transform("jvp"):
        xs = [p.view_as(p) if p._rg else p.view_as(p).requires_grad_(True) for p in p_leaves]  # keep outer tangents
        out = func(*tree_unflatten(xs, p_spec))
        out, aux = _split_aux(out, has_aux, _PREFIX)
        o_leaves, o_spec = _outputs(out, _PREFIX)
        live = [o for o in o_leaves if o._rg]
        us = [Tensor._wrap(np.ones_like(o._data)).requires_grad_(True) for o in live]
        tangents_out = {}
        if live:
            vjps = _grad(live, xs, us, create_graph=True, allow_unused=True)
            total = None
            for g, t in zip(vjps, t_leaves):
                if g is not None:
                    term = (g * t).sum()
                    total = term if total is None else total + term
            if total is not None and total._rg:
                found = _grad(total, us, create_graph=True, allow_unused=True)
                tangents_out = {id(o): f for o, f in zip(live, found) if f is not None}
    tans = [tangents_out.get(id(o)) if id(o) in tangents_out else Tensor._wrap(np.zeros_like(o._data))
            for o in o_leaves]
    result = (tree_unflatten(list(o_leaves), o_spec), tree_unflatten(tans, o_spec))
    return result + (aux,) if has_aux else result


def jvp(func: Callable, primals: Any, tangents: Any, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J tangents)`` (and ``aux`` with has_aux), by one dual forward pass."""
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_PREFIX}Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    p_leaves, p_spec = tree_flatten(primals)
    t_leaves, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{_PREFIX}Expected primals and tangents to have the same python structure. For "
                           "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals with "
                           f"structure {_spec_text(p_spec)} and tangents with structure {_spec_text(t_spec)}")
    if not p_leaves:
        raise RuntimeError(f"{_PREFIX}Expected primals to contain at least one Tensor.")
    _check_tree_of_tensors(p_leaves, "primals")
    _check_tree_of_tensors(t_leaves, "tangents")
    if fwAD._current_level >= 0:  # inside another jvp / jacfwd: the one dual level is taken
        return _nested_jvp(func, p_leaves, p_spec, t_leaves, has_aux)
    with fwAD.dual_level(), transform("jvp"):
        duals = [fwAD.make_dual(p, t) for p, t in zip(p_leaves, t_leaves)]
        out = func(*tree_unflatten(duals, p_spec))
        out, aux = _split_aux(out, has_aux, _PREFIX)
        o_leaves, o_spec = _outputs(out, _PREFIX)
        primals_out, tangents_out = [], []
        for o in o_leaves:
            p, t = fwAD.unpack_dual(o)
            primals_out.append(p)
            tangents_out.append(t if t is not None else Tensor._wrap(np.zeros_like(o._data)))
        if has_aux:
            aux = _detach_tree(aux)
    if not any(x._rg for x in p_leaves + t_leaves):  # nothing outside to differentiate: plain results
        primals_out = [o.detach() for o in primals_out]
        tangents_out = [t.detach() for t in tangents_out]
    result = (tree_unflatten(primals_out, o_spec), tree_unflatten(tangents_out, o_spec))
    return result + (aux,) if has_aux else result


try:  # PyTorch's jacfwd is vmap over jvp; the loop below stands in where vmap cannot batch
    from .._functorch.vmap import vmap as _vmap
except ImportError:  # pragma: no cover - vmap is part of minigrad since issue 24
    _vmap = None


def _jacfwd_vmapped(f_of, d_leaves: list, d_spec, zeros: list, nums, has_aux: bool):
    """The Jacobian with one vmap of jvp per input leaf, its basis tangents the batch."""
    out = f_of(*d_leaves)  # the value (and aux) once, for the output's structure
    out, aux = _split_aux(out, has_aux, "jacfwd: ")
    o_leaves, o_spec = _outputs(out, "")
    per_leaf = []
    for k, x in enumerate(d_leaves):
        n = x._data.size
        basis = Tensor._wrap(np.eye(n, dtype=x._data.dtype).reshape((n,) + tuple(x.shape)))

        def column(t, k=k):
            tans = list(zeros)
            tans[k] = t
            res = jvp(f_of, tuple(d_leaves), tuple(tans), has_aux=has_aux)
            return tuple(tree_flatten(res[1])[0])

        cols = _vmap(column)(basis)  # per output leaf: (n, *out_shape)
        per_leaf.append([c.movedim(0, -1).reshape(tuple(o.shape) + tuple(x.shape)) for c, o in zip(cols, o_leaves)])
    per_output = []
    for m in range(len(o_leaves)):
        jacs = [leaf[m] for leaf in per_leaf]
        per_output.append(tree_unflatten(jacs, d_spec) if isinstance(nums, tuple) else jacs[0])
    jac = tree_unflatten(per_output, o_spec)
    return (jac, _detach_tree(aux)) if has_aux else jac


def jacfwd(func: Callable, argnums: int | tuple = 0, has_aux: bool = False, *, randomness: str = "error") -> Callable:
    """A function returning the Jacobian of ``func`` with respect to ``argnums``, by forward mode.

    The Jacobian of an output of shape ``O`` with respect to an input of shape ``I`` has shape
    ``O + I``; one jvp per input element gives one column, all of them at once under vmap (as
    PyTorch), or one by one where vmap cannot batch an op.
    """
    from ._reverse import _check_argnums

    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")

    @functools.wraps(func)
    def wrapper(*args):
        nums = _check_argnums(argnums, len(args))
        chosen = nums if isinstance(nums, tuple) else (nums,)
        diff = [args[i] for i in chosen]
        d_leaves, d_spec = tree_flatten(tuple(diff))
        for x in d_leaves:
            if not isinstance(x, Tensor):
                raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")

        def f_of(*leaves):
            full = list(args)
            for i, v in zip(chosen, tree_unflatten(list(leaves), d_spec)):
                full[i] = v
            return func(*full)

        zeros = [Tensor._wrap(np.zeros_like(x._data)) for x in d_leaves]
        if _vmap is not None and all(x._data.size for x in d_leaves):
            try:
                return _jacfwd_vmapped(f_of, d_leaves, d_spec, zeros, nums, has_aux)
            except Exception as e:  # noqa: BLE001 - an op vmap cannot batch: one jvp per column below
                # (never silently: the loop is slower; an error of func itself is raised again by the loop)
                warnings.warn(f"jacfwd: vmap could not batch the jvp ({type(e).__name__}: "
                              f"{str(e).splitlines()[0] if str(e) else ''}); computing the Jacobian one column at "
                              "a time instead", UserWarning, stacklevel=2)
        columns = []  # per input leaf: list of (output leaves' tangents) per element
        value = aux = o_spec = None
        for k, x in enumerate(d_leaves):
            cols = []
            for j in range(x._data.size):
                basis = np.zeros(x._data.size, dtype=x._data.dtype)
                basis[j] = 1
                tans = list(zeros)
                tans[k] = Tensor._wrap(basis.reshape(x._data.shape))
                res = jvp(f_of, tuple(d_leaves), tuple(tans), has_aux=has_aux)
                out, tan = res[0], res[1]
                if has_aux:
                    aux = res[2]
                o_leaves, o_spec = tree_flatten(out)
                value = out
                cols.append(tree_flatten(tan)[0])
            columns.append(cols)
        if value is None:  # no input element at all: evaluate once for the output's structure
            out = f_of(*d_leaves)
            out, aux = _split_aux(out, has_aux, "jacfwd: ")
            o_leaves, o_spec = _outputs(out, "")
        else:
            o_leaves = tree_flatten(value)[0]
        per_output = []
        for m, o in enumerate(o_leaves):
            jacs = []
            for x, cols in zip(d_leaves, columns):
                if cols:  # minigrad ops: the Jacobian stays differentiable (jacrev(jacfwd(f)), backward)
                    stacked = _ops.stack([c[m] for c in cols], -1)
                else:
                    stacked = Tensor._wrap(np.zeros(tuple(o.shape) + (0,), dtype=o._data.dtype))
                jacs.append(stacked.reshape(tuple(o.shape) + tuple(x.shape)))
            per_output.append(tree_unflatten(jacs, d_spec) if isinstance(nums, tuple) else jacs[0])
        jac = tree_unflatten(per_output, o_spec)
        return (jac, aux) if has_aux else jac

    return wrapper
