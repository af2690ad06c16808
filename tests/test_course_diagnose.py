"""minigrad.course: check() / @exercise and the diagnosis of buggy custom Functions."""
import numpy as np
import pytest

import minigrad
from minigrad.autograd import Function
from minigrad.course import CheckFailed, CheckResult, check, exercise, registry, run_check
from minigrad.course.diagnose import diagnose_function, make_inputs


def _leaky(backward):
    """A LeakyReLU whose backward is ``backward(ctx, x, grad_output)``."""
    class LeakyReLU(Function):
        @staticmethod
        def forward(ctx, x, negative_slope):
            ctx.save_for_backward(x)
            ctx.slope = negative_slope
            return minigrad.where(x > 0, x, x * negative_slope)

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return backward(ctx, x, grad_output)
    return LeakyReLU


def _slope(ctx, x, above=True):
    one, s = minigrad.ones_like(x), minigrad.full_like(x, ctx.slope)
    return minigrad.where(x > 0, one, s) if above else minigrad.where(x < 0, one, s)


def _ref(x, s):
    return minigrad.where(x > 0, x, x * s)


def _diag(fn):
    return diagnose_function(fn, _ref, [(3, 4)], args=(0.1,), arg_names=["negative_slope"], kinks=[0.0])


BUGS = {
    "ok": (lambda c, x, g: (g * _slope(c, x), None), "ok", "is correct"),
    "sign": (lambda c, x, g: (-g * _slope(c, x), None), "sign", "wrong sign"),
    "grad-output": (lambda c, x, g: (_slope(c, x), None), "grad-output", "ignores grad_output"),
    "factor": (lambda c, x, g: (g * _slope(c, x) * 3, None), "factor", "3 times too large"),
    "mask": (lambda c, x, g: (g * _slope(c, x, above=False), None), "mask", "wrong side of the kink"),
    "count": (lambda c, x, g: g * _slope(c, x), "count", "wrong number of returned gradients"),
    "raise": (lambda c, x, g: (g * c.no_such_attribute, None), "backward-raised", "AttributeError"),
    "shape": (lambda c, x, g: ((g * _slope(c, x)).sum(), None), "shape", "wrong shape"),
    "one-side": (lambda c, x, g: (g * (x > 0).double(), None), "one-side", "wrong everywhere x < 0"),
    "none": (lambda c, x, g: (None, None), "none", "returned None for x"),
}


@pytest.mark.parametrize("name", sorted(BUGS))
def test_each_bug_is_named(name):
    backward, kind, words = BUGS[name]
    res = _diag(_leaky(backward))
    assert isinstance(res, CheckResult)
    assert res.passed == (kind == "ok")
    assert res.details["kind"] == kind, res.message
    assert words in res.message


BUGS["non-tensor"] = (lambda c, x, g: (g * _slope(c, x), g.sum()), "non-tensor", "not a tensor")


def test_convention_at_the_kink_is_checked():
    def above_or_equal(c, x, g):  # slope 1 at exactly 0: right everywhere random inputs land
        return g * minigrad.where(x >= 0, minigrad.ones_like(x), minigrad.full_like(x, c.slope)), None

    kw = dict(args=(0.1,), arg_names=["negative_slope"], kinks=[0.0])
    res = diagnose_function(_leaky(above_or_equal), _ref, [(3, 4)], **kw)
    assert res.passed  # without at_kinks nothing looks at x = 0
    res = diagnose_function(_leaky(above_or_equal), _ref, [(3, 4)], at_kinks={0.0: (0.1, "the slope")}, **kw)
    assert not res.passed and res.details["kind"] == "kink"
    assert "at exactly x = 0 its gradient is 1 times grad_output; the convention there is 0.1 (the slope)" \
        in " ".join(res.message.split())
    ok = diagnose_function(_leaky(BUGS["ok"][0]), _ref, [(3, 4)], at_kinks={0.0: 0.1}, **kw)
    assert ok.passed and "0.1 at x = 0" in ok.message


