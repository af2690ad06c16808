"""minigrad.vmap: in_dims / out_dims, nesting, chunks, randomness, first lines of errors, custom Functions
and per-sample gradients, each against torch.vmap / torch.func where torch can answer (skipped without it).
The op-by-op batching rules are tested over the op tables in test_vmap_ops.py."""
from __future__ import annotations

import numpy as np
import pytest
from optable import first_line

import minigrad
from minigrad._functorch import _state
from minigrad._functorch.batched import BatchedArray


def _arr(x):
    if isinstance(x, (tuple, list)):
        return type(x)(_arr(v) for v in x)
    if isinstance(x, dict):
        return {k: _arr(v) for k, v in x.items()}
    return x.detach().numpy() if hasattr(x, "detach") else x


def _same(a, b):
    a, b = _arr(a), _arr(b)
    if isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    else:
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


RNG = np.random.default_rng(3)
A = RNG.standard_normal((3, 4))
Bm = RNG.standard_normal((4, 5))
V = RNG.standard_normal((4,))

# (source, fn of T) pairs: each runs with T = minigrad and T = torch, results compared
CASES = {
    "in_dims-0": lambda T, a, b, v: T.vmap(lambda x: x * 2 + x.sum())(a),
    "in_dims-1": lambda T, a, b, v: T.vmap(lambda x: x.softmax(0), in_dims=1)(a),
    "in_dims-neg": lambda T, a, b, v: T.vmap(lambda x: x.cumsum(0), in_dims=-1)(a),
    "in_dims-None": lambda T, a, b, v: T.vmap(lambda x, y: x @ y, in_dims=(0, None))(a, b),
    "in_dims-second": lambda T, a, b, v: T.vmap(lambda x, y: x @ y, in_dims=(None, 1))(a, b),
    "broadcast-ranks": lambda T, a, b, v: T.vmap(lambda x: x + a)(v.unsqueeze(1).expand(4, 4)),
    "nested-tuple": lambda T, a, b, v: T.vmap(lambda p, s: p[0] * p[1] + s, in_dims=((0, 1), None))((a, a.T), 1.5),
    "dict-input": lambda T, a, b, v: T.vmap(lambda d: d["x"].sum() * d["y"], in_dims=({"x": 0, "y": None},))(
        {"x": a, "y": v}),
    "list-input": lambda T, a, b, v: T.vmap(lambda xs: xs[0] - xs[1])([a, a * 3]),
    "out_dims-1": lambda T, a, b, v: T.vmap(lambda x: x.unsqueeze(0) * v.unsqueeze(1), out_dims=1)(a),
    "out_dims-neg": lambda T, a, b, v: T.vmap(lambda x: x.outer(x), out_dims=-1)(a),
    "out_dims-tuple": lambda T, a, b, v: T.vmap(lambda x: (x.sum(), x * 2), out_dims=(0, 1))(a),
    "out_dims-None": lambda T, a, b, v: T.vmap(lambda x: (x * 2, v), out_dims=(0, None))(a),
    "unbatched-output": lambda T, a, b, v: T.vmap(lambda x: (v * 2, x), out_dims=(0, 1))(a),
    "dict-output": lambda T, a, b, v: T.vmap(lambda x: {"s": x.sum(), "m": x.amax()})(a),
    "kwargs": lambda T, a, b, v: T.vmap(lambda x, *, scale: x * scale)(a, scale=3.0),
    "nested-outer": lambda T, a, b, v: T.vmap(T.vmap(lambda x, y: x * y, in_dims=(None, 0)), in_dims=(0, None))(
        v, v[:3]),
    "nested-matmul": lambda T, a, b, v: T.vmap(T.vmap(lambda x, y: x.dot(y), in_dims=(0, None)), in_dims=(None, 1))(
        a, b),
    "nested-3": lambda T, a, b, v: T.vmap(T.vmap(T.vmap(lambda x: x.exp())))(a.reshape(3, 2, 2)),
    "chunk_size": lambda T, a, b, v: T.vmap(lambda x: (x.tanh(), x.sum()), chunk_size=2)(a),
    "chunk_size-out_dims": lambda T, a, b, v: T.vmap(lambda x: x.outer(x), out_dims=2, chunk_size=1)(a),
    "indexing": lambda T, a, b, v: T.vmap(lambda x: x[1:3] * x[0] + x[[0, 2]].sum())(a),
    "batched-index": lambda T, a, b, v: T.vmap(lambda x, i: x[i])(a, T.tensor([0, 3, 1])),
    "gather-batched": lambda T, a, b, v: T.vmap(lambda x, i: x.gather(0, i))(a, T.tensor([[0, 1], [3, 3], [2, 0]])),
    "embedding-shared": lambda T, a, b, v: T.vmap(lambda i: T.nn.functional.embedding(i, b))(T.tensor([[0, 1], [3, 2],
                                                                                                       [1, 1]])),
    "cat-stack-mixed": lambda T, a, b, v: T.vmap(lambda x: T.stack([T.cat([x, v]), T.cat([v, x])], 1))(a),
    "einsum": lambda T, a, b, v: T.vmap(lambda x: T.einsum("i,ij->j", x, b))(a),
    "where-mixed": lambda T, a, b, v: T.vmap(lambda x: T.where(x > 0, x, v))(a),
    "inplace-batched": lambda T, a, b, v: T.vmap(lambda x: x.clone().mul_(2).add_(v))(a),
    "setitem": lambda T, a, b, v: T.vmap(lambda x: _setitem(T, x))(a),
    "shared-indexed-per-sample": lambda T, a, b, v: T.vmap(lambda i: b[i] * 2)(T.tensor([[0, 1], [3, 3], [2, 0]])),
    "conv2d": lambda T, a, b, v: T.vmap(lambda x: T.nn.functional.conv2d(x.reshape(1, 1, 2, 2), b.reshape(5, 1, 2, 2),
                                                                         padding=1))(a),
    "pools": lambda T, a, b, v: T.vmap(lambda x: T.nn.functional.max_pool2d(x.reshape(1, 2, 2), 2)
                                       + T.nn.functional.avg_pool2d(x.reshape(1, 2, 2), 2))(a),
    "losses": lambda T, a, b, v: T.vmap(lambda x, t: (T.nn.functional.cross_entropy(x.unsqueeze(0), t.unsqueeze(0)),
                                                      T.nn.functional.mse_loss(x, v)))(a, T.tensor([1, 0, 3])),
}


