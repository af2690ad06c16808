"""Checks for chapter 8 (patterns from real code): a clipped straight-through sign, the maximum and its
position with non-differentiable indices."""
from __future__ import annotations

from typing import Any

import numpy as np

import minigrad
from minigrad.autograd.function import FunctionCtx
from minigrad.course import CheckFailed, CheckResult, _remote, _structure, exercise
from minigrad.course.diagnose import diagnose_function


def _as_tuple(value) -> tuple:
    return value if isinstance(value, tuple) else (value,)


@exercise("ch08-ex1", points=2, title="A clipped straight-through sign", minutes=15,
          objective="write a backward that is deliberately not the derivative, and test the rule it follows")
def _check_sign_ste(SignSTE: Any):
    result = diagnose_function(
        SignSTE,
        lambda x: np.where(np.asarray(x.detach().numpy()) >= 0, 1.0, -1.0),
        reference_backward=lambda g, x: ((np.abs(x) <= 1) * g,),
        inputs=[(6, 5)], kinks=[-1.0, 0.0, 1.0], low=-3.0, high=3.0, margin=0.1)
    if not result.passed:
        return result
    # the conventions at exactly the kinks, which random inputs never hit
    x = minigrad.tensor([-1.0, 0.0, 1.0], dtype=minigrad.float64, requires_grad=True)
    y = SignSTE.apply(x)
    if y.tolist()[1] != 1.0:
        raise CheckFailed(f"at x = 0 the sign should be +1 (x >= 0 gives +1), got {y.tolist()[1]:g}.")
    y.backward(minigrad.tensor([2.0, 3.0, 4.0], dtype=minigrad.float64))
    if x.grad is None or x.grad.tolist() != [2.0, 3.0, 4.0]:
        got = None if x.grad is None else x.grad.tolist()
        raise CheckFailed(f"at |x| = 1 exactly the gradient must still pass (|x| <= 1), with grad_output "
                          f"[2, 3, 4] at x = [-1, 0, 1] x.grad should be [2, 3, 4], got {got}.")
    for dtype in (minigrad.float64, minigrad.float32):
        got = SignSTE.apply(minigrad.tensor([0.5, -2.0], dtype=dtype, requires_grad=True)).dtype
        if got != dtype:
            raise CheckFailed(f"for a {str(dtype).split('.')[-1]} input the output should be "
                              f"{str(dtype).split('.')[-1]} (x's dtype), got {got}: a Python number in "
                              "torch.where takes the default dtype, convert with .to(x.dtype).")
    return CheckResult(True, result.message + "\n  - +1 at x = 0, the gradient passes at |x| = 1 exactly, "
                       "and the output keeps x's dtype")


class _SpyCtx(FunctionCtx):
    """A ctx that records what forward declares (called with forward directly, outside autograd)."""

    def __init__(self):
        super().__init__()
        self.marked: tuple = ()

    def mark_non_differentiable(self, *tensors):
        self.marked = self.marked + tensors
        super().mark_non_differentiable(*tensors)


@exercise("ch08-ex2", points=2, title="The maximum and its position", minutes=20,
          objective="return integer indices with mark_non_differentiable and scatter a gradient back")
def _check_max_with_index(MaxWithIndex: Any):
    if not (isinstance(MaxWithIndex, type) and hasattr(MaxWithIndex, "apply")):
        raise CheckFailed(f"MaxWithIndex must be a Function subclass, got {type(MaxWithIndex).__name__}.")
    x = minigrad.tensor([[1.0, 5.0, 2.0], [7.0, -1.0, 3.0]], dtype=minigrad.float64, requires_grad=True)
    out = MaxWithIndex.apply(x)
    if not isinstance(out, tuple) or len(out) != 2:
        raise CheckFailed("MaxWithIndex.apply(x) must return two tensors: (values, indices).")
    values, indices = out
    if indices.dtype != minigrad.int64:
        raise CheckFailed(f"the indices should be an int64 tensor (positions), got dtype {indices.dtype}.")
    if indices.tolist() != [1, 0]:
        raise CheckFailed(f"for x = [[1, 5, 2], [7, -1, 3]] the indices should be [1, 0] (the column of each "
                          f"row's maximum), got {indices.tolist()}.")
    if indices.requires_grad:
        raise CheckFailed("the indices require grad: mark them with ctx.mark_non_differentiable.")
    if _remote.is_remote(MaxWithIndex):  # graded: read from forward's source, a fact no reply can fake
        marks = _structure.method_calls(MaxWithIndex, "forward", "mark_non_differentiable") is not False
    else:  # a self-check: watch forward, called with a ctx that records what it declares
        spy = _SpyCtx()
        with minigrad.no_grad():
            spied = _as_tuple(MaxWithIndex.forward(spy, x.detach()))
        marks = any(m is spied[-1] for m in spy.marked)
    if not marks:
        raise CheckFailed("forward does not call ctx.mark_non_differentiable(indices): declare that the "
                          "indices have no gradient (integer outputs get none anyway, but the pattern asks "
                          "for it, and a float output would need it).")
    result = diagnose_function(lambda t: MaxWithIndex.apply(t)[0], lambda t: t.amax(1), inputs=[(4, 6)],
                               input_names=["x"])
    if not result.passed:
        return CheckResult(False, "values = MaxWithIndex.apply(x)[0]: " + result.message, details=result.details)
    return CheckResult(True, "MaxWithIndex is correct: the values and their gradient match x.amax(1) (the "
                       "gradient reaches each row's maximum only), the indices are int64 positions, and "
                       "forward marks them non-differentiable.")