def _two_inputs(backward, forward=lambda ctx, a, b: a * b):
    class Mul2(Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return forward(ctx, a, b)

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return backward(a, b, g)
    return Mul2


def test_swapped_gradients_are_named():
    res = diagnose_function(_two_inputs(lambda a, b, g: (g * a, g * b)), lambda a, b: a * b, [(3,), (3,)],
                            input_names=["a", "b"])
    assert res.details["kind"] == "swapped" and "The gradient for a is the one that belongs to b" in res.message


def test_forward_that_changes_its_input_is_named():
    def in_place(ctx, a, b):
        return a.mul_(b)

    res = diagnose_function(_two_inputs(lambda a, b, g: (g * b, g * a), forward=in_place),
                            lambda a, b: a * b, [(3,), (3,)], input_names=["a", "b"])
    assert res.details["kind"] == "in-place" and "changed its input a in place" in res.message


class _CubeSavesSquare(Function):
    @staticmethod
    def forward(ctx, x):
        x2 = x * x
        ctx.save_for_backward(x2)
        return x2 * x

    @staticmethod
    def backward(ctx, g):
        (x2,) = ctx.saved_tensors
        return g * 3 * x2


class _CubeNumpyBackward(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return minigrad.from_numpy(g.detach().numpy() * 3 * x.detach().numpy() ** 2)


def test_second_derivatives_name_a_saved_intermediate():
    cube = lambda x: x * x * x  # noqa: E731
    assert diagnose_function(_CubeSavesSquare, cube, [(3,)]).passed  # first derivatives are right
    res = diagnose_function(_CubeSavesSquare, cube, [(3,)], double_backward=True)
    assert res.details["kind"] == "saved-intermediate"
    assert "neither an input nor an output" in " ".join(res.message.split())
    res = diagnose_function(_CubeNumpyBackward, cube, [(3,)], double_backward=True)
    assert res.details["kind"] == "double-backward" and "no NumPy" in res.message


def test_mismatch_shows_entries_input_expected_got():
    res = _diag(_leaky(BUGS["sign"][0]))
    assert "where they differ" in res.message
    line = next(l for l in res.message.splitlines() if l.strip().startswith("at ["))
    assert "x=" in line and "expected" in line and "got" in line


def test_success_says_what_was_verified():
    res = _diag(_leaky(BUGS["ok"][0]))
    assert "forward: values and shape match the reference" in res.message
    assert "multiplies by grad_output" in res.message
    assert "kink" in res.message and "float64" in res.message


def test_factor_below_one_reports_factor():
    res = _diag(_leaky(lambda c, x, g: (g * _slope(c, x) * 0.5, None)))
    assert res.details["kind"] == "factor"
    assert "0.5 times" in res.message and "2 times too small" in res.message


class _Add(Function):
    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, g):
        return g, g  # bug: b was broadcast, its gradient is not reduced


class _AddFixed(_Add):
    @staticmethod
    def backward(ctx, g):
        return g, g.sum(0)


def test_missing_broadcast_reduction_names_the_dimension():
    res = diagnose_function(_Add, lambda a, b: a + b, [(3, 4), (4,)], input_names=["a", "b"])
    assert res.details["kind"] == "broadcast"
    assert "missing reduction over the broadcast dimension(s) [0]" in res.message
    assert "gradient for b" in res.message
    assert diagnose_function(_AddFixed, lambda a, b: a + b, [(3, 4), (4,)]).passed


def test_keepdim_broadcast():
    res = diagnose_function(_Add, lambda a, b: a + b, [(3, 4), (3, 1)], input_names=["a", "b"])
    assert res.details["kind"] == "broadcast" and "[1]" in res.message and "keepdim" in res.message


class _Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x  # missing factor 2


def test_numpy_reference_uses_finite_differences():
    res = diagnose_function(_Square, lambda x: np.asarray(x.detach().numpy()) ** 2, [(2, 3)])
    assert res.details["kind"] == "factor" and "2 times too small" in res.message


def test_forward_mismatch_and_forward_raise():
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            return -x * x

        @staticmethod
        def backward(ctx, g):
            return g

    res = diagnose_function(Wrong, lambda x: x * x, [(4,)])
    assert not res.passed and "forward output" in res.message and "wrong sign" in res.message

    class Boom(Function):
        @staticmethod
        def forward(ctx, x):
            raise ValueError("kaboom")

    res = diagnose_function(Boom, lambda x: x * x, [(4,)])
    assert res.details["kind"] == "forward-raised" and "kaboom" in res.message


def test_make_inputs_avoid_kinks_and_are_seeded():
    a = make_inputs([(50, 50)], seed=3, kinks=[0.0, 1.0], margin=0.2)[0]
    assert a.dtype == np.float64
    assert np.abs(a).min() >= 0.2 and np.abs(a - 1.0).min() >= 0.2
    assert np.array_equal(a, make_inputs([(50, 50)], seed=3, kinks=[0.0, 1.0], margin=0.2)[0])


# ------------------------------------------------------------------------- check / @exercise
@exercise("ch90-ex1", points=2, title="Demo exercise")
def _demo(answer, expected=3):
    if answer == "boom":
        raise ZeroDivisionError("inside the learner's code")
    if answer == "stub":
        raise NotImplementedError()
    if answer != expected:
        raise CheckFailed(f"expected {expected}, got {answer}")
    return "right."


def test_check_prints_and_returns_result(capsys):
    res = check("ch90-ex1", 3)
    out = capsys.readouterr().out
    assert out.startswith("✓ Exercise 90.1 (Demo exercise): 2/2 points")
    assert res.passed and res.points == 2 and res.max_points == 2 and "right." in res.message
    res = check("ch90-ex1", 4)
    out = capsys.readouterr().out
    assert out.startswith("✗") and "expected 3, got 4" in out
    assert not res.passed and res.points == 0 and res.max_points == 2


def test_check_keywords_errors_and_unknown_ids():
    assert run_check("ch90-ex1", 5, expected=5).passed
    r = run_check("ch90-ex1", "boom")
    assert not r.passed and "ZeroDivisionError" in r.message and "inside the learner's code" in r.message
    r = run_check("ch90-ex1", "stub")
    assert not r.passed and "NotImplementedError" in r.message and "stub" in r.message
    r = run_check("no-such-exercise", 1)
    assert not r.passed and "Unknown exercise" in r.message
    assert "ch90-ex1" in registry


def test_diagnose_result_through_check(capsys):
    @exercise("ch90-ex2", points=1, title="Leaky")
    def _(fn):
        return _diag(fn)

    assert check("ch90-ex2", _leaky(BUGS["ok"][0])).passed
    res = check("ch90-ex2", _leaky(BUGS["mask"][0]))
    assert not res.passed and "wrong side" in capsys.readouterr().out


def test_engine_does_not_import_course():
    import subprocess
    import sys
    code = ("import sys, minigrad, minigrad.autograd, minigrad.nn; "
            "assert not any(m.startswith('minigrad.course') for m in sys.modules), 'engine imported minigrad.course'")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("answer, feedback", [
    ((1.0, 6.0), "largest value of the sigmoid itself"),
    ((0.5, 0.0), "sigmoid's value at x = 0"),
    ((0.2, 0.0), "is not the largest value of sig * (1 - sig)"),
    ((0.25, 1.5), "at_x = 1.500"),
    (0.25, "Pass a pair of numbers"),
])
def test_chapter0_check_names_the_mistake(answer, feedback):
    import minigrad.course.exercises  # noqa: F401  (registers the chapters' checks)

    r = run_check("ch00-ex1", answer)
    assert not r.passed and feedback in r.message
    assert run_check("ch00-ex1", (0.25, 0.0)).passed


def test_the_verified_list_counts_what_backward_really_returned():
    """Two values returned for one argument (the second None): the ✓ line must not claim one."""
    import minigrad
    from minigrad.course.diagnose import diagnose_function

    class Twice(minigrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, None

    r = diagnose_function(Twice, lambda x: x * 2, inputs=[(3,)])
    assert r.passed, r.message
    assert "forward argument (1), each of its input's shape (and 1 extra trailing None" in r.message