def _setitem(T, x):
    y = x.clone()
    y[1:3] = x[0]
    return y


@pytest.mark.parametrize("name", list(CASES))
def test_vmap_matches_torch(name):
    torch = pytest.importorskip("torch")
    fn = CASES[name]
    data = [A, Bm, V]
    got = fn(minigrad, *(minigrad.tensor(d) for d in data))
    expected = fn(torch, *(torch.tensor(d) for d in data))
    _same(got, expected)
    assert _state.ACTIVE[0] == 0 and not _state.LEVELS


def _no_batched_left(x):
    for leaf in (x if isinstance(x, (tuple, list)) else [x]):
        assert not isinstance(leaf._data, BatchedArray)


def test_print_inside_vmap_as_torch(capsys):
    torch = pytest.importorskip("torch")
    shown = {}
    for T in (minigrad, torch):
        T.vmap(T.vmap(lambda x: print(x) or x))(T.tensor(A))
        shown[T.__name__] = capsys.readouterr().out
    assert shown["minigrad"] == shown["torch"]


def test_gradients_inside_and_outside_vmap_add_up_as_torch():
    """A tensor used both by vmap (shared by the batch) and outside it: its per-sample gradients are summed
    over the batch before the plain gradient is added (not counted once per sample)."""
    torch = pytest.importorskip("torch")
    res = {}
    for T in (minigrad, torch):
        w = T.tensor(Bm, requires_grad=True)
        x = T.tensor(A, requires_grad=True)
        y = w * 3  # a node recorded outside vmap that receives both kinds of gradient
        out = T.vmap(lambda r: (r @ y).sin().sum())(x) + y.sum() + T.vmap(lambda i: y[i].sum())(T.tensor([0, 2, 2]))
        out.sum().backward()
        res[T.__name__] = (w.grad, x.grad)
    _same(res["minigrad"], res["torch"])


