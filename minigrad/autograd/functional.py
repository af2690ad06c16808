"""torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp and hvp of a Python function.

Why a separate API from torch.func: these are the older, autograd-based helpers. They take the
inputs as a Tensor or a tuple of Tensors and answer in the same form (a tuple where the caller
gave a tuple, a bare Tensor where the caller gave one), and their results are detached unless
``create_graph=True``. ``strict=True`` turns "this output does not depend on that input" from a
zero into an error.

jvp uses the double-backward trick, as PyTorch's does by default: the vjp u -> J^T u is linear
in u, so differentiating it with respect to u, against v, gives J v with two reverse passes.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable

import numpy as np

from .._tensor import Tensor
from . import engine as _engine
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


# ---------------------------------------------------------------------------------------------
# the shared steps

def _as_tuple(x: Any, what: str, fn: str) -> tuple[bool, tuple]:
    """(was it a tuple, the tensors as a tuple), after checking that each one is a Tensor."""
    was_tuple = isinstance(x, tuple)
    items = x if was_tuple else (x,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = (f"the value at index {i} has type {type(el)}" if was_tuple
                     else f"the given {what} has type {type(el)}")
            raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of Tensors but {where}.")
    return was_tuple, items


def _prepare(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """Fresh tensors for the function: a view (graph kept) when create_graph and it requires grad."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad else t.detach().requires_grad_(need_graph)
                 for t in inputs)


def _finish(results: tuple, create_graph: bool) -> tuple:
    """The results as the caller gets them: detached unless the graph was asked for."""
    if results and isinstance(results[0], tuple):
        return tuple(_finish(r, create_graph) for r in results)
    return results if create_graph else tuple(r.detach() for r in results)


