"""Forward-mode AD: dual_level / make_dual / unpack_dual, custom Functions' jvp and save_for_forward,
PyTorch's error texts (first lines, compared on PyTorch where installed), gradcheck(check_forward_ad=True),
forward-over-reverse (Hessian-vector products), minigrad.func.jvp / jacfwd.

Tests marked ``@LIBS`` run on minigrad and, when installed, on PyTorch with the same code: a sentence
about PyTorch's behaviour is checked on PyTorch itself. The op-by-op jvps are in test_forward_ad_ops.py.
"""
from __future__ import annotations

import importlib

import numpy as np
import pytest
from _engines import LIBS

import minigrad
from minigrad.autograd import GradcheckError, gradcheck

fwAD_mg = minigrad.autograd.forward_ad


def fw(T):
    return importlib.import_module(T.__name__ + ".autograd.forward_ad")


def first_line(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - whatever is raised is compared
        return type(e).__name__, str(e).split("\n", 1)[0]
    return None, "no error"


def both(source_fn):
    """(minigrad's, torch's) first line of the error ``source_fn(T)`` raises."""
    torch = pytest.importorskip("torch")
    return first_line(lambda: source_fn(minigrad)), first_line(lambda: source_fn(torch))


# --- the API ----------------------------------------------------------------------------------------------------
@LIBS
def test_make_dual_and_unpack_dual(T):
    fwAD = fw(T)
    p = T.tensor([1.0, 2.0, 3.0], dtype=T.float64)
    t = T.tensor([0.5, -1.0, 2.0], dtype=T.float64)
    with fwAD.dual_level() as level:
        assert level == 0
        x = fwAD.make_dual(p, t)
        primal, tangent = fwAD.unpack_dual(x)
        assert tangent is t  # the tangent itself, not a copy
        assert type(fwAD.unpack_dual(x)).__name__ == "UnpackedDualTensor"
        assert fwAD.unpack_dual(x).tangent is fwAD.unpack_dual(x)[1]
        np.testing.assert_array_equal(primal.numpy(), p.numpy())
        y = x * x + 1
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), 2 * p.numpy() * t.numpy())
        assert fwAD.unpack_dual(p).tangent is None  # the primal given to make_dual keeps no tangent
        assert fwAD.unpack_dual(x.detach()).tangent is None  # detach drops the tangent
        assert fwAD.unpack_dual(x.clone()).tangent is not None
        assert fwAD.unpack_dual(x > 0).tangent is None  # integer / bool results carry none
    assert fwAD.unpack_dual(x).tangent is None  # the level is gone: so are its tangents
    assert fwAD.unpack_dual(y).tangent is None


@LIBS
def test_levels_enter_and_exit(T):
    fwAD = fw(T)
    level = fwAD.enter_dual_level()
    try:
        assert level == 0
        x = fwAD.make_dual(T.ones(2), T.ones(2))
        assert fwAD.unpack_dual(x.exp()).tangent is not None
    finally:
        fwAD.exit_dual_level(level=level)
    assert fwAD.unpack_dual(x).tangent is None
    assert fwAD.enter_dual_level() == 0  # a new level after the old one closed
    fwAD.exit_dual_level()


@LIBS
def test_gradients_reach_the_primal_through_make_dual(T):
    fwAD = fw(T)
    p = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
    with fwAD.dual_level():
        x = fwAD.make_dual(p, T.ones(2, dtype=T.float64))
        (x * x).sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), [2.0, 4.0])


@LIBS
def test_tangents_propagate_without_grad_mode(T):
    fwAD = fw(T)
    with fwAD.dual_level(), T.no_grad():
        x = fwAD.make_dual(T.tensor([0.3, 0.7]), T.tensor([1.0, 2.0]))
        tangent = fwAD.unpack_dual(x.sin()).tangent
    np.testing.assert_allclose(tangent.numpy(), np.cos([0.3, 0.7]) * [1.0, 2.0], rtol=1e-6)


