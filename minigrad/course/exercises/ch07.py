"""Checks for chapter 7 (double backward): a backward with its own backward, a saved-intermediate bug, Hv."""
from __future__ import annotations

from typing import Any

import numpy as np

import minigrad
from minigrad.autograd import gradcheck, gradgradcheck
from minigrad.course import CheckFailed, CheckResult, exercise
from minigrad.course._seed import check_seed
from minigrad.course.diagnose import diagnose_function


def _second_derivative(fn, values) -> np.ndarray:
    x = minigrad.tensor(values, dtype=minigrad.float64, requires_grad=True)
    (g,) = minigrad.autograd.grad(fn(x).sum(), x, create_graph=True)
    if not g.requires_grad:
        raise CheckFailed("under create_graph=True the first derivative has no graph (requires_grad is False): "
                          "autograd cannot differentiate it again. Is backward computing from tensors that "
                          "autograd sees as constants (an intermediate saved in forward, a NumPy result)? Use "
                          "the saved inputs or outputs with tensor operations, or a Function for the backward.")
    (h,) = minigrad.autograd.grad(g.sum(), x, allow_unused=True)
    return np.zeros(len(values)) if h is None else h.detach().numpy()


def _double(name: str, fn: Any, reference, values) -> CheckResult:
    """First derivative by diagnose_function, then gradgradcheck and the exact second derivative."""
    result = diagnose_function(fn, reference, inputs=[(3, 4)], low=-2.0, high=2.0)
    if not result.passed:
        return result
    x = minigrad.tensor(values, dtype=minigrad.float64, requires_grad=True)
    try:
        ok = gradgradcheck(fn.apply, (x,), raise_exception=False)
    except RuntimeError as err:
        raise CheckFailed(f"gradgradcheck raised: {str(err).splitlines()[0]}") from None
    want = _second_derivative(lambda t: reference(t), values)
    got = _second_derivative(fn.apply, values)
    if not ok or not np.allclose(got, want, rtol=1e-6, atol=1e-9):
        i = int(np.argmax(np.abs(got - want)))
        raise CheckFailed(f"the first derivative is right, but the second is not: at x = {values[i]:g} the "
                          f"second derivative should be {want[i]:.6g}, {name} gives {got[i]:.6g}. Is backward "
                          "using a tensor that autograd sees as a constant (an intermediate from forward, a "
                          "NumPy result)?")
    return CheckResult(True, result.message + "\nSecond derivatives are right too: gradgradcheck passes and "
                       "d²/dx² matches the reference.")


@exercise("ch07-ex1", points=3, title="Twice differentiable",
          minutes=25, objective="make a NumPy Function twice differentiable: a backward that is a Function")
def _check_exp_twice(ExpTwice: Any):
    res = _double("ExpTwice", ExpTwice, lambda t: t.exp(), [-1.3, -0.2, 0.4, 1.7])
    if not res.passed:
        return res
    x = minigrad.tensor([0.5, -0.5], dtype=minigrad.float64, requires_grad=True)
    (g,) = minigrad.autograd.grad(ExpTwice.apply(x).sum(), x, create_graph=True)
    node = g.grad_fn
    name = node.name() if node is not None else ""
    if not name.endswith("Backward") or name in ("MulBackward0", "ExpBackward0"):
        raise CheckFailed(f"the first derivative was made by {name or 'nothing'}: ExpTwice.backward should return "
                          "ExpNumPyBackward.apply(grad_output, x), so that the backward is a Function of its own.")
    return CheckResult(True, res.message + f"\nIts backward is a Function of its own ({name}).")


@exercise("ch07-ex2", points=2, title="Find the double-backward bug",
          minutes=20, objective="find with gradgradcheck a bug that only the second derivative shows")
