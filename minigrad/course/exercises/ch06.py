"""Checks for chapter 6 (Functions beyond elementwise): batched matmul, optional inputs, choosing the tool."""
from __future__ import annotations

from typing import Any

import numpy as np

import minigrad
from minigrad.course import CheckFailed, CheckResult, exercise
from minigrad.course._i18n import N_, _
from minigrad.course.diagnose import diagnose_function


@exercise("ch06-ex1", points=2, title="Batched matrix multiplication",
          minutes=20, objective="derive a batched matmul's gradients from the shapes, with needs_input_grad")
def _check_bmm(BatchedMatmul: Any):
    result = diagnose_function(BatchedMatmul, lambda a, b: a @ b, inputs=[(3, 2, 4), (3, 4, 5)],
                               input_names=["a", "b"])
    if not result.passed:
        return result
    # needs_input_grad: no gradient for an input that needs none
    a = minigrad.randn(2, 3, 4, dtype=minigrad.float64, requires_grad=True)
    b = minigrad.randn(2, 4, 5, dtype=minigrad.float64)
    out = BatchedMatmul.apply(a, b)
    grads = BatchedMatmul.backward(out.grad_fn, minigrad.ones(2, 3, 5, dtype=minigrad.float64))
    grads = grads if isinstance(grads, tuple) else (grads,)
    if len(grads) > 1 and grads[1] is not None:
        raise CheckFailed(_("when b does not require grad, backward still computes its gradient: use "
                            "ctx.needs_input_grad to skip it (return None for b)."))
    # one sample per batch: the batch must not be mixed
    a1 = minigrad.tensor(np.arange(24.0).reshape(2, 3, 4) / 10, dtype=minigrad.float64, requires_grad=True)
    b1 = minigrad.tensor(np.arange(40.0).reshape(2, 4, 5) / 10, dtype=minigrad.float64, requires_grad=True)
    g = minigrad.zeros(2, 3, 5, dtype=minigrad.float64)
    g[0] = 1.0                                     # only batch 0 receives a gradient
    BatchedMatmul.apply(a1, b1).backward(g)
    if a1.grad is None or b1.grad is None or float(a1.grad[1].abs().sum()) != 0.0 \
            or float(b1.grad[1].abs().sum()) != 0.0:
        raise CheckFailed(_("a gradient arriving only for batch element 0 changed the gradients of batch element "
                            "1: each a[i] and b[i] may only get gradient from output[i] (no sum over the batch)."))
    return CheckResult(True, result.message + "\n" + _("It skips the gradient of an input that needs none, and "
                                                         "keeps the batch elements apart."))


def _reference(x, scale=None, shift=None):
    out = x if scale is None else x * scale
    return out if shift is None else out + shift


@exercise("ch06-ex2", points=3, title="Optional scale and shift",
          minutes=25, objective="return None for absent optional inputs and sum the gradients of broadcast ones")
