"""Forward-mode AD through every op of the op tables: the jvp against finite differences
(gradcheck with check_forward_ad=True) and against PyTorch's forward AD (oracle, skipped without
torch), plus a test that every built-in op with a backward has a jvp rule.

The rows are the ones of the op tables (tests/test_ops_*.py, tests/optable.py) and the cases of
tests/test_ops_gradcheck.py, so an op added there is checked here too.
"""
from __future__ import annotations

import importlib

import numpy as np
import pytest
from optable import Row, _differentiable, _first, make_data, to_lib

import minigrad
from minigrad.autograd import gradcheck
from minigrad.autograd.function import Function

_TABLES = ["test_ops_activations", "test_ops_elementwise", "test_ops_indexing_shapes", "test_ops_matrix",
           "test_ops_reduce_sort", "test_nn_layers_more"]


def _F(T):
    return T.nn.functional


# The nn Functions outside the op tables (convolution, pooling, pixel shuffle) and the losses of the MLPs
EXTRA_ROWS = [
    Row("conv2d", lambda T, x, w, b: _F(T).conv2d(x, w, b, stride=2, padding=1), [("n", (2, 3, 5, 5)),
                                                                                  ("n", (4, 3, 3, 3)), ("n", (4,))]),
    Row("conv2d-groups-dilation", lambda T, x, w: _F(T).conv2d(x, w, groups=2, dilation=2),
        [("n", (1, 4, 6, 6)), ("n", (2, 2, 2, 2))]),
    Row("conv1d", lambda T, x, w: _F(T).conv1d(x, w, padding=1), [("n", (2, 2, 7)), ("n", (3, 2, 3))]),
    Row("max_pool2d", lambda T, x: _F(T).max_pool2d(x, 2), [("d", (1, 2, 4, 4))]),
    Row("avg_pool2d", lambda T, x: _F(T).avg_pool2d(x, 3, stride=1, padding=1), [("n", (1, 2, 4, 4))]),
    Row("adaptive_avg_pool2d", lambda T, x: _F(T).adaptive_avg_pool2d(x, (2, 3)), [("n", (1, 2, 5, 6))]),
    Row("pixel_shuffle", lambda T, x: _F(T).pixel_shuffle(x, 2) * x.sum(), [("n", (1, 8, 2, 3))]),
    Row("pixel_unshuffle", lambda T, x: _F(T).pixel_unshuffle(x, 2), [("n", (1, 2, 4, 6))]),
    Row("linear-mlp-xent", lambda T, x, w, b, y: _F(T).cross_entropy(_F(T).linear(x, w, b).relu(), y),
        [("n", (4, 3)), ("n", (5, 3)), ("n", (5,)), ("i5", (4,))]),
    Row("mse-bce", lambda T, a, b, p: _F(T).mse_loss(a, b) + _F(T).binary_cross_entropy(p, b.sigmoid()),
        [("n", (3, 4)), ("n", (3, 4)), ("u", (3, 4))]),
]
ROWS = [r for m in _TABLES for r in importlib.import_module(m).ROWS] + EXTRA_ROWS
CASES = importlib.import_module("test_ops_gradcheck").CASES


def _row_params(keep):
    return [pytest.param(r, id=r.id, marks=r.marks) for r in ROWS if keep(r)]


@pytest.mark.parametrize("row", _row_params(lambda r: r.grad and any(g for _, g in make_data(r.kinds, 0))))
def test_jvp_matches_finite_differences(row):
    f, xs = _differentiable(row, make_data(row.kinds, seed=0))
    assert gradcheck(f, xs, eps=1e-6, atol=1e-5, rtol=1e-3, check_forward_ad=True, check_backward_ad=False)


@pytest.mark.parametrize("fn, specs, gradgrad", CASES)
def test_jvp_of_the_gradcheck_cases(fn, specs, gradgrad):
    mod = importlib.import_module("test_ops_gradcheck")
    inputs = mod.make_inputs(specs)
    assert gradcheck(mod._recording(fn), inputs, eps=1e-6, atol=1e-5, rtol=1e-3, check_forward_ad=True,
                     check_backward_ad=False)


def _jvp(T, row, data, tangents):
    """The first output's value and tangent, on library T, the inputs that require grad made dual."""
    fwAD = T.autograd.forward_ad
    ins = [to_lib(T, a, False) for a, _ in data]
    with fwAD.dual_level():
        duals = [fwAD.make_dual(x, T.tensor(t, dtype=x.dtype)) if t is not None else x for x, t in zip(ins, tangents)]
        out = _first(row.fn(T, *duals))
        primal, tangent = fwAD.unpack_dual(out)
        value = primal.detach().numpy().copy()
        tangent = np.zeros_like(value) if tangent is None else tangent.detach().numpy().copy()
    return value, tangent


# Rows where PyTorch 2.13's own jvp is wrong; there the oracle is J t with J from torch's reverse mode.
TORCH_JVP_WRONG = {
    # the tangent of out[0] = x[0] comes out as -8e-9 instead of t[0] for inputs about 60 apart (x * 30)
    "logcumsumexp-big",
}


def _torch_jacobian_times(torch, row, data, tangents):
    ins = [to_lib(torch, a, False) for a, _ in data]
    idx = [i for i, t in enumerate(tangents) if t is not None]

    def f(*xs):
        args = list(ins)
        for i, x in zip(idx, xs):
            args[i] = x
        return _first(row.fn(torch, *args))

    jac = torch.autograd.functional.jacobian(f, tuple(ins[i] for i in idx))
    jac = jac if isinstance(jac, tuple) else (jac,)
    out = f(*(ins[i] for i in idx))
    total = np.zeros(tuple(out.shape))
    for i, j in zip(idx, jac):
        total += (j.reshape(out.numel(), -1).numpy() @ tangents[i].reshape(-1)).reshape(total.shape)
    return out.detach().numpy(), total