def _unpack(res: tuple, was_tuple: bool | tuple) -> Any:
    """Undo ``_as_tuple`` on a result: a bare Tensor where the caller gave one (two levels for Jacobians)."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            res = tuple(r[0] for r in res)
        return res if outer else res[0]
    return res if was_tuple else res[0]


def _check_v(v: tuple, ref: tuple, ref_is_tuple: bool) -> None:
    if len(v) != len(ref):
        if ref_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(ref)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, ref)):
        if a.size() != b.size():
            where = f"Entry {i} in " if ref_is_tuple else ""
            raise RuntimeError(f"{where}v has invalid size: should be {b.size()} but got {a.size()}.")


_STRICT = {
    "outputs": ("Output {i} of the user-provided function does not require gradients. The outputs must be "
                "computed in a differentiable manner from the input when running in strict mode."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of the user-provided "
                    "function. This is not allowed in strict mode."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided function with respect "
                 "to input {i} is independent of the input. This is not allowed in strict mode. You should ensure "
                 "that your function is twice differentiable and that the jacobian depends on the inputs (this "
                 "would be violated by a linear function for example)."),
    "hessian": ("The hessian of the user-provided function with respect to input {i} is independent of the input. "
                "This is not allowed in strict mode. You should ensure that your function is thrice "
                "differentiable and that the hessian depends on the inputs."),
}


def _strict_check(tensors: tuple, kind: str, strict: bool) -> None:
    """strict mode: every tensor must exist and require grad (else PyTorch's message for ``kind``)."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is "
                               "not allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_STRICT[kind].format(i=i))


def _grad(outputs: tuple, inputs: tuple, grad_outputs: tuple | None = None, create_graph: bool = False,
          retain_graph: bool | None = None) -> tuple:
    """autograd.grad over the outputs that require grad; None for inputs nothing reaches."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _engine.grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=retain_graph,
                        create_graph=create_graph, allow_unused=True)


_NONE_MSG = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode.",
    "back_trick": ("The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                   "using the double backward trick to compute forward mode gradients. This is not allowed in "
                   "strict mode."),
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed "
                   "in strict mode.",
    "double_back_trick": ("The hessian of the user-provided function is independent of entry {i} in the "
                          "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                          "backward trick to replace forward mode AD."),
}


def _zeros_for_none(grads: tuple, refs: tuple, strict: bool, create_graph: bool, stage: str) -> tuple:
    """Zeros where no gradient came back (or strict mode's error), and strict's create_graph check."""
    out = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_NONE_MSG[stage].format(i=i))
            g = Tensor._wrap(np.zeros_like(ref._data))
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        out.append(g)
    return tuple(out)


def _start(func: Callable, inputs: Any, v: Any, create_graph: bool, strict: bool, fn: str,
           v_like_inputs: bool) -> tuple:
    """Prepare inputs and v, run func: (inputs_tuple?, inputs, outputs_tuple?, outputs, v)."""
    in_tuple, ins = _as_tuple(inputs, "inputs", fn)
    ins = _prepare(ins, create_graph, need_graph=True)
    if v_like_inputs:
        if v is not None:
            _, v = _as_tuple(v, "v", fn)
            v = _prepare(v, create_graph, need_graph=False)
            _check_v(v, ins, in_tuple)
        elif len(ins) != 1 or ins[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                               "single Tensor with a single element.")
    out = func(*ins)
    out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", fn)
    _strict_check(outs, "outputs", strict)
    return in_tuple, ins, out_tuple, outs, v


# ---------------------------------------------------------------------------------------------
# vjp and jvp

def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T J)``: one reverse pass."""
    with enable_grad():
        in_tuple, ins, out_tuple, outs, _ = _start(func, inputs, None, create_graph, strict, "vjp", False)
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _prepare(v, create_graph, need_graph=False)
            _check_v(v, outs, out_tuple)
        elif len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single "
                               "Tensor with a single element.")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _zeros_for_none(_grad(outs, ins, v, create_graph=create_graph), ins, strict, create_graph, "back")
    return _unpack(_finish(outs, create_graph), out_tuple), _unpack(_finish(res, create_graph), in_tuple)


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), J v)`` by the double-backward trick (two reverse passes, no forward mode)."""
    with enable_grad():
        in_tuple, ins, out_tuple, outs, v = _start(func, inputs, v, create_graph, strict, "jvp", True)
        # u -> J^T u is linear in u: differentiate it at u = 0, against v, to get J v
        us = tuple(Tensor._wrap(np.zeros_like(o._data)).requires_grad_(True) for o in outs)
        jt_u = _grad(outs, ins, us, create_graph=True)
        _strict_check(jt_u, "grad_inputs", strict)
    with set_grad_enabled(True) if create_graph else contextlib.nullcontext():
        res = _zeros_for_none(_grad(jt_u, us, v, create_graph=create_graph), outs, strict, create_graph,
                              "back_trick")
    return _unpack(_finish(outs, create_graph), out_tuple), _unpack(_finish(res, create_graph), out_tuple)


# ---------------------------------------------------------------------------------------------
# jacobian and hessian

def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian of func at inputs: ``J[i][j]`` of shape ``outputs[i].shape + inputs[j].shape``.

    Reverse mode: one vector-Jacobian product per output element; forward mode (needs
    ``vectorize=True``, as PyTorch): one Jacobian-vector product per input element.
    ``vectorize`` changes how PyTorch batches the products, not the values.
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please either '
                                      'set `create_graph=False` or `strategy="reverse-mode"`.')
        return _jacobian_forward(func, inputs, strict, vectorize)
    with enable_grad():
        in_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
        ins = _prepare(ins, create_graph, need_graph=True)
        out_tuple, outs = _as_tuple(func(*ins), "outputs of the user-provided function", "jacobian")
        _strict_check(outs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")
        from .._ops import stack

        if vectorize:
            jac = _jacobian_rows_by_vmap(outs, ins, create_graph)
            if jac is not None:
                return _unpack(_finish(jac, create_graph), (out_tuple, in_tuple))
        jac = []
        for i, o in enumerate(outs):
            rows: list[list] = [[] for _ in ins]
            flat = o.reshape(-1)
            for k in range(o.numel()):
                got = _grad((flat[k],), ins, retain_graph=True, create_graph=create_graph)
                for j, (g, x) in enumerate(zip(got, ins)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{j}. This is not allowed in strict mode.")
                        g = Tensor._wrap(np.zeros_like(x._data))
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is independent of input "
                                           f"{i}. This is not allowed in strict mode when create_graph=True.")
                    rows[j].append(g)
            jac.append(tuple(
                (stack(r) if r else Tensor._wrap(np.zeros((0,) + tuple(x.shape), x._data.dtype)))
                .reshape(tuple(o.shape) + tuple(x.shape)) for r, x in zip(rows, ins)))
        return _unpack(_finish(tuple(jac), create_graph), (out_tuple, in_tuple))


def _jacobian_rows_by_vmap(outs: tuple, ins: tuple, create_graph: bool) -> tuple | None:
    """vectorize=True: every row v^T J at once, vmap over the standard basis of the flattened outputs
    (PyTorch batches autograd.grad the same way). None where vmap cannot batch the backward."""
    from .._functorch.vmap import vmap

    sizes = [o.numel() for o in outs]
    total = int(np.sum(sizes))
    if total == 0:
        return None
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    eye = np.eye(total)
    basis = [Tensor._wrap(eye[:, starts[i]:starts[i + 1]].astype(o._data.dtype)) for i, o in enumerate(outs)]
    flat_outs = tuple(o.reshape(-1) for o in outs)

    def rows(*cots):
        got = _grad(flat_outs, ins, cots, create_graph=create_graph, retain_graph=True)
        return tuple(Tensor._wrap(np.zeros_like(x._data)) if g is None else g for g, x in zip(got, ins))

    try:
        per_input = vmap(rows)(*basis)
    except RuntimeError as e:
        if "no batching rule" not in str(e):
            raise
        return None
    return tuple(tuple(r[int(starts[i]):int(starts[i + 1])].reshape(tuple(o.shape) + tuple(x.shape))
                       for r, x in zip(per_input, ins)) for i, o in enumerate(outs))


def _jacobian_forward(func: Callable, inputs: Any, strict: bool, vectorize: bool):
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                           'supported together (yet). Please either set `strict=False` or '
                           '`strategy="reverse-mode"`.')
    in_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian "
                                  "isonly implemented for `vectorize=True`.")
    from . import forward_ad as fwAD
    from .._ops import stack

    columns = None  # per output: per input: list of J e_k
    out_tuple, primal_outs = False, ()
    for j, x in enumerate(ins):
        for k in range(x.numel()):
            with fwAD.dual_level():
                duals = []
                for jj, xx in enumerate(ins):
                    t = np.zeros(xx.numel(), xx._data.dtype)
                    if jj == j:
                        t[k] = 1
                    duals.append(fwAD.make_dual(xx, Tensor._wrap(t.reshape(xx._data.shape))))
                out = func(*duals)
                out_tuple, outs = _as_tuple(out, "outputs", None) if isinstance(out, tuple) else (False, (out,))
                unpacked = [fwAD.unpack_dual(o) for o in outs]
            primal_outs = tuple(u[0] for u in unpacked)
            tangents = [u[1] if u[1] is not None else Tensor._wrap(np.zeros_like(u[0]._data)) for u in unpacked]
            if columns is None:
                columns = [[[] for _ in ins] for _ in outs]
            for i, tg in enumerate(tangents):
                columns[i][j].append(tg)
    jac = []
    for i, o in enumerate(primal_outs):
        per_input = []
        for j, x in enumerate(ins):
            cols = stack(columns[i][j], dim=-1)  # o.shape + (x.numel(),)
            per_input.append(cols.reshape(tuple(o.shape) + tuple(x.shape)))
        jac.append(per_input)
    return _unpack(jac, (out_tuple, in_tuple))  # lists, not tuples: PyTorch's forward mode returns those


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar function: the Jacobian of its gradient, ``H[i][j]`` per input pair."""
    in_tuple, ins = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*inp):
        out = func(*inp)
        out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _strict_check(outs, "outputs", strict)
        if out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single "
                               "element")
        return out.squeeze()

    def gradient(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(scalar_func, inp, create_graph=True)
        _strict_check(jac, "jacobian", strict)
        return jac

    res = jacobian(gradient, ins, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _unpack(res, (in_tuple, in_tuple))


# ---------------------------------------------------------------------------------------------
# vhp and hvp

def _scalar_output(outs: tuple, out_tuple: bool, fn: str) -> None:
    if out_tuple or not isinstance(outs[0], Tensor):
        raise RuntimeError(f"The function given to {fn} should return a single Tensor")
    if outs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn} should contain a single element")


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T H)``: the gradient, then one more reverse pass against v."""
    with enable_grad():
        in_tuple, ins, out_tuple, outs, v = _start(func, inputs, v, create_graph, strict, "vhp", True)
        _scalar_output(outs, out_tuple, "vhp")
        jac = _grad(outs, ins, create_graph=True)
        _strict_check(jac, "jacobian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _zeros_for_none(_grad(jac, ins, v, create_graph=create_graph), ins, strict, create_graph,
                              "double_back")
    return _unpack(_finish(outs, create_graph), out_tuple), _unpack(_finish(res, create_graph), in_tuple)


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), H v)`` by the double-backward trick (for a symmetric H it equals vhp)."""
    with enable_grad():
        in_tuple, ins, out_tuple, outs, v = _start(func, inputs, v, create_graph, strict, "hvp", True)
        _scalar_output(outs, out_tuple, "hvp")
        jac = _grad(outs, ins, create_graph=True)
        _strict_check(jac, "jacobian", strict)
        us = tuple(Tensor._wrap(np.zeros_like(x._data)).requires_grad_(True) for x in ins)
        h_u = _grad(jac, ins, us, create_graph=True)
        _strict_check(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _zeros_for_none(_grad(h_u, us, v, create_graph=create_graph), ins, strict, create_graph,
                              "double_back_trick")
    return _unpack(_finish(outs, create_graph), out_tuple), _unpack(_finish(res, create_graph), in_tuple)