@LIBS
def test_inplace_ops_and_setitem_carry_tangents(T):
    fwAD = fw(T)
    with fwAD.dual_level():
        a = T.ones(3)
        a.mul_(fwAD.make_dual(T.ones(3) * 2, T.ones(3)))
        np.testing.assert_array_equal(fwAD.unpack_dual(a).tangent.numpy(), [1.0, 1.0, 1.0])
        v = T.ones(4)
        v[1:3] = fwAD.make_dual(T.ones(2), T.ones(2) * 5)
        np.testing.assert_array_equal(fwAD.unpack_dual(v).tangent.numpy(), [0.0, 5.0, 5.0, 0.0])
        b = T.zeros(2, 3)
        b[1].add_(fwAD.make_dual(T.ones(3), T.arange(3.0)))  # through a view: the base's tangent changes
        np.testing.assert_array_equal(fwAD.unpack_dual(b).tangent.numpy(), [[0, 0, 0], [0, 1, 2]])
        x = fwAD.make_dual(T.ones(3), T.ones(3))
        y = x + 1
        y.mul_(3)
        np.testing.assert_array_equal(fwAD.unpack_dual(x).tangent.numpy(), [1.0, 1.0, 1.0])  # x's is untouched
        np.testing.assert_array_equal(fwAD.unpack_dual(y).tangent.numpy(), [3.0, 3.0, 3.0])


# --- errors: PyTorch's first line ------------------------------------------------------------------------------
ERRORS = {
    "make_dual outside a level": lambda T: fw(T).make_dual(T.ones(3), T.ones(3)),
    "tangent of another size": lambda T: _in_level(T, lambda: fw(T).make_dual(T.ones(3), T.ones(2))),
    "integer tangent": lambda T: _in_level(T, lambda: fw(T).make_dual(T.ones(3), T.ones(3, dtype=T.int64))),
    "integer primal": lambda T: _in_level(T, lambda: fw(T).make_dual(T.ones(3, dtype=T.int64), T.ones(3))),
    "dual of a dual": lambda T: _in_level(T, lambda: fw(T).make_dual(fw(T).make_dual(T.ones(3), T.ones(3)),
                                                                        T.ones(3))),
    "tangent with a tangent": lambda T: _in_level(T, lambda: fw(T).make_dual(T.ones(3), fw(T).make_dual(
        T.ones(3), T.ones(3)))),
    "nested level": lambda T: _in_level(T, lambda: fw(T).enter_dual_level()),
    "exit without a level": lambda T: fw(T).exit_dual_level(),
    "exit another level": lambda T: _in_level(T, lambda: fw(T).exit_dual_level(level=3)),
    "unpack a number": lambda T: _in_level(T, lambda: fw(T).unpack_dual(5)),
    "make_dual at another level": lambda T: _in_level(T, lambda: fw(T).make_dual(T.ones(2), T.ones(2), level=3)),
}


def _in_level(T, fn):
    with fw(T).dual_level():
        return fn()


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    mine, theirs = both(ERRORS[name])
    assert theirs[0] is not None
    assert mine == theirs


def test_errors_say_what_to_do():
    with pytest.raises(RuntimeError) as e:
        fwAD_mg.make_dual(minigrad.ones(3), minigrad.ones(3))
    assert "dual_level()" in str(e.value).split("\n", 1)[1]
    with fwAD_mg.dual_level(), pytest.raises(RuntimeError) as e:
        fwAD_mg.make_dual(minigrad.ones(3), minigrad.ones(2))
    assert "primal's shape" in str(e.value)
    assert not fwAD_mg._ACTIVE  # the failed level was closed by the with block