def _check_logcosh(LogCoshFixed: Any):
    def reference(t):
        a = t.abs()
        return a + (1 + (-2 * a).exp()).log() - 0.6931471805599453

    res = _double("LogCoshFixed", LogCoshFixed, reference, [-1.5, -0.2, 0.7, 2.0])
    if not res.passed:
        return res
    # the safe formula must stay safe for large inputs
    x = minigrad.tensor([-800.0, 800.0], dtype=minigrad.float64, requires_grad=True)
    y = LogCoshFixed.apply(x)
    y.sum().backward()
    if not np.isfinite(y.detach().numpy()).all() or not np.allclose(x.grad.numpy(), [-1.0, 1.0]):
        raise CheckFailed("at x = ±800, forward or backward is not finite (or the slope is not ±1): keep the safe "
                          "formula |x| + log(1 + exp(-2|x|)) - log 2, and compute tanh with torch.tanh.")
    return res


@exercise("ch07-ex3", points=2, title="Hessian-vector products",
          minutes=20, objective="compute Hessian-vector products with two autograd.grad calls, no Hessian")
def _check_hvp(hessian_vector_product: Any, by_hand: Any = None):
    if not callable(hessian_vector_product):
        raise CheckFailed("hessian_vector_product must be a function.")
    rng = np.random.default_rng(check_seed(7))
    A = rng.standard_normal((4, 4))
    cases = [
        ("sum(x**4)", lambda t: (t ** 4).sum(), lambda a: np.diag(12 * a ** 2), 3),
        ("(x @ A @ x), a quadratic form", lambda t: t @ (minigrad.from_numpy(A) @ t), lambda a: A + A.T, 4),
        ("sum(sin(x)) * sum(x)", lambda t: t.sin().sum() * t.sum(),
         lambda a: np.diag(-np.sin(a) * a.sum()) + np.cos(a)[:, None] + np.cos(a)[None, :], 4),
        ("(x[0] * x[1])**2 + x[0]**3", lambda t: (t[0] * t[1]) ** 2 + t[0] ** 3,
         lambda a: np.array([[2 * a[1] ** 2 + 6 * a[0], 4 * a[0] * a[1]], [4 * a[0] * a[1], 2 * a[0] ** 2]]), 2),
    ]
    for name, f, hess, n in cases:
        a = rng.uniform(-1.5, 1.5, n)
        v = rng.standard_normal(n)
        x = minigrad.tensor(a, dtype=minigrad.float64, requires_grad=True)
        got = hessian_vector_product(f, x, minigrad.tensor(v, dtype=minigrad.float64))
        if not isinstance(got, minigrad.Tensor):
            raise CheckFailed(f"hessian_vector_product returned a {type(got).__name__}, expected a tensor.")
        if tuple(got.shape) != (n,):
            raise CheckFailed(f"for f = {name}, Hv has shape {tuple(got.shape)}, expected ({n},) (the shape of x).")
        if x.grad is not None:
            raise CheckFailed("x.grad is not None afterwards: use torch.autograd.grad (twice), not .backward().")
        if got.requires_grad:
            raise CheckFailed("the result still has a graph (requires_grad=True): the second torch.autograd.grad "
                              "needs no create_graph.")
        want = hess(a) @ v
        if not np.allclose(got.detach().numpy(), want, rtol=1e-7, atol=1e-9):
            raise CheckFailed(f"for f = {name} at x = {np.round(a, 3).tolist()}, v = {np.round(v, 3).tolist()}: "
                              f"expected Hv = {np.round(want, 5).tolist()}, got {np.round(got.detach().numpy(), 5).tolist()}. "
                              "Take the gradient with create_graph=True, dot it with v, differentiate again.")
    if by_hand is None:
        raise CheckFailed("hessian_vector_product is right; now compute by_hand = 12 x0² ⊙ v0 and pass it: "
                          "check('ch07-ex3', hessian_vector_product, by_hand=by_hand).")
    expected = np.array([6.0, 48.0, -6.0])
    got = np.asarray(by_hand.detach().numpy() if isinstance(by_hand, minigrad.Tensor) else by_hand, dtype=float)
    if got.shape != (3,) or not np.allclose(got, expected):
        raise CheckFailed(f"hessian_vector_product is right, but by_hand = {np.round(got, 4).tolist()} is not "
                          "12 x0² ⊙ v0 for x0 = [1, -2, 0.5], v0 = [0.5, 1, -2].")
    return (f"hessian_vector_product is right on {len(cases)} functions (diagonal and full Hessians), returns a "
            "plain tensor and leaves x.grad None; by_hand = [6, 48, -6] agrees.")