def test_outputs_are_ordinary_tensors():
    out = minigrad.vmap(lambda x: (x * 2, x.sum()))(minigrad.tensor(A))
    _no_batched_left(out)
    assert out[0].shape == (3, 4) and out[1].shape == (3,)


# --- first lines of errors against PyTorch ----------------------------------------------------------------
ERRORS = [
    "torch.vmap(lambda x, y: x)(torch.ones(2), torch.ones(3))",
    "torch.vmap(lambda x, y: x, in_dims=(0,))(torch.ones(2), torch.ones(2))",
    "torch.vmap(lambda x: x, in_dims=None)(torch.ones(2))",
    "torch.vmap(lambda x: x, in_dims=[0])(torch.ones(2))",
    "torch.vmap(lambda: 1)()",
    "torch.vmap(lambda x: x, in_dims=('a',))(torch.ones(2))",
    "torch.vmap(lambda x: x, in_dims=0)(3)",
    "torch.vmap(lambda x: x, in_dims=1)(torch.ones(2))",
    "torch.vmap(lambda x: x, in_dims=0)(torch.tensor(1.0))",
    "torch.vmap(lambda x, y: x, in_dims=(None, None))(torch.ones(2), torch.ones(2))",
    "torch.vmap(lambda x: 3)(torch.ones(2))",
    "torch.vmap(lambda x: (x, 'a'))(torch.ones(2))",
    "torch.vmap(lambda x: x, out_dims='a')(torch.ones(2))",
    "torch.vmap(lambda x: x, out_dims=(0, 1))(torch.ones(2))",
    "torch.vmap(lambda x: (x, x), out_dims=(0, 1, 2))(torch.ones(2))",
    "torch.vmap(lambda x: x, out_dims=None)(torch.ones(2))",
    "torch.vmap(lambda x: x, randomness='sometimes')",
    "torch.vmap(lambda x: x, chunk_size=0)",
    "torch.vmap(lambda x: x.sum().item())(torch.ones(2, 3))",
    "torch.vmap(lambda x: 1 if x.sum() > 0 else 0)(torch.ones(2, 3))",
    "torch.vmap(lambda x: x.nonzero())(torch.ones(2, 3))",
    "torch.vmap(lambda x: x[x > 0])(torch.ones(2, 3))",
    "torch.vmap(lambda x: torch.randn(3))(torch.ones(2))",
    "torch.vmap(lambda x: F.dropout(x, 0.5))(torch.ones(2, 3))",
    "torch.vmap(lambda x: torch.rand_like(x))(torch.ones(2, 3))",
    "torch.vmap(lambda x: x.numpy())(torch.ones(2, 3))",
    "torch.vmap(lambda x: torch.tensor(x.tolist()))(torch.ones(2, 3))",
    "torch.vmap(lambda x: torch.ones(3).add_(x))(torch.ones(2, 3))",
    "torch.vmap(lambda x: x[5])(torch.ones(2, 3))",
    "torch.vmap(lambda x: x.sum(2))(torch.ones(2, 3))",
]


@pytest.mark.parametrize("source", ERRORS)
def test_error_first_lines_match_torch(source):
    torch = pytest.importorskip("torch")
    expected = first_line(torch, source)
    assert expected[0] is not None
    got = first_line(minigrad, source)
    assert got[1] == expected[1]
    # minigrad's VmapError is a RuntimeError (what torch raises there)
    assert got[0] == expected[0] or (got[0] == "VmapError" and expected[0] == "RuntimeError")
    # an error inside vmap leaves no level behind, and the global generator is the real one again
    from minigrad._factories import _rng

    assert _state.ACTIVE[0] == 0 and not _state.LEVELS and isinstance(_rng[0], np.random.Generator)


def test_randomness_modes():
    minigrad.manual_seed(0)
    x = minigrad.ones(4, 3)
    same = minigrad.vmap(lambda x: x * minigrad.randn(3), randomness="same")(x)
    assert np.all(same.numpy() == same.numpy()[:1])
    diff = minigrad.vmap(lambda x: x * minigrad.randn(3), randomness="different")(x)
    assert len({tuple(r) for r in diff.numpy().tolist()}) == 4
    drop = minigrad.vmap(lambda x: minigrad.nn.functional.dropout(x, 0.5), randomness="different")(minigrad.ones(50, 8))
    assert set(np.unique(drop.numpy())) <= {0.0, 2.0} and len({tuple(r) for r in drop.numpy().tolist()}) > 1
    assert not isinstance(minigrad.randn(2)._data, BatchedArray)  # the global generator is back


