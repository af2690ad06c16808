"""torch.autograd.functional (vjp, jvp, jacobian, hessian, vhp, hvp): values against finite differences
(always), and against PyTorch where installed: the same values, the same return structure (tuple or
bare Tensor, as the inputs and outputs were given), requires_grad of the results with and without
create_graph, and the first line of the strict-mode and bad-argument errors."""
from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad.autograd import functional as AF

RNG = np.random.default_rng(3)
A = RNG.standard_normal((3, 3))
X = RNG.standard_normal(3)
Y = RNG.standard_normal(3)


def _numeric_jacobian(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    out = np.asarray(f(x))
    jac = np.zeros(out.shape + x.shape)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        jac[(...,) + i] = (np.asarray(f(x + d)) - np.asarray(f(x - d))) / (2 * eps)
    return jac


def _f(T):
    return lambda a: (T.tensor(A) @ a).tanh() * a


def _np_f(a):
    return np.tanh(A @ a) * a


def _scalar(T):
    return lambda a: (a.sin() * a ** 2).sum()


def test_values_match_finite_differences():
    x = minigrad.tensor(X)
    J = _numeric_jacobian(_np_f, X)
    v = minigrad.tensor(Y)
    np.testing.assert_allclose(AF.jacobian(_f(minigrad), x).numpy(), J, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(AF.jvp(_f(minigrad), x, v)[1].numpy(), J @ Y, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(AF.vjp(_f(minigrad), x, v)[1].numpy(), Y @ J, rtol=1e-6, atol=1e-9)
    fwd = AF.jacobian(_f(minigrad), x, vectorize=True, strategy="forward-mode")
    np.testing.assert_allclose(fwd.numpy(), J, rtol=1e-6, atol=1e-9)
    grad_np = lambda a: np.sin(a) * 2 * a + np.cos(a) * a ** 2  # noqa: E731
    H = _numeric_jacobian(grad_np, X)
    np.testing.assert_allclose(AF.hessian(_scalar(minigrad), x).numpy(), H, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(AF.hvp(_scalar(minigrad), x, v)[1].numpy(), H @ Y, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(AF.vhp(_scalar(minigrad), x, v)[1].numpy(), Y @ H, rtol=1e-6, atol=1e-8)


def test_results_are_detached_unless_create_graph():
    x = minigrad.tensor(X, requires_grad=True)
    out, j = AF.jvp(_f(minigrad), x, minigrad.tensor(Y))
    assert not out.requires_grad and not j.requires_grad
    out, j = AF.jvp(_f(minigrad), x, minigrad.tensor(Y), create_graph=True)
    assert out.requires_grad and j.requires_grad
    j.sum().backward()  # the graph reaches the caller's x
    assert x.grad is not None and x.grad.shape == (3,)


# --- the oracle: every call below on both engines, results compared ---------------------------------

def _cases(T):
    x, y = T.tensor(X), T.tensor(Y)
    f = _f(T)
    two = lambda a, b: (a * b.exp(), (a @ b).reshape(1))  # noqa: E731
    s2 = lambda a, b: (a ** 2 * b.sin()).sum()  # noqa: E731
    return {
        "vjp tensor": lambda: AF_(T).vjp(f, x, y),
        "vjp tuple in": lambda: AF_(T).vjp(lambda a, b: a * b, (x, y), y),
        "vjp tuple out": lambda: AF_(T).vjp(two, (x, y), (x, T.ones(1, dtype=T.float64))),
        "vjp scalar no v": lambda: AF_(T).vjp(lambda a: a.sum(), x),
        "vjp unused input": lambda: AF_(T).vjp(lambda a, b: a * 2, (x, y), y),
        "jvp tensor": lambda: AF_(T).jvp(f, x, y),
        "jvp tuple": lambda: AF_(T).jvp(two, (x, y), (y, x)),
        "jvp create_graph": lambda: AF_(T).jvp(f, x, y, create_graph=True),
        "jacobian tensor": lambda: AF_(T).jacobian(f, x),
        "jacobian tuple out": lambda: AF_(T).jacobian(lambda a: (a * 2, a.sum()), x),
        "jacobian tuple in": lambda: AF_(T).jacobian(lambda a, b: a * b, (x, y)),
        "jacobian both": lambda: AF_(T).jacobian(two, (x, y)),
        "jacobian vectorize": lambda: AF_(T).jacobian(two, (x, y), vectorize=True),
        "jacobian vectorize create_graph": lambda: AF_(T).jacobian(f, x, create_graph=True, vectorize=True),
        "hessian vectorize": lambda: AF_(T).hessian(s2, (x, y), vectorize=True),
        "jacobian forward": lambda: AF_(T).jacobian(two, (x, y), vectorize=True, strategy="forward-mode"),
        "jacobian create_graph": lambda: AF_(T).jacobian(f, x, create_graph=True),
        "jacobian unused": lambda: AF_(T).jacobian(lambda a, b: a.exp(), (x, y)),
        "hessian tensor": lambda: AF_(T).hessian(_scalar(T), x),
        "hessian tuple": lambda: AF_(T).hessian(s2, (x, y)),
        "hessian create_graph": lambda: AF_(T).hessian(s2, (x, y), create_graph=True),
        "hessian forward outer": lambda: AF_(T).hessian(s2, (x, y), vectorize=True,
                                                         outer_jacobian_strategy="forward-mode"),
        "vhp": lambda: AF_(T).vhp(_scalar(T), x, y),
        "vhp tuple": lambda: AF_(T).vhp(s2, (x, y), (y, x)),
        "hvp": lambda: AF_(T).hvp(_scalar(T), x, y),
        "hvp tuple": lambda: AF_(T).hvp(s2, (x, y), (y, x)),
        "hvp scalar input no v": lambda: AF_(T).hvp(lambda a: a.sin().sum(), T.tensor([0.5], dtype=T.float64)),
    }


def AF_(T):
    return T.autograd.functional


def _describe(r):
    """The structure (tuple nesting), shapes, requires_grad and values of a result."""
    if isinstance(r, (tuple, list)):
        return (type(r).__name__, [_describe(v) for v in r])
    return (tuple(r.shape), bool(r.requires_grad), np.round(r.detach().numpy(), 10).tolist())


@pytest.mark.parametrize("case", list(_cases(minigrad)))
def test_oracle_matches_torch(case):
    torch = pytest.importorskip("torch")
    got = _describe(_cases(minigrad)[case]())
    want = _describe(_cases(torch)[case]())
    assert got == want


def _error(fn) -> str:
    try:
        fn()
    except (RuntimeError, TypeError, NotImplementedError, AssertionError) as e:
        return f"{type(e).__name__}: {str(e).splitlines()[0]}"
    return "no error"


def _errors(T):
    x, y = T.tensor(X), T.tensor(Y)
    AFT = T.autograd.functional
    const = lambda a: T.ones(3, dtype=T.float64)  # noqa: E731
    return {
        "input not a tensor": lambda: AFT.vjp(lambda a: a, 3.0, y),
        "input tuple with a number": lambda: AFT.jacobian(lambda a, b: a, (x, 2.0)),
        "output not a tensor": lambda: AFT.vjp(lambda a: 1.0, x, y),
        "v missing for a vector output": lambda: AFT.vjp(lambda a: a * 2, x),
        "v missing for a vector input": lambda: AFT.jvp(lambda a: a * 2, x),
        "v wrong size": lambda: AFT.vjp(lambda a: a * 2, x, T.ones(2, dtype=T.float64)),
        "v wrong size in a tuple": lambda: AFT.jvp(lambda a, b: a * b, (x, y), (y, T.ones(2, dtype=T.float64))),
        "v tuple too short": lambda: AFT.jvp(lambda a, b: a * b, (x, y), (y,)),
        "v tuple for one tensor": lambda: AFT.vjp(lambda a: a * 2, x, (y, y)),
        "strict constant output": lambda: AFT.vjp(const, x, y, strict=True),
        "strict unused input": lambda: AFT.vjp(lambda a, b: a * 2, (x, y), y, strict=True),
        "strict jacobian unused": lambda: AFT.jacobian(lambda a, b: a * 2, (x, y), strict=True),
        "strict jacobian linear create_graph": lambda: AFT.jacobian(lambda a: a * 2, x, create_graph=True,
                                                                     strict=True),
        "strict jvp constant": lambda: AFT.jvp(const, x, y, strict=True),
        "strict hessian linear": lambda: AFT.hessian(lambda a: a.sum(), x, strict=True),
        "strict vhp linear": lambda: AFT.vhp(lambda a: a.sum(), x, y, strict=True),
        "strict hvp linear": lambda: AFT.hvp(lambda a: a.sum(), x, y, strict=True),
        "strict and vectorize": lambda: AFT.jacobian(lambda a: a * a, x, strict=True, vectorize=True),
        "bad strategy": lambda: AFT.jacobian(lambda a: a, x, strategy="sideways"),
        "forward and create_graph": lambda: AFT.jacobian(lambda a: a, x, create_graph=True, strategy="forward-mode"),
        "forward and strict": lambda: AFT.jacobian(lambda a: a, x, strict=True, strategy="forward-mode"),
        "forward without vectorize": lambda: AFT.jacobian(lambda a: a, x, strategy="forward-mode"),
        "hessian vector output": lambda: AFT.hessian(lambda a: a * a, x),
        "hessian tuple output": lambda: AFT.hessian(lambda a: (a.sum(),), x),
        "vhp vector output": lambda: AFT.vhp(lambda a: a * a, x, y),
        "hvp tuple output": lambda: AFT.hvp(lambda a: (a.sum(), a.sum()), x, y),
        "hessian bad strategy": lambda: AFT.hessian(lambda a: a.sum(), x, outer_jacobian_strategy="x"),
    }


@pytest.mark.parametrize("case", list(_errors(minigrad)))
def test_errors_match_torch(case):
    torch = pytest.importorskip("torch")
    got = _error(_errors(minigrad)[case])
    want = _error(_errors(torch)[case])
    assert want != "no error"
    assert got == want.replace("torch.Size", "torch.Size")


def test_strict_errors_without_torch():
    x = minigrad.tensor(X)
    with pytest.raises(RuntimeError, match="independent of input 1. This is not allowed in strict mode"):
        AF.vjp(lambda a, b: a * 2, (x, x), x, strict=True)
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
        AF.jacobian(lambda a: a, [x])


def test_vectorize_batches_the_rows_with_vmap(monkeypatch):
    calls = []
    real = AF._jacobian_rows_by_vmap

    def spy(*args):
        res = real(*args)
        calls.append(res is not None)  # True: vmap batched the rows (no per-row fallback)
        return res

    monkeypatch.setattr(AF, "_jacobian_rows_by_vmap", spy)
    x = minigrad.tensor(X)
    j = AF.jacobian(_f(minigrad), x, vectorize=True)
    assert calls == [True]
    np.testing.assert_allclose(j.numpy(), AF.jacobian(_f(minigrad), x).numpy(), rtol=1e-12, atol=1e-15)