@pytest.mark.parametrize("row", _row_params(lambda r: r.oracle and r.grad and any(g for _, g in make_data(r.kinds, 0))))
def test_jvp_matches_torch(row):
    torch = pytest.importorskip("torch")
    data = make_data(row.kinds, seed=2)
    rng = np.random.default_rng(5)
    tangents = [rng.standard_normal(a.shape) if g else None for a, g in data]
    try:
        if row.id in TORCH_JVP_WRONG:
            tv, tt = _torch_jacobian_times(torch, row, data, tangents)
        else:
            tv, tt = _jvp(torch, row, data, tangents)
    except (NotImplementedError, RuntimeError) as e:  # an op PyTorch has no forward AD for
        pytest.skip(f"torch: {str(e).splitlines()[0]}")
    mv, mt = _jvp(minigrad, row, data, tangents)
    np.testing.assert_allclose(mv, tv, rtol=max(row.rtol, 1e-9), atol=1e-11)
    np.testing.assert_allclose(mt, tt, rtol=max(row.rtol, 1e-8), atol=1e-10)


# --- every op with a backward has a jvp ---------------------------------------------------------------------------
# Ops without a jvp, on purpose: their backward raises too (no derivative in PyTorch either), or they are bases.
NO_JVP = {"ScatterReduceAdd", "Heaviside", "RemainderOfNumber", "_Unary", "_Normalize", "_Extreme", "_ExtremeDim",
          "_PickAlong"}


def _engine_functions() -> list:
    import minigrad.nn  # noqa: F401  (its Functions: convolution, pooling...)

    seen, stack = [], [Function]
    while stack:
        for s in stack.pop().__subclasses__():
            if s not in seen:
                seen.append(s)
                stack.append(s)
    return [c for c in seen if c.__module__.startswith(("minigrad._ops", "minigrad.nn"))]


def test_every_builtin_op_with_a_backward_has_a_jvp():
    from minigrad.autograd import _jvp_rules

    _jvp_rules.install()
    missing = [f"{c.__module__}.{c.__name__}" for c in _engine_functions()
               if c.__name__ not in NO_JVP and getattr(c, "_jvp", None) is None]
    assert not missing, f"ops with a backward but no jvp rule (minigrad/autograd/_jvp_rules.py): {missing}"
    assert len(_engine_functions()) > 150  # the walk found the catalogue
    # the rules that call backward need a backward written with minigrad ops (not @once_differentiable)
    numpy_only = [c.__name__ for c in _engine_functions()
                  if getattr(c, "_jvp", None) in (_jvp_rules.via_vjp, _jvp_rules.diagonal)
                  and getattr(c.backward, "__code__", None) is not None
                  and c.backward.__code__.co_filename.endswith("function.py")
                  and c.backward.__code__.co_name == "wrapper"]
    assert not numpy_only, f"via_vjp / diagonal on a once_differentiable backward: {numpy_only}"


def test_an_op_without_jvp_raises_pytorchs_error():
    fwAD = minigrad.autograd.forward_ad
    with fwAD.dual_level():
        x = fwAD.make_dual(minigrad.ones(3, dtype=minigrad.float64), minigrad.ones(3, dtype=minigrad.float64))
        with pytest.raises(NotImplementedError, match="^Trying to use forward AD with scatter that does not support "
                                                      "it because it has not been implemented yet."):
            x.scatter(0, minigrad.tensor([0, 1, 2]), x, reduce="add")


@pytest.mark.parametrize("row", _row_params(lambda r: r.grad and any(g for _, g in make_data(r.kinds, 0))))
def test_tangents_are_differentiable(row):
    """d/dt <J t, w> = J^T w: the tangent, differentiated by reverse mode with respect to the input tangent,
    gives backward's vector-Jacobian product (every rule builds its tangent from recorded minigrad ops)."""
    fwAD = minigrad.autograd.forward_ad
    data = make_data(row.kinds, seed=3)
    rng = np.random.default_rng(7)
    ins = [to_lib(minigrad, a, g) for a, g in data]
    tangents = [minigrad.tensor(rng.standard_normal(a.shape), requires_grad=True) if g else None for a, g in data]
    with fwAD.dual_level():
        duals = [fwAD.make_dual(x, t) if t is not None else x for x, t in zip(ins, tangents)]
        out = _first(row.fn(minigrad, *duals))
        tangent = fwAD.unpack_dual(out).tangent
    w = minigrad.tensor(rng.standard_normal(tuple(out.shape)))
    ts = [t for t in tangents if t is not None]
    if tangent is None or not tangent.requires_grad:
        got = [np.zeros(t.shape) for t in ts]
    else:
        got = [g.numpy() if g is not None else np.zeros(t.shape)
               for g, t in zip(minigrad.autograd.grad((tangent * w).sum(), ts, allow_unused=True), ts)]
    xs = [x for x, t in zip(ins, tangents) if t is not None]
    out2 = _first(row.fn(minigrad, *ins))
    expected = [g.numpy() if g is not None else np.zeros(x.shape)
                for g, x in zip(minigrad.autograd.grad((out2 * w).sum(), xs, allow_unused=True), xs)]
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)
