"""gradcheck as chapter 5 teaches it: reentrancy and nondet_tol, the caller's grad mode, PyTorch's texts."""
import warnings

import numpy as np
import pytest

import minigrad
from minigrad.autograd import Function, gradcheck, gradgradcheck
from minigrad.autograd.gradcheck import GradcheckError


class ScaledBySum(Function):
    """y = x * sum(x); backward sums in a random order (a non-reentrant but correct backward)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x.sum()

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        order = minigrad.randperm(x.numel())
        return g * x[order].sum() + (g * x).sum()


def _x(n=30, seed=0):
    return minigrad.tensor(np.random.default_rng(seed).standard_normal(n), dtype=minigrad.float64,
                           requires_grad=True)


def test_non_reentrant_backward_is_reported_with_pytorchs_first_line():
    minigrad.manual_seed(0)
    with pytest.raises(GradcheckError) as info:
        gradcheck(ScaledBySum.apply, (_x(),))
    first = str(info.value).splitlines()[0]
    assert first.startswith("Backward is not reentrant, i.e., running backward with same input and grad_output")
    assert first.endswith("The tolerance for nondeterminism was 0.0.")
    assert not gradcheck(ScaledBySum.apply, (_x(),), raise_exception=False)


def test_nondet_tol_accepts_small_run_to_run_differences():
    minigrad.manual_seed(0)
    assert gradcheck(ScaledBySum.apply, (_x(),), nondet_tol=1e-12)


def test_reentrancy_is_checked_before_the_comparison():
    class WrongAndRandom(ScaledBySum):
        @staticmethod
        def backward(ctx, g):
            return ScaledBySum.backward(ctx, g) * 2  # wrong by a factor 2 as well

    minigrad.manual_seed(0)
    with pytest.raises(GradcheckError, match="not reentrant"):
        gradcheck(WrongAndRandom.apply, (_x(),))
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradcheck(WrongAndRandom.apply, (_x(),), nondet_tol=1e-12)


def test_random_forward_fails_whatever_nondet_tol():
    class Dropout(Function):
        @staticmethod
        def forward(ctx, x):
            keep = (minigrad.rand(x.shape, dtype=x.dtype) > 0.5).to(x.dtype) * 2
            ctx.save_for_backward(keep)
            return x * keep

        @staticmethod
        def backward(ctx, g):
            keep, = ctx.saved_tensors
            return g * keep

    minigrad.manual_seed(0)
    x = _x(8)
    assert not gradcheck(Dropout.apply, (x,), raise_exception=False, nondet_tol=1e9)

    def same_mask(t):
        minigrad.manual_seed(3)
        return Dropout.apply(t)

    assert gradcheck(same_mask, (x,))


def test_fn_runs_in_the_callers_grad_mode():
    """A hand-written vector-Jacobian product (autograd.grad inside fn) can be gradchecked, as in PyTorch."""
    def vjp(x, v):
        y = x * x * x
        g, = minigrad.autograd.grad(y, x, grad_outputs=v, create_graph=True)
        return g

    x, v = _x(4, 1), _x(4, 2)
    assert gradcheck(vjp, (x, v))
    assert gradgradcheck(lambda t: t * t * t, (x,))


def test_float32_warning_is_pytorchs():
    x = minigrad.tensor([0.5, 1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gradcheck(lambda t: t * 2, (x,), raise_exception=False)
    assert str(caught[0].message).startswith(
        "Input #0 requires gradient and is not a double precision floating point or complex. ")


def test_mismatch_report_starts_like_pytorchs():
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = minigrad.tensor([1.0, 2.0], dtype=minigrad.float64, requires_grad=True)
    with pytest.raises(GradcheckError) as info:
        gradcheck(Wrong.apply, (x,))
    head = str(info.value).split("\n\n")[0]
    assert head == ("Jacobian mismatch for output 0 with respect to input 0,\n"
                    "numerical:tensor([[3.0000, 0.0000],\n        [0.0000, 3.0000]], dtype=torch.float64)\n"
                    "analytical:tensor([[2., 0.],\n        [0., 2.]], dtype=torch.float64)")
