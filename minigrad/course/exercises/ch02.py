"""Checks for chapter 2 (ctx.save_for_backward)."""
from __future__ import annotations

import numpy as np

import minigrad
from minigrad.course import CheckFailed, exercise
from minigrad.course._i18n import _
from minigrad.course.diagnose import diagnose_function


@exercise("ch02-ex1", points=1, title="Cube, saving its input",
          minutes=10, objective="save an input with save_for_backward and use it in backward")
def _check_cube(Cube):
    return diagnose_function(Cube, lambda x: x * x * x, inputs=[(3, 4)], double_backward=True)


@exercise("ch02-ex2", points=2, title="Exp, saving its output",
          minutes=15, objective="save the output when the derivative is a function of the output")
def _check_exp(Exp):
    result = diagnose_function(Exp, lambda x: x.exp(), inputs=[(3, 4)])
    if not result.passed:
        return result
    x = minigrad.tensor([0.0, 1.0, -1.0], dtype=minigrad.float64, requires_grad=True)
    y = Exp.apply(x)
    saved = y.grad_fn.saved_tensors
    if len(saved) != 1:
        raise CheckFailed(_("Gradients are right, but save exactly one tensor (the output); you saved {n}.")
                          .format(n=len(saved)))
    if not np.allclose(saved[0].detach().numpy(), np.exp([0.0, 1.0, -1.0])):
        raise CheckFailed(_("Gradients are right, but the saved tensor is not the output exp(x): save the result "
                            "of forward, so that backward needs no second exp."))
    return result.message + "\n  - " + _("it saves its output, so backward does not compute exp again")


@exercise("ch02-ex3", points=2, title="Skip the gradients nobody needs",
          minutes=20, objective="use ctx.needs_input_grad to skip the gradients nobody needs")
def _check_mul_add(MulAdd):
    result = diagnose_function(MulAdd, lambda a, b, c: a * b + c, inputs=[(3,), (3,), (3,)],
                               input_names=["a", "b", "c"])
    if not result.passed:
        return result
    for needs in [(True, False, False), (False, True, False), (False, False, True)]:
        ts = [minigrad.tensor([1.0, 2.0, 3.0], dtype=minigrad.float64, requires_grad=n) for n in needs]
        out = MulAdd.apply(*ts)
        grads = MulAdd.backward(out.grad_fn, minigrad.ones_like(out))
        for i, (n, g) in enumerate(zip(needs, grads)):
            if not n and g is not None:
                names = "abc"
                raise CheckFailed(_("With only {needed} requiring grad, your backward still computed a gradient "
                                    "for {name}. Return None there: test ctx.needs_input_grad[{i}] before "
                                    "computing it.").format(needed=names[needs.index(True)], name=names[i], i=i))
    return result.message + "\n  - " + _("it returns None for the inputs that need no gradient (needs_input_grad)")


@exercise("ch02-ex4", points=3, title="Double, then ReLU",
          minutes=25, objective="fix a buggy Function: what to save, the true derivative, the convention at 0")
def _check_double_relu(DoubleReLU):
    return diagnose_function(DoubleReLU, lambda x: (x * 2).relu(), inputs=[(4, 5)], kinks=[0.0],
                             at_kinks={0.0: (0.0, "PyTorch's convention for relu")})