# --- custom autograd.Functions --------------------------------------------------------------------------
def _functions(T):
    class Old(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class New(T.autograd.Function):
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    class Generated(New):
        generate_vmap_rule = True

    seen = {}

    class WithRule(New):
        @staticmethod
        def vmap(info, in_dims, x):
            seen["info"] = (info.batch_size, info.randomness, in_dims, tuple(x.shape))
            return WithRule.apply(x), in_dims[0]

    class Both(Generated):
        @staticmethod
        def vmap(info, in_dims, x):
            return x, 0

    class BadDims(New):
        @staticmethod
        def vmap(info, in_dims, x):
            return x * 1, (0, 1)

    return dict(Old=Old, New=New, Generated=Generated, WithRule=WithRule, Both=Both, BadDims=BadDims), seen


@pytest.mark.parametrize("name", ["Old", "New", "Both", "BadDims"])
def test_custom_function_errors_match_torch(name):
    torch = pytest.importorskip("torch")

    def err(T):
        cls = _functions(T)[0][name]
        with pytest.raises(RuntimeError) as ei:
            T.vmap(cls.apply, in_dims=1)(T.ones(2, 3))
        return str(ei.value).split("\n")[0]

    assert err(minigrad) == err(torch)


def test_old_style_function_refused_even_unbatched():
    cls = _functions(minigrad)[0]["Old"]
    with pytest.raises(RuntimeError, match="must override the setup_context staticmethod"):
        minigrad.vmap(lambda x: cls.apply(minigrad.ones(3)) + x)(minigrad.ones(2, 3))


@pytest.mark.parametrize("name", ["Generated", "WithRule"])
def test_custom_function_rules_match_torch(name):
    torch = pytest.importorskip("torch")
    results = {}
    for T in (minigrad, torch):
        classes, seen = _functions(T)
        x = T.tensor(A, requires_grad=True)
        w = T.tensor(V, requires_grad=True)
        out = T.vmap(lambda r: classes[name].apply(r * w), in_dims=0, randomness="same")(x)
        out.sum().backward()
        results[T.__name__] = (out, x.grad, w.grad, seen.get("info"))
    m, t = results["minigrad"], results["torch"]
    _same(m[:3], t[:3])
    if name == "WithRule":
        assert m[3] == t[3] == (3, "same", (0,), (3, 4))


# --- per-sample gradients and Jacobians -----------------------------------------------------------------
def _mlp_params(T, rng):
    return (T.tensor(rng.standard_normal((6, 3))), T.tensor(rng.standard_normal(6)),
            T.tensor(rng.standard_normal((2, 6))))


def _mlp_loss(T, params, x, y):
    w1, b1, w2 = params
    logits = T.tanh(x @ w1.T + b1) @ w2.T
    return T.nn.functional.cross_entropy(logits.unsqueeze(0), y.unsqueeze(0))


def test_per_sample_gradients_equal_a_loop():
    from minigrad.func import grad

    rng = np.random.default_rng(1)
    params = _mlp_params(minigrad, rng)
    x = minigrad.tensor(rng.standard_normal((7, 3)))
    y = minigrad.tensor(rng.integers(0, 2, 7))
    per_sample = minigrad.vmap(grad(lambda p, a, b: _mlp_loss(minigrad, p, a, b)), in_dims=(None, 0, 0))(params, x, y)
    for i in range(7):
        one = grad(lambda p, a, b: _mlp_loss(minigrad, p, a, b))(params, x[i], y[i])
        for g, gi in zip(per_sample, one):
            np.testing.assert_allclose(g[i].numpy(), gi.numpy(), rtol=1e-12, atol=1e-14)
    _no_batched_left(per_sample)


def test_per_sample_gradients_match_torch_func():
    torch = pytest.importorskip("torch")
    from minigrad.func import grad

    out = {}
    for T, g in ((minigrad, grad), (torch, torch.func.grad)):
        rng = np.random.default_rng(2)
        params = _mlp_params(T, rng)
        x = T.tensor(rng.standard_normal((5, 3)))
        y = T.tensor(rng.integers(0, 2, 5))
        out[T.__name__] = T.vmap(g(lambda p, a, b, T=T: _mlp_loss(T, p, a, b)), in_dims=(None, 0, 0))(params, x, y)
    _same(out["minigrad"], out["torch"])


def test_backward_through_vmap_sums_over_the_batch_for_shared_tensors():
    torch = pytest.importorskip("torch")
    res = {}
    for T in (minigrad, torch):
        w = T.tensor(Bm, requires_grad=True)
        x = T.tensor(A, requires_grad=True)
        out = T.vmap(lambda r: (r @ w).tanh().sum())(x)
        (out * T.arange(3.0, dtype=out.dtype)).sum().backward()
        res[T.__name__] = (out, w.grad, x.grad)
    _same(res["minigrad"], res["torch"])


def test_jacobian_rows_by_vmap_of_vjp():
    torch = pytest.importorskip("torch")
    from minigrad.func import vjp

    f = lambda T, x: (x.sin() * x.sum()).cumsum(0)  # noqa: E731
    jac = {}
    for T, vjp_ in ((minigrad, vjp), (torch, torch.func.vjp)):
        x = T.tensor(V)
        _, vjp_fn = vjp_(lambda x, T=T: f(T, x), x)
        jac[T.__name__] = T.vmap(vjp_fn)(T.eye(4, dtype=x.dtype))
    _same(jac["minigrad"], jac["torch"])


def test_vmap_of_grad_of_grad_nested():
    torch = pytest.importorskip("torch")
    from minigrad.func import grad

    res = {}
    for T, g in ((minigrad, grad), (torch, torch.func.grad)):
        x = T.tensor(V)
        res[T.__name__] = T.vmap(g(g(lambda t: t.sin() * t ** 3)))(x)
    _same(res["minigrad"], res["torch"])


# --- the NumpySort / NumpyTake example of PyTorch's "Extending torch.func with autograd.Function" ---------
def _numpy_sort_functions(T):
    def to_numpy(tensor):
        return tensor.cpu().numpy()

    class NumpySort(T.autograd.Function):
        @staticmethod
        def forward(x, dim):
            device = x.device
            x = to_numpy(x)
            ind = np.argsort(x, axis=dim)
            ind_inv = np.argsort(ind, axis=dim)
            result = np.take_along_axis(x, ind, axis=dim)
            return (T.tensor(result, device=device), T.tensor(ind, device=device), T.tensor(ind_inv, device=device))

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, dim = inputs
            _, ind, ind_inv = output
            ctx.mark_non_differentiable(ind, ind_inv)
            ctx.save_for_backward(ind, ind_inv)
            ctx.dim = dim

        @staticmethod
        def backward(ctx, grad_output, _0, _1):
            ind, ind_inv = ctx.saved_tensors
            return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None

        @staticmethod
        def vmap(info, in_dims, x, dim):
            x_bdim, _ = in_dims
            x = x.movedim(x_bdim, 0)
            dim = dim if dim >= 0 else dim + x.dim() - 1
            return NumpySort.apply(x, dim + 1), (0, 0, 0)

    class NumpyTake(T.autograd.Function):
        @staticmethod
        def forward(x, ind, ind_inv, dim):
            device = x.device
            x = to_numpy(x)
            ind = to_numpy(ind)
            return T.tensor(np.take_along_axis(x, ind, dim), device=device)

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, ind, ind_inv, dim = inputs
            ctx.save_for_backward(ind, ind_inv)
            ctx.dim = dim

        @staticmethod
        def backward(ctx, grad_output):
            ind, ind_inv = ctx.saved_tensors
            result = NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim)
            return result, None, None, None

        @staticmethod
        def vmap(info, in_dims, x, ind, ind_inv, dim):
            x_bdim, ind_bdim, ind_inv_bdim, _ = in_dims
            logical_dim = x.dim() if x_bdim is None else x_bdim - 1
            dim = dim if dim >= 0 else dim + logical_dim

            def maybe_expand_bdim_at_front(x, x_bdim):
                if x_bdim is None:
                    return x.expand(info.batch_size, *x.shape)
                return x.movedim(x_bdim, 0)

            x = maybe_expand_bdim_at_front(x, x_bdim)
            ind = maybe_expand_bdim_at_front(ind, ind_bdim)
            ind_inv = maybe_expand_bdim_at_front(ind_inv, ind_inv_bdim)
            return NumpyTake.apply(x, ind, ind_inv, dim + 1), 0

    return NumpySort, NumpyTake


