"""Checks for chapter 5 (testing a Function with gradcheck): reading reports, float32 settings, a gradcheck."""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

import minigrad
from minigrad.autograd import Function
from minigrad.autograd.gradcheck import gradcheck
from minigrad.course import CheckFailed, exercise
from minigrad.course._seed import check_seed


# ------------------------------------------------------------------ ch05-ex1: the mystery reports
class _CumsumTransposed(Function):
    """y_i = x_0 + ... + x_i; backward runs the sum forwards (J g) instead of backwards (J^T g)."""

    @staticmethod
    def forward(ctx, x):
        return x.cumsum(0)

    @staticmethod
    def backward(ctx, g):
        return g.cumsum(0)


class _SoftmaxDiagonal(Function):
    """softmax; backward keeps only the diagonal of the Jacobian, s(1 - s)."""

    @staticmethod
    def forward(ctx, x):
        s = minigrad.softmax(x, dim=0)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, g):
        s, = ctx.saved_tensors
        return g * s * (1 - s)


class _LeakyWrongSlope(Function):
    """Leaky ReLU with slope 0.01 in forward but 0.1 in backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return minigrad.where(x > 0, x, x * 0.01)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return minigrad.where(x > 0, g, g * 0.1)


class _ReLUCorrect(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return minigrad.where(x > 0, g, minigrad.zeros_like(g))


def _report(fn: Callable, values: list) -> str:
    x = minigrad.tensor(values, dtype=minigrad.float64, requires_grad=True)
    try:
        gradcheck(fn, (x,))
    except RuntimeError as err:
        inputs = minigrad.tensor(values, dtype=minigrad.float64)
        return f"x = {inputs}\n" + str(err).split("\n\n")[0].strip()
    raise AssertionError("the mystery Function passed gradcheck")  # pragma: no cover


def mystery_reports() -> dict:
    """The four gradcheck reports of exercise 5.1, as PyTorch prints them (letter -> text)."""
    return {
        "A": _report(_CumsumTransposed.apply, [0.5, -1.0, 2.0]),
        "B": _report(_SoftmaxDiagonal.apply, [0.2, -0.4, 0.9]),
        "C": _report(_LeakyWrongSlope.apply, [1.5, -0.5, 0.8, -2.0]),
        "D": _report(_ReLUCorrect.apply, [1.2, 0.0, -0.7]),
    }


_DIAGNOSES = {
    1: "backward is correct: a test input sits on a kink",
    2: "backward is correct: the test ran in float32",
    3: "backward treats the function as elementwise",
    4: "backward multiplies by the Jacobian instead of its transpose",
    5: "backward has the wrong sign",
    6: "backward uses the wrong slope on one side of a kink",
}
_ANSWER = {"A": 4, "B": 3, "C": 6, "D": 1}
_HINTS = {
    "A": "Compare where the nonzero entries are: numerical fills one triangle, analytical the other. "
         "What operation turns one matrix into the other?",
    "B": "Look at the diagonal, then at the entries off the diagonal: which ones does analytical get right?",
    "C": "Look at which entries are wrong, and at the input values of those rows (row j is input j): what do "
         "the wrong rows have in common?",
    "D": "Only one entry differs, and it is 0.5 against 0. Which input value gives a central difference of "
         "0.5 for a function with slopes 0 and 1?",
}


@exercise("ch05-ex1", points=2, title="Read the reports",
          minutes=15, objective="tell from a gradcheck report whether backward or the test is wrong, and how")
def _check_reports(diagnosis: Any):
    if not isinstance(diagnosis, dict):
        raise CheckFailed(f"diagnosis must be a dict such as {{'A': 1, 'B': 2, 'C': 3, 'D': 4}}, "
                          f"got a {type(diagnosis).__name__}.")
    keys = sorted(str(k) for k in diagnosis)
    if keys != ["A", "B", "C", "D"]:
        raise CheckFailed(f"give exactly one diagnosis for each report A, B, C and D (your keys: {keys}).")
    for letter in "ABCD":
        value = diagnosis[letter]
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) not in _DIAGNOSES:
            raise CheckFailed(f"the diagnosis for {letter} must be a number from 1 to 6, got {value!r}.")
    wrong = [k for k in "ABCD" if int(diagnosis[k]) != _ANSWER[k]]
    if wrong:
        lines = [f"  {k}: not {int(diagnosis[k])} ({_DIAGNOSES[int(diagnosis[k])]}). {_HINTS[k]}" for k in wrong]
        raise CheckFailed(f"{4 - len(wrong)} of 4 right. Look again at:\n" + "\n".join(lines))
    return ("all four right: A is a transposed Jacobian, B a non-elementwise function treated as elementwise, "
            "C a wrong slope for negative inputs, and D a correct ReLU tested at its kink.")


# ------------------------------------------------------------------ ch05-ex2: float32 settings
_X32 = np.linspace(-1.9, 1.9, 9).astype(np.float32) + np.float32(0.013)


def _scaled(f: Callable, factor: float) -> Callable:
    """f with the same forward but a gradient ``factor`` times the right one."""
    return lambda t: f(t) * factor - f(t).detach() * (factor - 1)


def _float32_cases():
    correct = {
        "tanh(3x)": lambda t: minigrad.tanh(t * 3),
        "x**3": lambda t: t * t * t,
        "exp(x)": lambda t: t.exp(),
        "sin(2x) * x": lambda t: (t * 2).sin() * t,
        "softmax(x)": lambda t: minigrad.softmax(t, dim=0),
    }
    broken = {
        "tanh(3x) with a gradient 5% too large": _scaled(lambda t: minigrad.tanh(t * 3), 1.05),
        "x**3 with a gradient 5% too small": _scaled(lambda t: t * t * t, 0.95),
        "exp(x) with the sign of its gradient flipped": _scaled(lambda t: t.exp(), -1.0),
        "sin(2x) * x with a gradient 10% too large": _scaled(lambda t: (t * 2).sin() * t, 1.10),
    }
    return correct, broken


def _run32(fn, settings) -> tuple[bool, str]:
    x = minigrad.from_numpy(_X32.copy()).requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return gradcheck(fn, (x,), **settings), ""
        except RuntimeError as err:  # e.g. "not reentrant" cannot happen here; keep the message
            return False, str(err).splitlines()[0]


@exercise("ch05-ex2", points=2, title="gradcheck for a float32-only Function",
          minutes=15, objective="choose gradcheck's eps and tolerances for a float32-only Function")
def _check_float32(settings: Any):
    if not isinstance(settings, dict):
        raise CheckFailed(f"FLOAT32_SETTINGS must be a dict like dict(eps=..., atol=..., rtol=...), "
                          f"got a {type(settings).__name__}.")
    if sorted(settings) != ["atol", "eps", "rtol"]:
        raise CheckFailed(f"give exactly the keys eps, atol and rtol (you gave {sorted(settings)}).")
    try:
        eps, atol, rtol = (float(settings[k]) for k in ("eps", "atol", "rtol"))
    except (TypeError, ValueError):
        raise CheckFailed("eps, atol and rtol must be numbers.") from None
    if not (eps > 0 and atol >= 0 and rtol >= 0) or not all(np.isfinite([eps, atol, rtol])):
        raise CheckFailed("eps must be positive, atol and rtol non-negative and finite.")
    if eps > 0.1:
        raise CheckFailed(f"eps = {eps:g} is far too large a step: the truncation error (and a function's "
                          "kinks or curvature) would dominate. Look at the float32 curve again.")
    settings = dict(eps=eps, atol=atol, rtol=rtol, raise_exception=False)
    correct, broken = _float32_cases()
    for name, fn in correct.items():
        ok, _ = _run32(fn, settings)
        if not ok:
            why = ("eps is so small that float32 rounding swamps the finite difference (section 1: the error "
                   "grows like u/eps)" if eps < 1e-4 else
                   "your tolerances are tighter than float32's finite-difference error (about 1e-4, relative, "
                   "at best)")
            raise CheckFailed(f"with your settings, gradcheck FAILS the correct {name} in float32: {why}.")
    for name, fn in broken.items():
        ok, _ = _run32(fn, settings)
        if ok:
            raise CheckFailed(f"with your settings, gradcheck PASSES a broken Function, {name}: the tolerances "
                              "are so loose that they hide real bugs. A 5% error must fail.")
    return (f"eps={eps:g}, atol={atol:g}, rtol={rtol:g}: all {len(correct)} correct float32 Functions pass and "
            f"all {len(broken)} broken ones (5% and 10% errors, a sign error) fail.")


# ------------------------------------------------------------------ ch05-ex3: my_gradcheck
class _SquareFactor(Function):
    """x**2 with a backward off by a factor 3/2 (3x instead of 2x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.pow(2)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 3 * x


def _off_by(f: Callable, relative: float) -> Callable:
    return _scaled(f, 1 + relative)


def _my_gradcheck_cases():
    A = minigrad.tensor([[1.0, -2.0, 0.5], [0.0, 1.0, 1.0], [2.0, 0.0, -1.0], [0.3, 0.7, -0.4]],
                        dtype=minigrad.float64)
    return [
        # (name, fn, shape of x, keyword arguments for both checks)
        ("tanh (elementwise, shape (5,))", minigrad.tanh, (5,), {}),
        ("the square with a wrong factor", _SquareFactor.apply, (4,), {}),
        ("softmax over rows of a (2, 3) matrix", lambda t: minigrad.softmax(t, dim=1), (2, 3), {}),
        ("softmax with only the diagonal of its Jacobian in backward", _SoftmaxDiagonal.apply, (4,), {}),
        ("A @ x, a (4, 3) matrix times x of shape (3,)", lambda t: A @ t, (3,), {}),
        ("x @ A.T (rows of x times A.T): output shape (2, 4)", lambda t: t @ A.T, (2, 3), {}),
        ("a cumulative sum with a transposed backward", _CumsumTransposed.apply, (4,), {}),
        ("the sum of squares (a scalar output)", lambda t: (t * t).sum(), (2, 2), {}),
        ("exp with a gradient 0.05% too large (within rtol)", _off_by(minigrad.exp, 5e-4), (4,), {}),
        ("exp with a gradient 0.5% too large (beyond rtol)", _off_by(minigrad.exp, 5e-3), (4,), {}),
        ("exp(3x) with eps=1e-3 (central differences are accurate enough, forward ones are not)",
         lambda t: (t * 3).exp(), (3,), {"eps": 1e-3}),
        ("a gradient off by 4e-6 in absolute terms, near zero (within atol)",
         lambda t: t * 1e-3 + (t * 4e-6 - (t * 4e-6).detach()), (3,), {}),
        ("x * 1e-3 with a gradient off by 2e-5 (beyond atol)",
         lambda t: t * 1e-3 + (t * 2e-5 - (t * 2e-5).detach()), (3,), {}),
        ("x.sum() * 0 + x[0] (a Jacobian that is mostly zero)", lambda t: t.sum() * 0 + t[0], (3,), {}),
    ]


@exercise("ch05-ex3", points=3, title="Your own gradcheck",
          minutes=30, objective="build gradcheck: numerical and analytical Jacobians, and its acceptance rule")
def _check_my_gradcheck(my_gradcheck: Any):
    if not callable(my_gradcheck):
        raise CheckFailed(f"my_gradcheck must be a function, got a {type(my_gradcheck).__name__}.")
    rng = np.random.default_rng(check_seed(5))
    agreed = 0
    for name, fn, shape, kw in _my_gradcheck_cases():
        data = rng.uniform(-1.5, 1.5, size=shape)
        x = minigrad.tensor(data, dtype=minigrad.float64, requires_grad=True)
        before = data.copy()
        got = my_gradcheck(fn, x, **kw)
        if not isinstance(got, (bool, np.bool_)):
            raise CheckFailed(f"my_gradcheck must return True or False, it returned {got!r} "
                              f"(a {type(got).__name__}) for {name}.")
        if not np.array_equal(x.detach().numpy(), before):
            raise CheckFailed(f"my_gradcheck changed the values of x (for {name}): perturb a copy, or undo "
                              "every nudge.")
        if not x.requires_grad or x.grad is not None:
            raise CheckFailed(f"x.grad is no longer None after my_gradcheck (for {name}): use "
                              "torch.autograd.grad, which returns the gradients instead of storing them.")
        ref_x = minigrad.tensor(data, dtype=minigrad.float64, requires_grad=True)
        want = gradcheck(fn, (ref_x,), raise_exception=False, **kw)
        if bool(got) != want:
            raise CheckFailed(f"for {name}, gradcheck says {want} but my_gradcheck says {bool(got)}."
                              + (" Are you using central differences, (f(x+eps) - f(x-eps)) / (2 eps)?"
                                 if "eps=1e-3" in name else "")
                              + (" Check the acceptance rule: |a - n| <= atol + rtol * |n|."
                                 if "within" in name or "beyond" in name else "")
                              + (" Are you comparing all the entries, with rows and columns in the right "
                                 "places?" if "transposed" in name or "diagonal" in name else ""))
        agreed += 1
    return (f"my_gradcheck agrees with gradcheck on all {agreed} cases (vector and matrix shapes, scalar "
            "outputs, transposed and diagonal-only bugs, the edges of atol and rtol), leaves x unchanged "
            "and x.grad None.")
