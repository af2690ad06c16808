"""Checks for chapter 4 (Sigmoid as a custom Function): Tanh saving its output, a stable Softplus, SiLU."""
from __future__ import annotations

import warnings

import numpy as np

import minigrad
from minigrad.course import CheckFailed, exercise
from minigrad.course._i18n import _
from minigrad.course.diagnose import diagnose_function

_WIDE = np.array([-1000.0, -700.0, -100.0, -90.0, -40.0, -1.0, 0.0, 1.0, 40.0, 90.0, 100.0, 700.0, 1000.0])


_STABLE = ("on [-1000, 1000], float32 and float64: no warning, no inf or nan, and accurate "
           "(relative error) down to the tiniest values")  # translated where it is shown: _(_STABLE)


def _np_sigmoid(x: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -x))


def _wide_range(fn, name: str, ref_value, ref_grad) -> None:
    """fn.apply must stay finite, warning-free and accurate on [-1000, 1000], float32 and float64.

    Accurate means a relative error below ``rtol`` (absolute only below the smallest normal float):
    a formula that loses tiny values (log(1 + z) where z = 1e-18 rounds to log(1) = 0) fails.
    """
    name = getattr(fn, "__name__", name)
    for dtype, np_dtype, rtol in ((minigrad.float64, np.float64, 1e-9), (minigrad.float32, np.float32, 1e-4)):
        tiny = float(np.finfo(np_dtype).tiny)
        x = minigrad.tensor(_WIDE, dtype=dtype, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = fn.apply(x)
            y.sum().backward()
        msgs = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
        if msgs:
            raise CheckFailed(_("{name} is not stable: on inputs from -1000 to 1000 ({dtype}) NumPy warned "
                                "{warnings}. Never exponentiate a large positive number: build the formula "
                                "from exp(-|x|), which lies in (0, 1].").format(name=name, dtype=dtype,
                                                                               warnings="; ".join(msgs)))
        got = y.detach().double().numpy()
        grad = None if x.grad is None else x.grad.double().numpy()
        if not np.isfinite(got).all():
            bad = _WIDE[~np.isfinite(got)]
            raise CheckFailed(_("forward of {name} gives inf or nan at x = {xs} ({dtype}).").format(
                name=name, xs=", ".join(f"{v:g}" for v in bad), dtype=dtype))
        if grad is None or not np.isfinite(grad).all():
            bad = _WIDE if grad is None else _WIDE[~np.isfinite(grad)]
            raise CheckFailed(_("backward of {name} gives inf or nan (or no gradient) at x = {xs} ({dtype}).")
                              .format(name=name, xs=", ".join(f"{v:g}" for v in bad), dtype=dtype))
        xd = x.detach().double().numpy()
        for what, a, b in (("values", got, ref_value(xd)), ("gradients", grad, ref_grad(xd))):
            off = ~np.isclose(a, b, rtol=rtol, atol=tiny)
            if off.any():
                i = int(np.argmax(off))
                hint = ""
                if abs(b[i]) < 1e-8 and abs(a[i]) < abs(b[i]) / 2:
                    hint = _(" A tiny z added to 1 rounds away (1 + 1e-18 == 1 in floating point): "
                             "torch.log1p(z) computes log(1 + z) without that loss.")
                text = (_("{name}'s values are inaccurate for extreme inputs ({dtype}): at x = {x} expected "
                          "{expected}, got {got}.") if what == "values" else
                        _("{name}'s gradients are inaccurate for extreme inputs ({dtype}): at x = {x} expected "
                          "{expected}, got {got}."))
                raise CheckFailed(text.format(name=name, dtype=dtype, x=f"{xd[i]:g}", expected=f"{b[i]:.6g}",
                                              got=f"{a[i]:.6g}") + hint)


@exercise("ch04-ex1", points=1, title="Tanh",
          minutes=10, objective="write a backward from the saved output alone")
def _check_tanh(TanhFunction):
    result = diagnose_function(TanhFunction, lambda x: x.tanh(), inputs=[(4, 5)], low=-3.0, high=3.0,
                               double_backward=True)
    if not result.passed:
        return result
    x = minigrad.tensor([-2.0, -0.5, 0.3, 1.5], dtype=minigrad.float64, requires_grad=True)
    y = TanhFunction.apply(x)
    saved = y.grad_fn.saved_tensors
    if len(saved) != 1 or saved[0] is None:
        raise CheckFailed(_("forward should save exactly one tensor (the output); it saved {n}.").format(n=len(saved)))
    if not np.allclose(saved[0].detach().numpy(), np.tanh(x.detach().numpy())):
        if np.allclose(saved[0].detach().numpy(), x.detach().numpy()):
            raise CheckFailed(_("forward saved its input. Save the output instead: tanh'(x) = 1 - tanh(x)^2 needs "
                                "only tanh(x), which forward has already computed."))
        raise CheckFailed(_("the saved tensor is not tanh(x): save the output of forward."))
    return result.message + "\n  - " + _("it saves the output and computes 1 - tanh(x)^2 from it")


@exercise("ch04-ex2", points=2, title="Stable Softplus",
          minutes=25, objective="make forward and backward numerically stable for inputs in [-1000, 1000]")
def _check_softplus(SoftplusFunction):
    def reference(x):
        return x.clamp(min=0) + (-x.abs()).exp().log1p()

    result = diagnose_function(SoftplusFunction, reference, inputs=[(4, 5)], low=-4.0, high=4.0,
                               double_backward=True)
    if not result.passed:
        return result
    _wide_range(SoftplusFunction, "SoftplusFunction",
                lambda x: np.logaddexp(0.0, x), _np_sigmoid)
    return result.message + "\n  - " + _(_STABLE)


@exercise("ch04-ex3", points=3, title="Stable SiLU",
          minutes=30, objective="derive a product-rule gradient and implement it stably, deciding what to save")
def _check_silu(SiLUFunction):
    def reference(x):
        return x * x.sigmoid()

    result = diagnose_function(SiLUFunction, reference, inputs=[(4, 5)], low=-5.0, high=5.0,
                               double_backward=True)
    if not result.passed:
        return result

    def silu_grad(x):
        s = _np_sigmoid(x)
        return s * (1 + x * (1 - s))

    _wide_range(SiLUFunction, "SiLUFunction", lambda x: x * _np_sigmoid(x), silu_grad)
    return result.message + "\n  - " + _(_STABLE)