def test_extending_func_numpy_sort_example_matches_torch():
    torch = pytest.importorskip("torch")
    from minigrad.func import grad

    res = {}
    for T, g in ((minigrad, grad), (torch, torch.func.grad)):
        NumpySort, _ = _numpy_sort_functions(T)
        x = T.tensor(A)
        sorted_, ind, ind_inv = T.vmap(NumpySort.apply, in_dims=(0, None))(x, 0)
        # per-sample gradients through the Function's own vmap rule (its backward is NumpyTake, also vmapped)
        per_sample = T.vmap(g(lambda r: (NumpySort.apply(r, 0)[0] * T.arange(4.0, dtype=r.dtype)).sum()))(x)
        res[T.__name__] = (sorted_, ind, ind_inv, per_sample)
    _same(res["minigrad"], res["torch"])


def test_extending_func_generated_rule_under_nested_grads_matches_torch():
    """MyCube of the same page: generate_vmap_rule, two outputs, a backward that uses both; vmap(grad(grad))."""
    torch = pytest.importorskip("torch")
    from minigrad.func import grad

    res = {}
    for T, g in ((minigrad, grad), (torch, torch.func.grad)):
        class MyCube(T.autograd.Function):
            generate_vmap_rule = True

            @staticmethod
            def forward(x):
                return x ** 3, 3 * x ** 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0], output[1])

            @staticmethod
            def backward(ctx, grad_output, grad_dx):
                x, dx = ctx.saved_tensors
                return grad_output * dx + grad_dx * 6 * x

        x = T.tensor(V)
        res[T.__name__] = (T.vmap(g(g(lambda t: MyCube.apply(t)[0])))(x), T.vmap(MyCube.apply)(x))
    _same(res["minigrad"], res["torch"])