# --- custom Functions -------------------------------------------------------------------------------------------
def _mul_k(T):
    class MulK(T.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.seen_tangent = fw(T).unpack_dual(x).tangent  # forward runs on primals only
            ctx.save_for_forward(x, y)
            ctx.k = k
            return x * y * k

        @staticmethod
        def backward(ctx, g):
            raise AssertionError("not called")

        @staticmethod
        def jvp(ctx, tx, ty, tk):
            x, y = ctx.saved_tensors
            ctx.got = (tx, ty, tk)
            return (tx * y + x * ty) * ctx.k

    return MulK


@LIBS
def test_custom_jvp_and_save_for_forward(T):
    fwAD = fw(T)
    MulK = _mul_k(T)
    with fwAD.dual_level():
        x = fwAD.make_dual(T.tensor([1.0, 2.0]), T.tensor([1.0, -1.0]))
        y = T.tensor([3.0, 4.0])
        out = MulK.apply(x, y, 2.0)
        ctx = out.grad_fn if out.grad_fn is not None else None
        np.testing.assert_allclose(fwAD.unpack_dual(out).tangent.numpy(), [6.0, -8.0])
        np.testing.assert_allclose(fwAD.unpack_dual(out).primal.numpy(), [6.0, 16.0])
    assert ctx is None  # nothing required grad: no node


def test_custom_jvp_receives_zeros_for_tensors_without_tangent_and_none_for_numbers():
    MulK = _mul_k(minigrad)
    seen = {}

    class Spy(MulK):
        @staticmethod
        def jvp(ctx, tx, ty, tk):
            seen["args"] = (tx, ty, tk)
            seen["forward_tangent"] = ctx.seen_tangent
            return MulK.jvp(ctx, tx, ty, tk)

    with fwAD_mg.dual_level():
        x = fwAD_mg.make_dual(minigrad.tensor([1.0, 2.0]), minigrad.tensor([1.0, -1.0]))
        Spy.apply(x, minigrad.tensor([3.0, 4.0]), 2.0)
    tx, ty, tk = seen["args"]
    np.testing.assert_array_equal(ty.numpy(), [0.0, 0.0])
    assert tk is None
    assert seen["forward_tangent"] is None


@LIBS
def test_setup_context_style_function(T):
    fwAD = fw(T)

    class Cube(T.autograd.Function):
        @staticmethod
        def forward(x):
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_forward(inputs[0])
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 3 * x * x * t

    p = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
    with fwAD.dual_level():
        x = fwAD.make_dual(p, T.tensor([1.0, 0.5], dtype=T.float64))
        out = Cube.apply(x)
        np.testing.assert_allclose(fwAD.unpack_dual(out).tangent.detach().numpy(), [3.0, 6.0])
        out.sum().backward()  # the same node serves backward, with save_for_backward's tensors
    np.testing.assert_allclose(p.grad.numpy(), [3.0, 12.0])


def _dirty_and_nondiff(T):
    class Dirty(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def jvp(ctx, t):
            t.mul_(2)  # PyTorch's rule: the tangent of a dirty input is updated in place and returned
            return t

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class NonDiff(T.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 3, (x > 0).long(), x.sign()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.mark_non_differentiable(output[2])

        @staticmethod
        def jvp(ctx, t):
            return t * 3, None, None

    return Dirty, NonDiff


@LIBS
def test_mark_dirty_and_non_differentiable_outputs(T):
    fwAD = fw(T)
    Dirty, NonDiff = _dirty_and_nondiff(T)
    with fwAD.dual_level():
        x = fwAD.make_dual(T.tensor([1.0, -2.0]), T.tensor([1.0, 1.0]))
        y = x.clone()
        out = Dirty.apply(y)
        assert out is y
        np.testing.assert_array_equal(fwAD.unpack_dual(out).tangent.numpy(), [2.0, 2.0])
        np.testing.assert_array_equal(fwAD.unpack_dual(x).tangent.numpy(), [1.0, 1.0])  # clone's tangent is its own
        a, b, c = NonDiff.apply(x)
        np.testing.assert_array_equal(fwAD.unpack_dual(a).tangent.numpy(), [3.0, 3.0])
        assert fwAD.unpack_dual(b).tangent is None and fwAD.unpack_dual(c).tangent is None


def _jvp_misuse(T, which):
    fwAD = fw(T)

    class TooMany(T.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def jvp(ctx, t):
            return t * 3, t

    class ToNonDiff(T.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 3, x.sign()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.mark_non_differentiable(output[1])

        @staticmethod
        def jvp(ctx, t):
            return t * 3, t

    class NoJvp(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    cls = {"too many": TooMany, "non-differentiable": ToNonDiff, "no jvp": NoJvp}[which]
    with fwAD.dual_level():
        cls.apply(fwAD.make_dual(T.ones(2), T.ones(2)))


@pytest.mark.parametrize("which", ["too many", "non-differentiable", "no jvp"])
def test_custom_jvp_errors_match_torch(which):
    mine, theirs = both(lambda T: _jvp_misuse(T, which))
    assert theirs[0] is not None
    assert mine == theirs


@LIBS
def test_function_without_jvp_is_fine_when_no_input_has_a_tangent(T):
    fwAD = fw(T)

    class NoJvp(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with fwAD.dual_level():
        out = NoJvp.apply(T.ones(2))
        assert fwAD.unpack_dual(out).tangent is None


def test_save_for_forward_takes_only_tensors():
    torch = pytest.importorskip("torch")

    def run(T):
        class Bad(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_forward(x, 3)
                return x

        Bad.apply(T.ones(2))

    assert first_line(lambda: run(minigrad)) == first_line(lambda: run(torch))


# --- gradcheck with forward AD ----------------------------------------------------------------------------------
class _Square(minigrad.autograd.Function):
    @staticmethod
    def forward(x):
        return x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(inputs[0])
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return 2 * x * t


class _WrongJvp(_Square):
    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return 3 * x * t  # wrong: the backward is right, only forward mode can see it


def _x():
    return minigrad.tensor([0.5, -1.0, 2.0], dtype=minigrad.float64, requires_grad=True)


def test_gradcheck_forward_ad_passes_a_right_jvp_and_catches_a_wrong_one():
    assert gradcheck(_Square.apply, (_x(),), check_forward_ad=True)
    assert gradcheck(_WrongJvp.apply, (_x(),))  # backward alone cannot see the mistake
    with pytest.raises(GradcheckError) as e:
        gradcheck(_WrongJvp.apply, (_x(),), check_forward_ad=True, check_backward_ad=False)
    assert str(e.value).startswith("Jacobian computed with forward mode mismatch for output 0 with respect to "
                                   "input 0,\nnumerical:")
    assert not gradcheck(_WrongJvp.apply, (_x(),), check_forward_ad=True, raise_exception=False)


def test_gradcheck_forward_ad_wording_matches_torch():
    torch = pytest.importorskip("torch")

    def wrong(T):
        class W(T.autograd.Function):
            @staticmethod
            def forward(x):
                return x * x

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_forward(inputs[0])

            @staticmethod
            def backward(ctx, g):
                raise AssertionError("check_backward_ad=False: not called")

            @staticmethod
            def jvp(ctx, t):
                (x,) = ctx.saved_tensors
                return 3 * x * t

        x = T.tensor([0.5, -1.0], dtype=T.float64, requires_grad=True)
        T.autograd.gradcheck(W.apply, (x,), check_forward_ad=True, check_backward_ad=False)

    mine, theirs = first_line(lambda: wrong(minigrad)), first_line(lambda: wrong(torch))
    assert mine[1] == theirs[1]
    assert theirs[0] == "GradcheckError" and mine[0] == "GradcheckError"


def test_gradcheck_needs_one_mode():
    mine, theirs = both(lambda T: T.autograd.gradcheck(lambda x: x * 2, (T.ones(2, dtype=T.float64,
                                                                               requires_grad=True),),
                                                       check_forward_ad=False, check_backward_ad=False))
    assert mine == theirs


# --- forward-over-reverse ---------------------------------------------------------------------------------------
def _f(T, x):
    return (x.sin() * x.exp()).sum() + (x @ x) ** 2


@LIBS
def test_forward_over_reverse_hvp_equals_double_backward(T):
    fwAD = fw(T)
    rng = np.random.default_rng(0)
    p = T.tensor(rng.standard_normal(4), requires_grad=True)
    v = T.tensor(rng.standard_normal(4))
    # reverse-over-reverse: the gradient of <grad f, v>
    (g,) = T.autograd.grad(_f(T, p), p, create_graph=True)
    (hv_rr,) = T.autograd.grad((g * v).sum(), p)
    # forward-over-reverse: the tangent of grad f along v
    with fwAD.dual_level():
        x = fwAD.make_dual(p, v)
        (g,) = T.autograd.grad(_f(T, x), x, create_graph=True)
        hv_fr = fwAD.unpack_dual(g).tangent
    np.testing.assert_allclose(hv_fr.detach().numpy(), hv_rr.numpy(), rtol=1e-10)


def test_reverse_over_forward_gives_the_same_hvp():
    rng = np.random.default_rng(1)
    p = minigrad.tensor(rng.standard_normal(4), requires_grad=True)
    v = minigrad.tensor(rng.standard_normal(4))
    (g,) = minigrad.autograd.grad(_f(minigrad, p), p, create_graph=True)
    (hv_rr,) = minigrad.autograd.grad((g * v).sum(), p)
    with fwAD_mg.dual_level():
        x = fwAD_mg.make_dual(p, v)
        directional = fwAD_mg.unpack_dual(_f(minigrad, x)).tangent  # <grad f, v>, a function of p
    (hv_rf,) = minigrad.autograd.grad(directional, p)
    np.testing.assert_allclose(hv_rf.numpy(), hv_rr.numpy(), rtol=1e-10)


# --- minigrad.func.jvp / jacfwd ---------------------------------------------------------------------------------
def _func(T):
    return importlib.import_module(T.__name__ + ".func")


@LIBS
def test_func_jvp_and_jacfwd(T):
    F = _func(T)
    x = T.tensor([0.1, 0.5, -0.3], dtype=T.float64)
    t = T.tensor([1.0, 2.0, 3.0], dtype=T.float64)
    value, tangent = F.jvp(T.sin, (x,), (t,))
    np.testing.assert_allclose(value.numpy(), np.sin(x.numpy()))
    np.testing.assert_allclose(tangent.numpy(), np.cos(x.numpy()) * t.numpy())
    assert value.grad_fn is None and tangent.grad_fn is None
    out, tan, aux = F.jvp(lambda x: (x.exp(), {"a": x * 2}), (x,), (t,), has_aux=True)
    np.testing.assert_allclose(aux["a"].numpy(), 2 * x.numpy())
    ja, jb = F.jacfwd(lambda a, b: a * b.sum(), argnums=(0, 1))(x, t)
    np.testing.assert_allclose(ja.numpy(), np.eye(3) * t.numpy().sum())
    np.testing.assert_allclose(jb.numpy(), np.outer(x.numpy(), np.ones(3)))
    jd = F.jacfwd(lambda x: {"s": x.sin(), "h": x[:2]})(x)
    assert tuple(jd["h"].shape) == (2, 3)
    np.testing.assert_allclose(F.jacfwd(lambda x: x.sum())(x).numpy(), np.ones(3))


@LIBS
def test_hessian_by_jacfwd_of_jacrev(T):
    F = _func(T)
    x = T.tensor([0.1, 0.5, -0.3], dtype=T.float64)

    def f(x):
        return (x.sin() * x.exp()).sum()

    fr = F.jacfwd(F.jacrev(f))(x)
    rr = F.jacrev(F.jacrev(f))(x)
    np.testing.assert_allclose(fr.detach().numpy(), rr.detach().numpy(), rtol=1e-12)
    v = T.tensor([1.0, 2.0, 3.0], dtype=T.float64)
    np.testing.assert_allclose(F.jvp(F.grad(f), (x,), (v,))[1].detach().numpy(), rr.numpy() @ v.numpy(), rtol=1e-12)


JVP_ERRORS = {
    "primals not a tuple": lambda T: _func(T).jvp(T.sin, T.ones(3), (T.ones(3),)),
    "tangents of another structure": lambda T: _func(T).jvp(T.sin, (T.ones(3),), (T.ones(3), T.ones(3))),
    "tangent of another size": lambda T: _func(T).jvp(T.sin, (T.ones(3),), (T.ones(2),)),
    "no primals": lambda T: _func(T).jvp(T.sin, (), ()),
    "an int output": lambda T: _func(T).jvp(lambda x: 3, (T.ones(3),), (T.ones(3),)),
    "has_aux without a pair": lambda T: _func(T).jvp(T.sin, (T.ones(3),), (T.ones(3),), has_aux=True),
    "a float primal": lambda T: _func(T).jvp(T.sin, (1.0,), (1.0,)),
    "argnum out of range": lambda T: _func(T).jacfwd(T.sin, argnums=3)(T.ones(3)),
}


@pytest.mark.parametrize("name", list(JVP_ERRORS))
def test_func_errors_match_torch(name):
    mine, theirs = both(JVP_ERRORS[name])
    assert theirs[0] is not None
    assert mine == theirs


def test_a_dual_tensor_prints_its_tangent_as_torch():
    torch = pytest.importorskip("torch")

    def show(T):
        fwAD = fw(T)
        p = T.tensor([[1.5, 0.25, -1.0], [2.0, -0.5, 0.125]], requires_grad=True)
        with fwAD.dual_level():
            a = repr(fwAD.make_dual(p, T.ones(2, 3)))
            b = repr(fwAD.make_dual(T.ones(2), T.ones(2, dtype=T.float64)))
        return a, b, repr(p)

    assert show(minigrad) == show(torch)


def test_jacfwd_batches_its_columns_with_vmap():
    """One traced call per input (vmap over the basis tangents), plus one for the value: not one per element."""
    calls = []

    def f(x):
        calls.append(1)
        return x.sin() * x.sum()

    x = minigrad.tensor(np.linspace(-1, 1, 6))
    jac = minigrad.func.jacfwd(f)(x)
    assert len(calls) == 2
    xs = x.numpy()
    expected = np.diag(np.cos(xs) * xs.sum()) + np.sin(xs)[:, None]
    np.testing.assert_allclose(jac.numpy(), expected, rtol=1e-12)


def test_gradcheck_batched_forward_grad():
    """check_batched_forward_grad runs the jvp under vmap; a Function whose jvp breaks under a batch fails it."""
    class Batchable(_Square):
        generate_vmap_rule = True

    assert gradcheck(Batchable.apply, (_x(),), check_forward_ad=True, check_backward_ad=False,
                     check_batched_forward_grad=True)
    assert gradcheck(lambda x: (x.sin() * x).cumsum(0), (_x(),), check_forward_ad=True, check_batched_forward_grad=True)

    class Leaky(Batchable):  # its jvp reads a Python number out of the tangent: vmap cannot batch that
        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 2 * x * t + float(t.sum()) * 0

    with pytest.raises(GradcheckError, match="^While computing batched gradients, got: "):
        gradcheck(Leaky.apply, (_x(),), check_forward_ad=True, check_backward_ad=False,
                  check_batched_forward_grad=True)


def test_reverse_over_forward_through_an_inplace_op():
    p = minigrad.tensor([1.0, 2.0, 3.0], dtype=minigrad.float64, requires_grad=True)
    v = minigrad.tensor([1.0, 1.0, 2.0], dtype=minigrad.float64)
    with fwAD_mg.dual_level():
        x = fwAD_mg.make_dual(p, v)
        y = x * 1
        y.mul_(x)  # y = x^2, in place: its tangent 2 x v must stay a function of p
        directional = fwAD_mg.unpack_dual(y).tangent.sum()
    (g,) = minigrad.autograd.grad(directional, p)
    np.testing.assert_allclose(g.numpy(), 2 * v.numpy())


@LIBS
def test_nested_forward_transforms(T):
    """jacfwd(jacfwd(f)) and jvp of jvp (minigrad: the inner jvp by reverse mode inside the outer dual level)."""
    F = _func(T)
    x = T.tensor([0.1, 0.5, -0.3], dtype=T.float64)
    v = T.tensor([1.0, 2.0, 3.0], dtype=T.float64)

    def f(x):
        return (x.sin() * x.exp()).sum() * x

    np.testing.assert_allclose(F.jacfwd(F.jacfwd(f))(x).detach().numpy(),
                               F.jacrev(F.jacrev(f))(x).detach().numpy(), rtol=1e-12, atol=1e-14)
    inner = lambda y: F.jvp(lambda z: (z ** 3).sum(), (y,), (v,))[1]  # noqa: E731  (3 sum(z^2 v))
    np.testing.assert_allclose(F.jvp(inner, (x,), (v,))[1].detach().numpy(), 6 * (x * v * v).sum().numpy())