def _check_scale_shift(scale_shift: Any):
    if not callable(scale_shift):
        raise CheckFailed(_("scale_shift must be a function, got a {type}.").format(type=type(scale_shift).__name__))
    cases = [
        ("scale_shift(x, scale, shift)", lambda x, s, t: scale_shift(x, s, t),
         lambda x, s, t: _reference(x, s, t), [(4, 3), (3,), (3,)], ["x", "scale", "shift"]),
        ("scale_shift(x, shift=shift)", lambda x, t: scale_shift(x, shift=t),
         lambda x, t: _reference(x, shift=t), [(5, 2), (2,)], ["x", "shift"]),
        ("scale_shift(x, scale=scale)", lambda x, s: scale_shift(x, scale=s),
         lambda x, s: _reference(x, scale=s), [(5, 2), (2,)], ["x", "scale"]),
        ("scale_shift(x)", lambda x: scale_shift(x), lambda x: _reference(x) * 1.0, [(3, 4)], ["x"]),
    ]
    for call, fn, ref, shapes, names in cases:
        result = diagnose_function(fn, ref, inputs=shapes, input_names=names, trials=1)
        if not result.passed:
            return CheckResult(False, f"{call}: {result.message}", details=result.details)
    # the bias-like inputs are broadcast: their gradient must be summed by the Function itself
    x = minigrad.randn(4, 3, dtype=minigrad.float64, requires_grad=True)
    t = minigrad.randn(3, dtype=minigrad.float64, requires_grad=True)
    s = minigrad.randn(3, dtype=minigrad.float64, requires_grad=True)
    before = [a.detach().clone() for a in (x, s, t)]
    out = scale_shift(x, s, t)
    for name, a, b in zip(["x", "scale", "shift"], (x, s, t), before):
        if not minigrad.equal(a.detach(), b):
            raise CheckFailed(_("scale_shift changed its input {name} in place: forward must compute a new tensor "
                                "(x * scale, not x *= scale), or the caller's tensor changes behind their back.")
                              .format(name=name))
    cls = getattr(out.grad_fn, "_forward_cls", None)
    if cls is None or not hasattr(cls, "backward"):
        raise CheckFailed(_("scale_shift(x, scale, shift) must return the output of your Function's apply "
                            "(its grad_fn should be ScaleShiftBackward)."))
    grads = cls.backward(out.grad_fn, minigrad.ones(4, 3, dtype=minigrad.float64))
    grads = grads if isinstance(grads, tuple) else (grads,)
    if len(grads) < 3:
        raise CheckFailed(_("backward returned {n} value(s); forward takes 3 inputs (x, scale, shift).").format(n=len(grads)))
    for name, g in zip(["scale", "shift"], grads[1:3]):
        if g is not None and tuple(g.shape) != (3,):
            raise CheckFailed(_("backward returns a gradient of shape {shape} for {name}, which has shape "
                                "(3,): sum over the batch dimension yourself (the engine happened to do it for you).")
                              .format(shape=tuple(g.shape), name=name))
    out = scale_shift(x, None, t)
    grads = cls.backward(out.grad_fn, minigrad.ones(4, 3, dtype=minigrad.float64))
    grads = grads if isinstance(grads, tuple) else (grads,)
    if len(grads) > 1 and grads[1] is not None:
        raise CheckFailed(_("without a scale, backward must return None in the scale's place."))
    return _("scale_shift is correct with and without scale and shift: values and gradients match, the "
             "absent inputs get None, and the broadcast gradients are summed over the batch.")


_TOOLS = {"composition", "function", "hook", "module"}
_ANSWERS = {"a": "composition", "b": "function", "c": "hook", "d": "module", "e": "function", "f": "function"}
_WHY = {
    "a": N_("Swish is made of built-in operations (a product and a sigmoid): autograd differentiates it for you."),
    "b": N_("autograd cannot follow SciPy or NumPy code: only a Function can supply the backward."),
    "c": N_("you only want to look at a gradient as it flows past a tensor: that is what register_hook is for."),
    "d": N_("learnable parameters are state, and state belongs in an nn.Module (nn.Parameter)."),
    "e": N_("the backward is deliberately not the derivative of the forward (a straight-through estimator)."),
    "f": N_("in a Function you decide what is saved (forward) and what is recomputed (backward). For code you "
            "do not write yourself, the standard tools are torch.utils.checkpoint (recompute a block in backward) "
            "and torch.autograd.graph.saved_tensors_hooks (choose how saved tensors are kept); see chapter 8."),
}


@exercise("ch06-ex3", points=1, title="Should this be a Function?",
          minutes=10, objective="choose between a composition, a hook, a module and a custom Function")
def _check_tools(tools: Any):
    if not isinstance(tools, dict):
        raise CheckFailed(_("tools must be a dict like {example}, got a {type}.").format(
            example="{'a': 'composition', ...}", type=type(tools).__name__))
    if sorted(tools) != sorted(_ANSWERS):
        raise CheckFailed(_("answer each of a to f exactly once (your keys: {keys}).").format(keys=sorted(tools)))
    bad = [k for k, v in tools.items() if v not in _TOOLS]
    if bad:
        raise CheckFailed(_("each answer must be one of {tools}; {bad} is not.").format(tools=sorted(_TOOLS),
                                                                                      bad=", ".join(bad)))
    wrong = [k for k in sorted(_ANSWERS) if tools[k] != _ANSWERS[k]]
    if wrong:
        lines = "\n".join("  " + _("{key}: not {answer}.").format(key=k, answer=repr(tools[k])) for k in wrong)
        raise CheckFailed(_("{n} of 6 right. Think again about:").format(n=6 - len(wrong)) + f"\n{lines}")
    return _("all six right:") + "\n" + "\n".join(f"  {k}: {_ANSWERS[k]}: {_(_WHY[k])}" for k in sorted(_ANSWERS))