def test_model_ensembling_with_functional_call_matches_torch():
    """PyTorch's model-ensembling recipe: the parameters of 4 models stacked, one vmap over functional_call."""
    torch = pytest.importorskip("torch")
    from minigrad.func import functional_call

    res = {}
    for T, fc in ((minigrad, functional_call), (torch, torch.func.functional_call)):
        rng = np.random.default_rng(4)
        models = [T.nn.Sequential(T.nn.Linear(3, 8), T.nn.ReLU(), T.nn.LayerNorm(8), T.nn.Linear(8, 2))
                  for _ in range(4)]
        with T.no_grad():
            for m in models:
                for p in m.parameters():
                    p.copy_(T.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype))
        params = {n: T.stack([dict(m.named_parameters())[n].detach() for m in models])
                  for n, _ in models[0].named_parameters()}
        x = T.tensor(rng.standard_normal((5, 3)), dtype=T.float64).float()
        res[T.__name__] = T.vmap(lambda p, x: fc(models[0], p, (x,)), in_dims=(0, None))(params, x).double()
    np.testing.assert_allclose(res["minigrad"].numpy(), res["torch"].numpy(), rtol=1e-5, atol=1e-6)


# --- more ops (beyond the op tables): return types, splits, norms, pads, per-sample masks and indices ------
A3 = RNG.standard_normal((3, 4, 5))
I2 = RNG.integers(0, 4, (3, 2))
M3 = RNG.random((3, 4, 5)) > 0.5
MORE = {
 'max-dim': lambda T, a, i, m: T.vmap(lambda x: x.max(0))(a),
 'sort': lambda T, a, i, m: T.vmap(lambda x: x.sort(1))(a),
 'topk': lambda T, a, i, m: T.vmap(lambda x: x.topk(2, 1))(a),
 'unbind': lambda T, a, i, m: T.vmap(lambda x: x.unbind(1))(a),
 'chunk': lambda T, a, i, m: T.vmap(lambda x: x.chunk(2, 1))(a),
 'split': lambda T, a, i, m: T.vmap(lambda x: x.split([2, 3], 1))(a),
 'flip-roll': lambda T, a, i, m: T.vmap(lambda x: x.flip(0).roll(1, 1))(a),
 'repeat': lambda T, a, i, m: T.vmap(lambda x: x.repeat(2, 1))(a),
 'tril': lambda T, a, i, m: T.vmap(lambda x: x.tril())(a),
 'logsumexp': lambda T, a, i, m: T.vmap(lambda x: x.logsumexp(1))(a),
 'norm': lambda T, a, i, m: T.vmap(lambda x: x.norm(dim=1) + x.norm())(a),
 'var-std': lambda T, a, i, m: T.vmap(lambda x: x.var(1) + x.std())(a),
 'layer_norm': lambda T, a, i, m: T.vmap(lambda x: T.nn.functional.layer_norm(x, (5,)))(a),
 'normalize': lambda T, a, i, m: T.vmap(lambda x: T.nn.functional.normalize(x, dim=1))(a),
 'pad': lambda T, a, i, m: T.vmap(lambda x: T.nn.functional.pad(x, (1, 2)))(a),
 'masked_fill-b': lambda T, a, i, m: T.vmap(lambda x, mm: x.masked_fill(mm, 0.0))(a, m),
 'index_select-b': lambda T, a, i, m: T.vmap(lambda x, ii: x.index_select(0, ii))(a, i),
 'scatter-b': lambda T, a, i, m: T.vmap(lambda x, ii: x.scatter(0, ii.unsqueeze(1).expand(2, 5), 1.0))(a, i),
 'diag': lambda T, a, i, m: T.vmap(lambda x: x[0, :4].diag() + x[:, :4].diagonal().sum())(a),
 'outer-kron': lambda T, a, i, m: T.vmap(lambda x: T.outer(x[0], x[1]))(a),
 'mT-matmul': lambda T, a, i, m: T.vmap(lambda x: x.mT @ x)(a),
 'bmm': lambda T, a, i, m: T.vmap(lambda x: T.bmm(x.unsqueeze(0), x.transpose(0, 1).unsqueeze(0)))(a),
 'einsum-ell': lambda T, a, i, m: T.vmap(lambda x: T.einsum('...j,kj->...k', x, x))(a),
 'gelu-silu': lambda T, a, i, m: T.vmap(lambda x: T.nn.functional.gelu(x) + T.nn.functional.silu(x))(a),
 'where-scalar': lambda T, a, i, m: T.vmap(lambda x: T.where(x > 0, x, 0.0))(a),
 'clamp-t': lambda T, a, i, m: T.vmap(lambda x: x.clamp(min=x[0]))(a),
 'cumsum-cummax': lambda T, a, i, m: T.vmap(lambda x: x.cumsum(1) + x.cummax(0)[0])(a),
 'argmax-all': lambda T, a, i, m: T.vmap(lambda x: x.argmax())(a),
 'amax-tuple': lambda T, a, i, m: T.vmap(lambda x: x.amax((0, 1)))(a),
 'prod': lambda T, a, i, m: T.vmap(lambda x: x.prod(1))(a),
 'expand_as': lambda T, a, i, m: T.vmap(lambda x: x[:1].expand_as(x) * x)(a),
 'view-flatten': lambda T, a, i, m: T.vmap(lambda x: x.flatten().view(2, 10).t())(a),
 'permute-cont': lambda T, a, i, m: T.vmap(lambda x: x.permute(1, 0).contiguous().view(-1))(a),
 'item-free': lambda T, a, i, m: T.vmap(lambda x: x.sum(0, keepdim=True) / x.shape[0])(a),
 'squeeze-unsq': lambda T, a, i, m: T.vmap(lambda x: x.unsqueeze(-1).squeeze())(a),
 'linear': lambda T, a, i, m: T.vmap(lambda x: T.nn.functional.linear(x, x[:2], x[0, :2]))(a),
 'cross_entropy-soft': lambda T, a, i, m: T.vmap(lambda x: T.nn.functional.cross_entropy(x, x.softmax(1)))(a),
 'bce-logits': lambda T, a, i, m: T.vmap(lambda x: T.nn.functional.binary_cross_entropy_with_logits(x, x.sigmoid()))(a),
}


