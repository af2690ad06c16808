"""torch.func's reverse-mode transforms (grad, grad_and_value, vjp, jacrev, hessian, functional_call):
values against finite differences (always) and against PyTorch (the oracle, where installed), PyTorch's
error texts (first line), and the semantics of a transform (inputs fresh inside, .grad untouched,
outer no_grad ignored, nesting, composition with ordinary autograd)."""
from __future__ import annotations

import numpy as np
import pytest

import minigrad
from tests._engines import LIBS

RNG = np.random.default_rng(0)
X = RNG.standard_normal(4).astype(np.float32)
Y = RNG.standard_normal(4).astype(np.float32)
M = RNG.standard_normal((3, 4)).astype(np.float32)


def _np(t):
    if isinstance(t, (tuple, list)):
        return type(t)(_np(v) for v in t)
    if isinstance(t, dict):
        return {k: _np(v) for k, v in t.items()}
    return t.detach().numpy()


def _numeric_jacobian(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of f (float64 NumPy in, NumPy out) at x: shape f(x).shape + x.shape."""
    x = x.astype(np.float64)
    out = np.asarray(f(x))
    jac = np.zeros(out.shape + x.shape)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        jac[(...,) + i] = (np.asarray(f(x + d)) - np.asarray(f(x - d))) / (2 * eps)
    return jac


def _f_np(T, fn):
    return lambda a: fn(T.tensor(a, dtype=T.float64)).detach().numpy()


def _cubic(x):
    return (x.sin() * x ** 2).sum()


# --- values -----------------------------------------------------------------------------------

def test_grad_matches_finite_differences():
    x = minigrad.tensor(X.astype(np.float64))
    g = minigrad.func.grad(_cubic)(x)
    np.testing.assert_allclose(g.numpy(), _numeric_jacobian(_f_np(minigrad, _cubic), X), rtol=1e-6, atol=1e-8)


def test_jacrev_and_hessian_match_finite_differences():
    x = minigrad.tensor(X.astype(np.float64))
    fn = lambda t: (t.tanh() * t).cumsum(0)  # noqa: E731
    j = minigrad.func.jacrev(fn)(x)
    assert j.shape == (4, 4)
    np.testing.assert_allclose(j.numpy(), _numeric_jacobian(_f_np(minigrad, fn), X), rtol=1e-6, atol=1e-8)
    h = minigrad.func.hessian(_cubic)(x)
    grad_np = lambda a: minigrad.func.grad(_cubic)(minigrad.tensor(a, dtype=minigrad.float64)).numpy()  # noqa: E731
    np.testing.assert_allclose(h.numpy(), _numeric_jacobian(grad_np, X), rtol=1e-5, atol=1e-7)


def test_hessian_equals_jacrev_of_jacrev():
    x = minigrad.tensor(X.astype(np.float64))
    jj = minigrad.func.jacrev(minigrad.func.jacrev(_cubic))(x)
    np.testing.assert_allclose(minigrad.func.hessian(_cubic)(x).numpy(), jj.numpy(), rtol=1e-12, atol=1e-12)


@LIBS
def test_grad_argnums_and_pytrees(T):
    x, y = T.tensor(X), T.tensor(Y)

    def f(d, s, w):
        return (d["a"] * d["b"][0] + s * w).sum()

    d = {"a": x, "b": [y]}
    g = T.func.grad(f)(d, 2.0, y)
    assert isinstance(g, dict) and isinstance(g["b"], list)
    np.testing.assert_allclose(_np(g["a"]), Y, rtol=1e-6)
    np.testing.assert_allclose(_np(g["b"][0]), X, rtol=1e-6)
    g0, g2 = T.func.grad(f, argnums=(0, -1))(d, 2.0, y)
    np.testing.assert_allclose(_np(g2), np.full(4, 2.0), rtol=1e-6)
    assert isinstance(g0, dict)
    # an input the output does not use: zeros, not an error
    gz = T.func.grad(lambda a, b: (a * 3).sum(), argnums=1)(x, y)
    np.testing.assert_array_equal(_np(gz), np.zeros(4))
    # an output that depends on no input at all: zeros
    np.testing.assert_array_equal(_np(T.func.grad(lambda a: T.tensor(1.0))(x)), np.zeros(4))


@LIBS
def test_grad_and_value_and_has_aux(T):
    x = T.tensor(X)
    g, v = T.func.grad_and_value(lambda a: (a ** 2).sum())(x)
    np.testing.assert_allclose(_np(g), 2 * X, rtol=1e-6)
    np.testing.assert_allclose(_np(v), (X.astype(np.float32) ** 2).sum(), rtol=1e-6)
    g, aux = T.func.grad(lambda a: ((a ** 2).sum(), {"sq": a ** 2}), has_aux=True)(x)
    assert not aux["sq"].requires_grad and not g.requires_grad
    np.testing.assert_allclose(_np(aux["sq"]), X.astype(np.float32) ** 2, rtol=1e-6)
    g, (v, aux) = T.func.grad_and_value(lambda a: ((a ** 2).sum(), a.mean()), has_aux=True)(x)
    np.testing.assert_allclose(_np(aux), X.astype(np.float32).mean(), rtol=1e-6)


# --- semantics of a transform -------------------------------------------------------------------

@LIBS
def test_grad_leaves_dot_grad_alone_and_ignores_outer_no_grad(T):
    x = T.tensor(X)
    seen = {}

    def f(a):
        seen["rg"] = a.requires_grad
        seen["enabled"] = T.is_grad_enabled()
        return (a ** 3).sum()

    with T.no_grad():
        g = T.func.grad(f)(x)
    assert seen == {"rg": True, "enabled": True}
    assert not x.requires_grad and x.grad is None and not g.requires_grad
    np.testing.assert_allclose(_np(g), 3 * X.astype(np.float32) ** 2, rtol=1e-5)
    xr = T.tensor(X, requires_grad=True)
    with T.no_grad():
        assert not T.func.grad(f)(xr).requires_grad
    assert xr.grad is None


@LIBS
def test_no_grad_inside_the_function_is_respected(T):
    def f(a):
        with T.no_grad():
            c = a ** 2
        return (a - c).sum()

    np.testing.assert_allclose(_np(T.func.grad(f)(T.tensor(X))), np.ones(4))


@LIBS
def test_grad_composes_with_ordinary_autograd(T):
    xr = T.tensor(X, requires_grad=True)
    g = T.func.grad(lambda a: (a ** 3).sum())(xr)
    assert g.requires_grad
    g.sum().backward()
    np.testing.assert_allclose(xr.grad.numpy(), 6 * X.astype(np.float32), rtol=1e-5)
    # a tensor the function closes over that requires grad: the result depends on it
    w = T.tensor(Y, requires_grad=True)
    gw = T.func.grad(lambda a: (a * w).sum())(T.tensor(X))
    assert gw.requires_grad
    gw.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.ones(4))


@LIBS
def test_nested_grad(T):
    x = T.tensor(1.5, dtype=T.float64)
    f = lambda a: a.sin() * a ** 3  # noqa: E731
    d2 = T.func.grad(T.func.grad(f))(x)
    d3 = T.func.grad(T.func.grad(T.func.grad(f)))(x)
    v = 1.5
    expected2 = -np.sin(v) * v ** 3 + 6 * np.cos(v) * v ** 2 + 6 * np.sin(v) * v
    assert float(d2) == pytest.approx(expected2, rel=1e-10)
    h = 1e-5
    num3 = (float(T.func.grad(T.func.grad(f))(T.tensor(v + h, dtype=T.float64)))
            - float(T.func.grad(T.func.grad(f))(T.tensor(v - h, dtype=T.float64)))) / (2 * h)
    assert float(d3) == pytest.approx(num3, rel=1e-6)
    assert not d2.requires_grad

    # the inner transform differentiates w.r.t. its own argument only (no perturbation confusion)
    def outer(a):
        inner = T.func.grad(lambda b: (a * b).sum())(a)  # d/db (a*b) = a
        return (inner * a).sum()                          # d/da sum(a*a) = 2a

    np.testing.assert_allclose(_np(T.func.grad(outer)(T.tensor(X))), 2 * X.astype(np.float32), rtol=1e-6)


@LIBS
def test_vjp(T):
    x, y = T.tensor(X), T.tensor(Y)
    out, vjp_fn = T.func.vjp(lambda a, b: (a * b, {"s": a.sin()}), x, y)
    assert isinstance(out, tuple) and isinstance(out[1], dict) and not out[0].requires_grad
    gx, gy = vjp_fn((T.ones(4), {"s": T.full((4,), 2.0)}))
    Xf, Yf = X.astype(np.float32), Y.astype(np.float32)
    np.testing.assert_allclose(_np(gx), Yf + 2 * np.cos(Xf), rtol=1e-5)
    np.testing.assert_allclose(_np(gy), Xf, rtol=1e-6)
    again = vjp_fn((T.ones(4), {"s": T.zeros(4)}))  # callable twice: the graph is kept
    assert isinstance(again, tuple) and len(again) == 2
    np.testing.assert_allclose(_np(again[0]), Yf, rtol=1e-6)
    out, vjp_fn, aux = T.func.vjp(lambda a: (a.exp(), a.sum()), x, has_aux=True)
    np.testing.assert_allclose(_np(aux), Xf.sum(), rtol=1e-6)
    (g,) = vjp_fn(T.ones(4))
    np.testing.assert_allclose(_np(g), np.exp(Xf), rtol=1e-6)


@LIBS
def test_jacrev_structures(T):
    x, y = T.tensor(X), T.tensor(Y)
    j = T.func.jacrev(lambda a, b: {"p": a * b, "t": [a.sum()]}, argnums=(0, 1))(x, y)
    assert isinstance(j, dict) and isinstance(j["t"], list) and isinstance(j["p"], tuple)
    assert tuple(j["p"][0].shape) == (4, 4) and tuple(j["t"][0][1].shape) == (4,)
    np.testing.assert_allclose(_np(j["p"][0]), np.diag(Y.astype(np.float32)), rtol=1e-6)
    np.testing.assert_allclose(_np(j["t"][0][0]), np.ones(4))
    m = T.tensor(M)
    jm = T.func.jacrev(lambda w, v: w @ v)(m, x)
    assert tuple(jm.shape) == (3, 3, 4)
    expected = np.einsum("ij,k->ijk", np.eye(3), X)
    np.testing.assert_allclose(_np(jm), expected, rtol=1e-6)
    jd = T.func.jacrev(lambda d: d["a"] * 2)({"a": x})
    np.testing.assert_allclose(_np(jd["a"]), 2 * np.eye(4))
    jac, aux = T.func.jacrev(lambda a: (a.sin(), a.cos()), has_aux=True, chunk_size=2)(x)
    np.testing.assert_allclose(_np(jac), np.diag(np.cos(X.astype(np.float32))), rtol=1e-6)
    np.testing.assert_allclose(_np(aux), np.cos(X.astype(np.float32)), rtol=1e-6)


@LIBS
def test_hessian_of_two_arguments(T):
    x, y = T.tensor(X, dtype=T.float64), T.tensor(Y, dtype=T.float64)
    h = T.func.hessian(lambda a, b: (a ** 2 * b).sum(), argnums=(0, 1))(x, y)
    assert len(h) == 2 and len(h[0]) == 2
    np.testing.assert_allclose(_np(h[0][0]), np.diag(2 * Y), rtol=1e-12)
    np.testing.assert_allclose(_np(h[0][1]), np.diag(2 * X), rtol=1e-12)
    np.testing.assert_allclose(_np(h[1][1]), np.zeros((4, 4)))


def test_oracle_values_match_torch():
    torch = pytest.importorskip("torch")
    xs = RNG.standard_normal((2, 3))

    def f(T):
        return lambda a, b: ((a @ b.t()).tanh() * a.sum(1, keepdim=True)).sum()

    for name in ("grad", "jacrev", "hessian"):
        for argnums in (0, 1, (0, 1)):
            got = getattr(minigrad.func, name)(f(minigrad), argnums=argnums)(
                minigrad.tensor(xs, dtype=minigrad.float64), minigrad.tensor(xs[::-1].copy(), dtype=minigrad.float64))
            want = getattr(torch.func, name)(f(torch), argnums=argnums)(
                torch.tensor(xs), torch.tensor(xs[::-1].copy()))
            flat_g = [got] if not isinstance(got, tuple) else list(got)
            flat_w = [want] if not isinstance(want, tuple) else list(want)
            while any(isinstance(v, tuple) for v in flat_g):
                flat_g = [u for v in flat_g for u in (v if isinstance(v, tuple) else (v,))]
                flat_w = [u for v in flat_w for u in (v if isinstance(v, tuple) else (v,))]
            assert len(flat_g) == len(flat_w)
            for a, b in zip(flat_g, flat_w):
                assert tuple(a.shape) == tuple(b.shape), (name, argnums)
                np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


# --- custom Functions under transforms ------------------------------------------------------------

def _functions(T):
    class OldStyle(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    class NewStyle(T.autograd.Function):
        @staticmethod
        def forward(x):
            return x ** 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    return OldStyle, NewStyle


def _first_line(fn) -> str:
    try:
        fn()
    except (RuntimeError, ValueError) as e:
        return f"{type(e).__name__}: {str(e).splitlines()[0]}"
    return "no error"


@LIBS
def test_custom_function_needs_setup_context_under_transforms(T):
    old, new = _functions(T)
    x = T.tensor(X)
    expected = ("RuntimeError: In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, "
                "jacrev, ...), it must override the setup_context staticmethod. For more details, please see "
                "https://pytorch.org/docs/main/notes/extending.func.html")
    assert _first_line(lambda: T.func.grad(lambda a: old.apply(a).sum())(x)) == expected
    assert _first_line(lambda: T.func.vjp(old.apply, x)) == expected
    assert _first_line(lambda: T.func.jacrev(old.apply)(x)) == expected
    old.apply(T.tensor(X, requires_grad=True)).sum().backward()  # plain autograd: fine
    np.testing.assert_allclose(_np(T.func.grad(lambda a: new.apply(a).sum())(x)), 2 * X.astype(np.float32),
                               rtol=1e-6)
    np.testing.assert_allclose(_np(T.func.jacrev(new.apply)(x)), np.diag(2 * X.astype(np.float32)), rtol=1e-6)


# --- errors: PyTorch's first line -------------------------------------------------------------------

ERROR_CASES = {
    "not scalar": lambda T, x: T.func.grad(lambda a: a * 2)(x),
    "not a tensor": lambda T, x: T.func.grad(lambda a: 3.0)(x),
    "tuple without has_aux": lambda T, x: T.func.grad(lambda a: (a.sum(), a))(x),
    "has_aux not a pair": lambda T, x: T.func.grad(lambda a: a.sum(), has_aux=True)(x),
    "aux not tensors": lambda T, x: T.func.grad(lambda a: (a.sum(), 1), has_aux=True)(x),
    "argnum out of range": lambda T, x: T.func.grad(lambda a: a.sum(), argnums=1)(x),
    "negative argnum out of range": lambda T, x: T.func.grad(lambda a: a.sum(), argnums=-2)(x),
    "repeated argnums": lambda T, x: T.func.grad(lambda a, b: a.sum(), argnums=(0, 0))(x, x),
    "empty argnums": lambda T, x: T.func.grad(lambda a: a.sum(), argnums=())(x),
    "float argnums": lambda T, x: T.func.grad(lambda a: a.sum(), argnums=1.0)(x),
    "float in argnums": lambda T, x: T.func.grad(lambda a: a.sum(), argnums=(0, 1.0))(x),
    "non-tensor input": lambda T, x: T.func.grad(lambda a: a.sum())(3.0),
    "non-tensor in a pytree": lambda T, x: T.func.grad(lambda a: a[0].sum())([x, 2.0]),
    "vjp integer output": lambda T, x: T.func.vjp(lambda a: a.long(), x),
    "vjp number output": lambda T, x: T.func.vjp(lambda a: 3.0, x),
    "vjp None output": lambda T, x: T.func.vjp(lambda a: None, x),
    "vjp has_aux not a pair": lambda T, x: T.func.vjp(lambda a: a, x, has_aux=True),
    "cotangent structure": lambda T, x: T.func.vjp(lambda a: (a, a), x)[1](T.ones(4)),
    "cotangent list for tuple": lambda T, x: T.func.vjp(lambda a: (a, a), x)[1]([T.ones(4)] * 2),
    "cotangent for dict": lambda T, x: T.func.vjp(lambda a: {"a": a}, x)[1](T.ones(4)),
    "jacrev chunk_size": lambda T, x: T.func.jacrev(lambda a: a, chunk_size=0),
    "jacrev argnum out of range": lambda T, x: T.func.jacrev(lambda a: a, argnums=3)(x),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_error_first_lines_match_torch(case):
    torch = pytest.importorskip("torch")
    got = _first_line(lambda: ERROR_CASES[case](minigrad, minigrad.tensor(X)))
    want = _first_line(lambda: ERROR_CASES[case](torch, torch.tensor(X)))
    assert want != "no error"
    assert got == want.replace("torch.", "torch.")


def test_errors_without_torch():
    x = minigrad.tensor(X)
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor, got tensor with 1"):
        minigrad.func.grad(lambda a: a * 2)(x)
    with pytest.raises(RuntimeError, match="Got argnum=1, but only 1 positional inputs"):
        minigrad.func.grad(lambda a: a.sum(), argnums=1)(x)
    with pytest.raises(ValueError, match="Thing passed to transform API must be Tensor"):
        minigrad.func.vjp(lambda a: a, 1.0)


# --- functional_call ------------------------------------------------------------------------------

def _model(T):
    T.manual_seed(0)
    return T.nn.Sequential(T.nn.Linear(4, 3), T.nn.Tanh(), T.nn.Linear(3, 2))


@LIBS
def test_functional_call(T):
    model = _model(T)
    x = T.tensor(M)
    params = {k: T.tensor(np.full(tuple(v.shape), 0.1, np.float32)) for k, v in model.named_parameters()}
    out = T.func.functional_call(model, params, (x,))
    expected = np.tanh(M.astype(np.float32) @ np.full((4, 3), 0.1) + 0.1) @ np.full((3, 2), 0.1) + 0.1
    np.testing.assert_allclose(_np(out), expected, rtol=1e-5, atol=1e-6)
    assert not np.allclose(_np(model(x)), expected)  # the model's own weights are back
    # a single tensor as args, part of the weights in a second dict
    first = {k: v for k, v in params.items() if k.startswith("0.")}
    rest = {k: v for k, v in params.items() if not k.startswith("0.")}
    np.testing.assert_allclose(_np(T.func.functional_call(model, (first, rest), x)), expected, rtol=1e-5, atol=1e-6)
    # gradients w.r.t. the weights, .grad untouched
    grads = T.func.grad(lambda p: T.func.functional_call(model, p, (x,)).sum())(params)
    assert set(grads) == set(params) and model[0].weight.grad is None
    assert tuple(grads["0.weight"].shape) == (3, 4)


def test_functional_call_gradients_match_torch():
    torch = pytest.importorskip("torch")
    got, want = [], []
    for T, out in ((minigrad, got), (torch, want)):
        model = _model(T)
        params = {k: T.tensor(np.full(tuple(v.shape), 0.3, np.float32))
                  for k, v in model.named_parameters()}
        g = T.func.grad(lambda p, inp: (T.func.functional_call(model, p, (inp,)) ** 2).sum())(params, T.tensor(M))
        out.extend(_np(g[k]) for k in sorted(g))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5)


FC_ERRORS = {
    "strict missing": lambda T, m: T.func.functional_call(m, {"0.weight": T.zeros(3, 4)}, (T.zeros(2, 4),),
                                                           strict=True),
    "strict unexpected": lambda T, m: T.func.functional_call(
        m, {**{k: v.detach() for k, v in m.named_parameters()}, "x": T.zeros(1)}, (T.zeros(2, 4),), strict=True),
    "repeated keys": lambda T, m: T.func.functional_call(m, ({"0.bias": T.zeros(3)}, {"0.bias": T.zeros(3)}),
                                                          (T.zeros(2, 4),)),
    "not dicts": lambda T, m: T.func.functional_call(m, [1], (T.zeros(2, 4),)),
    "not a dict": lambda T, m: T.func.functional_call(m, 1, (T.zeros(2, 4),)),
}


@pytest.mark.parametrize("case", list(FC_ERRORS))
def test_functional_call_errors_match_torch(case):
    torch = pytest.importorskip("torch")
    got = _first_line(lambda: FC_ERRORS[case](minigrad, _model(minigrad)))
    want = _first_line(lambda: FC_ERRORS[case](torch, _model(torch)))
    assert want != "no error" and got == want


@LIBS
def test_functional_call_tied_weights(T):
    class Tied(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = T.nn.Linear(2, 2, bias=False)
            self.b = T.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    m = Tied()
    w = T.eye(2) * 2
    x = T.ones(1, 2)
    np.testing.assert_allclose(_np(T.func.functional_call(m, {"a.weight": w}, (x,))), [[4.0, 4.0]])
    untied = _np(T.func.functional_call(m, {"a.weight": w}, (x,), tie_weights=False))
    np.testing.assert_allclose(untied, _np(m.b(T.ones(1, 2) @ w.t())), rtol=1e-6)


def test_jacrev_rows_by_vmap_any_chunk_size():
    x = minigrad.tensor(X)
    fn = lambda a: ((a[:, None] * a[None, :]).tanh(), a.exp().sum())  # noqa: E731
    full = minigrad.func.jacrev(fn)(x)
    for chunk in (1, 3, 100):
        part = minigrad.func.jacrev(fn, chunk_size=chunk)(x)
        for a, b in zip(full, part):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_allclose(full[1].numpy(), np.exp(X), rtol=1e-6)
    assert tuple(full[0].shape) == (4, 4, 4)


@LIBS
def test_keyword_arguments_pass_through_undifferentiated(T):
    x = T.tensor(X)
    g = T.func.grad(lambda a, *, scale: (a * scale).sum())(x, scale=T.tensor(3.0))
    np.testing.assert_allclose(_np(g), np.full(4, 3.0))
    with pytest.raises(RuntimeError, match="Got argnum=0, but only 0 positional inputs"):
        T.func.grad(lambda a: a.sum())(a=x)