@pytest.mark.parametrize("name", list(MORE))
def test_more_ops_match_torch(name):
    torch = pytest.importorskip("torch")
    fn = MORE[name]
    got = fn(minigrad, minigrad.tensor(A3), minigrad.tensor(I2), minigrad.tensor(M3))
    expected = fn(torch, torch.tensor(A3), torch.tensor(I2), torch.tensor(M3))
    if isinstance(expected, tuple):  # torch.return_types and tuples of tensors
        got, expected = tuple(got), tuple(expected)
    _same(got, expected)


def test_forward_mode_through_vmap_and_vmap_of_jvp_match_torch():
    torch = pytest.importorskip("torch")
    from minigrad.func import jvp

    res = {}
    for T, jvp_ in ((minigrad, jvp), (torch, torch.func.jvp)):
        x, t = T.tensor(A), T.tensor(np.ones_like(A))
        f = lambda r, T=T: (r.sin() * r.sum()).cumsum(0)  # noqa: E731
        outer = jvp_(lambda a: T.vmap(f)(a), (x,), (t,))[1]
        inner = T.vmap(lambda a, ta: jvp_(f, (a,), (ta,))[1])(x, t)
        res[T.__name__] = (outer, inner)
    _same(res["minigrad"], res["torch"])


def test_autograd_grad_is_grads_batched_matches_torch():
    torch = pytest.importorskip("torch")
    res = {}
    for T in (minigrad, torch):
        x = T.tensor(V, requires_grad=True)
        w = T.tensor(Bm, requires_grad=True)
        y = (x @ w).tanh()
        eye = T.eye(5, dtype=y.dtype)
        jac = T.autograd.grad(y, (x, w), eye, is_grads_batched=True, retain_graph=True)
        rows = T.autograd.grad(y, (x, w), eye, is_grads_batched=True, create_graph=True)
        res[T.__name__] = (jac, rows[0].sum().requires_grad)
    _same(res["minigrad"][0], res["torch"][0])
    assert res["minigrad"][1] == res["torch"][1]


INDEXING = {
    "none-then-batched": lambda T, x, i: x[None, i],
    "slice-none-batched": lambda T, x, i: x[:, None, i[0]],
    "batched-none-slice": lambda T, x, i: x[i, None, 1:3],
    "ellipsis-then-batched": lambda T, x, i: x[..., 1][i],
    "slice-then-batched": lambda T, x, i: x[1:, i[:1]],
    "two-batched": lambda T, x, i: x[i, i],
    "batched-setitem": lambda T, x, i: _put(x, i),
    "take-flat": lambda T, x, i: T.take(x, i * 5 - 1),
}


def _put(x, i):
    y = x.clone()
    y[i] = x[0] * 2
    return y


@pytest.mark.parametrize("name", list(INDEXING))
def test_per_sample_index_placement_matches_torch(name):
    """Where NumPy puts the dims of advanced indices depends on their positions; with per-sample indices the
    batch dim is one more advanced index: the results must land as in torch.vmap."""
    torch = pytest.importorskip("torch")
    fn = INDEXING[name]
    idx = np.array([[0, 1], [3, 3], [2, 0]])
    got = minigrad.vmap(lambda x, i: fn(minigrad, x, i))(minigrad.tensor(A3), minigrad.tensor(idx))
    expected = torch.vmap(lambda x, i: fn(torch, x, i))(torch.tensor(A3), torch.tensor(idx))
    _same(got, expected)


def test_numpy_function_without_rule_raises_not_loops():
    """A NumPy function with no batching rule is refused by name (never computed per sample in silence)."""
    from minigrad._functorch.batched import LOOPED

    class Unwrap(minigrad.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return minigrad.Tensor._wrap(np.unwrap(x._data))

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match=r"^vmap: minigrad has no batching rule for numpy\.unwrap"):
        minigrad.vmap(Unwrap.apply)(minigrad.ones(2, 3))
    assert LOOPED == {}
