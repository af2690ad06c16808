"""Property tests (hypothesis): random shapes and random small graphs, checked against
finite differences; broadcasting gradients are summed back to each input's shape."""
from __future__ import annotations

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import minigrad  # noqa: E402
from minigrad.autograd import Function, enable_grad, gradcheck, gradgradcheck  # noqa: E402

SETTINGS = settings(max_examples=50, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])

shapes = st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple)
seeds = st.integers(0, 2 ** 32 - 1)


def rand64(shape, seed, requires_grad=True):
    rng = np.random.default_rng(seed)
    return minigrad.tensor(rng.standard_normal(shape), dtype=minigrad.float64, requires_grad=requires_grad)


def recording(fn):
    """Grad mode on inside fn (see test_ops_gradcheck: makes gradgradcheck's finite differences real)."""

    def wrapped(*args):
        with enable_grad():
            return fn(*args)

    return wrapped


# Smooth unary ops, defined for every real input (no kinks, no poles).
UNARY = {
    "sin": lambda x: x.sin(),
    "cos": lambda x: x.cos(),
    "tanh": lambda x: x.tanh(),
    "sigmoid": lambda x: x.sigmoid(),
    "square": lambda x: x * x,
    "exp_tanh": lambda x: x.tanh().exp(),
    "log1p_sq": lambda x: (1 + x * x).log(),
    "sqrt1p_sq": lambda x: (x * x + 1).sqrt(),
    "scale": lambda x: x * 1.7 - 0.3,
    "neg": lambda x: -x,
    "rdiv": lambda x: 1.0 / (x * x + 1.0),
    "pow3": lambda x: x ** 3,
}
BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b * b + 1.0),
    "pow": lambda a, b: (a * a + 1.0) ** b.tanh(),
}


def shape_op(x, rng):
    """A random shape-changing op applicable to x (views, reductions, softmax), chosen by rng."""
    options = ["flatten", "flip", "unsqueeze_expand", "cat_self"]
    if x.ndim >= 1:
        options += ["sum_dim", "mean_dim", "softmax", "log_softmax", "index"]
    if x.ndim >= 2:
        options += ["transpose", "matmul_self"]
    op = options[rng.integers(len(options))]
    dim = int(rng.integers(-x.ndim, x.ndim)) if x.ndim else 0
    if op == "flatten":
        return x.reshape(-1)
    if op == "flip":
        return x.reshape(-1)[::-1]
    if op == "unsqueeze_expand":
        return x.unsqueeze(0).expand(2, *x.shape)
    if op == "cat_self":
        y = x.reshape(-1)
        return minigrad.cat([y, y * 2])
    if op == "sum_dim":
        return x.sum(dim, keepdim=bool(rng.integers(2)))
    if op == "mean_dim":
        return x.mean(dim, keepdim=bool(rng.integers(2)))
    if op == "softmax":
        return x.softmax(dim)
    if op == "log_softmax":
        return x.log_softmax(dim)
    if op == "index":
        return x[rng.integers(0, x.shape[0], size=int(rng.integers(1, 5))).tolist()]  # repeats allowed
    if op == "transpose":
        return x.transpose(0, -1)
    if op == "matmul_self":
        return x @ x.transpose(-1, -2)
    raise AssertionError(op)


def _broadcasts_to(small: tuple, big: tuple) -> bool:
    if len(small) > len(big):
        return False
    return all(s == 1 or s == b for s, b in zip(small[::-1], big[::-1]))


def build_program(data, n_inputs):
    """Draw a random program (1-5 steps over a pool of values); returns fn(*inputs) and its steps.

    The program is deterministic (gradcheck calls it many times): shape steps carry their own seed.
    """
    steps = []
    n_steps = data.draw(st.integers(1, 5), label="n_steps")
    for _ in range(n_steps):
        kind = data.draw(st.sampled_from(["unary", "binary", "shape"]), label="kind")
        if kind == "unary":
            steps.append(("unary", data.draw(st.sampled_from(sorted(UNARY)), label="unary")))
        elif kind == "binary":
            steps.append(("binary", data.draw(st.sampled_from(sorted(BINARY)), label="binary"),
                          data.draw(st.integers(0, 100), label="other")))
        else:
            steps.append(("shape", data.draw(st.integers(0, 2 ** 16), label="shape_seed")))

    def program(*inputs):
        pool = list(inputs)
        cur = pool[0]
        for step in steps:
            if step[0] == "unary":
                cur = UNARY[step[1]](cur)
            elif step[0] == "binary":
                other = pool[step[2] % len(pool)]
                if _broadcasts_to(tuple(other.shape), tuple(cur.shape)):
                    cur = BINARY[step[1]](cur, other)
                else:
                    cur = BINARY[step[1]](cur, other.sum())  # shapes diverged: combine with a scalar of it
            else:
                cur = shape_op(cur, np.random.default_rng(step[1]))
            pool.append(cur)
        return cur

    return program, steps


# --- random shapes -------------------------------------------------------------------------------------------
@SETTINGS
@given(shape=shapes, seed=seeds, name=st.sampled_from(sorted(UNARY)))
def test_unary_ops_on_random_shapes(shape, seed, name):
    x = rand64(shape, seed)
    assert gradcheck(UNARY[name], (x,))


@SETTINGS
@given(shape=shapes, seed=seeds, name=st.sampled_from(sorted(BINARY)))
def test_binary_ops_on_random_shapes(shape, seed, name):
    a, b = rand64(shape, seed), rand64(shape, seed + 1)
    assert gradcheck(BINARY[name], (a, b))


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), seed=seeds, data=st.data())
def test_reductions_on_random_shapes(shape, seed, data):
    x = rand64(shape, seed)
    ndim = len(shape)
    dims = tuple(sorted(data.draw(st.sets(st.integers(0, ndim - 1), min_size=1), label="dims")))
    keepdim = data.draw(st.booleans(), label="keepdim")
    assert gradcheck(lambda t: t.sum(dims, keepdim=keepdim), (x,))
    assert gradcheck(lambda t: t.mean(dims, keepdim=keepdim), (x,))
    assert gradcheck(lambda t: t.amax(dims, keepdim=keepdim), (x,))  # continuous data: no ties
    d = dims[0]
    assert gradcheck(lambda t: t.softmax(d), (x,))
    assert gradcheck(lambda t: t.max(d, keepdim=keepdim)[0], (x,))


# --- random small graphs -----------------------------------------------------------------------------------
@SETTINGS
@given(shape=st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple), seed=seeds,
       n_inputs=st.integers(1, 3), data=st.data())
def test_random_graphs_match_finite_differences(shape, seed, n_inputs, data):
    program, _ = build_program(data, n_inputs)
    inputs = tuple(rand64(shape, seed + i) for i in range(n_inputs))
    out = program(*inputs)
    assert isinstance(out, minigrad.Tensor)
    assert gradcheck(program, inputs)


@settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple), seed=seeds, data=st.data())
def test_random_graphs_second_order(shape, seed, data):
    program, _ = build_program(data, 2)
    inputs = (rand64(shape, seed), rand64(shape, seed + 1))
    assert gradgradcheck(recording(program), inputs)


@SETTINGS
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=2).map(tuple), seed=seeds, data=st.data())
def test_backward_and_autograd_grad_agree(shape, seed, data):
    program, _ = build_program(data, 2)
    a, b = rand64(shape, seed), rand64(shape, seed + 1)
    out = program(a, b).sum()
    ga, gb = minigrad.autograd.grad(out, [a, b], retain_graph=True, allow_unused=True)
    out.backward()
    for t, g in ((a, ga), (b, gb)):
        if g is None:
            assert t.grad is None
        else:
            np.testing.assert_allclose(t.grad.detach().numpy(), g.detach().numpy(), rtol=1e-12)


# --- broadcasting: gradients are summed back to each input's shape (sum_to) ---------------------------------
@st.composite
def broadcast_pair(draw):
    out = draw(st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple))

    def shrink():
        n = draw(st.integers(0, len(out)))
        tail = out[len(out) - n:]
        return tuple(1 if draw(st.booleans()) else s for s in tail)

    return shrink(), shrink(), out


def numpy_sum_to(g: np.ndarray, shape: tuple) -> np.ndarray:
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead))) if lead else g
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1)
    return g.sum(axis=axes, keepdims=True) if axes else g


@SETTINGS
@given(shapes3=broadcast_pair(), seed=seeds)
def test_broadcast_gradients_are_summed_to_input_shape(shapes3, seed):
    sa, sb, _ = shapes3
    a, b = rand64(sa, seed), rand64(sb, seed + 1)
    y = a * b
    out_shape = np.broadcast_shapes(sa, sb)
    assert y.shape == out_shape
    w = np.random.default_rng(seed).standard_normal(out_shape)
    y.backward(minigrad.tensor(w, dtype=minigrad.float64))
    assert a.grad.shape == sa and b.grad.shape == sb
    an, bn = a.detach().numpy(), b.detach().numpy()
    np.testing.assert_allclose(a.grad.numpy(), numpy_sum_to(w * np.broadcast_to(bn, out_shape), sa), atol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), numpy_sum_to(w * np.broadcast_to(an, out_shape), sb), atol=1e-12)


class OutputShapedGrads(Function):
    """A custom add whose backward returns the output-shaped gradient for both inputs."""

    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, g):
        return g, g


@SETTINGS
@given(shapes3=broadcast_pair(), seed=seeds)
def test_custom_backward_output_shaped_gradient_is_reduced(shapes3, seed):
    sa, sb, _ = shapes3
    a, b = rand64(sa, seed), rand64(sb, seed + 1)
    y = OutputShapedGrads.apply(a, b)
    w = np.random.default_rng(seed).standard_normal(y.shape)
    y.backward(minigrad.tensor(w, dtype=minigrad.float64))
    np.testing.assert_allclose(a.grad.numpy(), numpy_sum_to(w, sa), atol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), numpy_sum_to(w, sb), atol=1e-12)
    assert gradcheck(OutputShapedGrads.apply, (a, b))


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), seed=seeds, data=st.data())
def test_expand_then_reduce_is_transpose(shape, seed, data):
    """<expand(x), w> == <x, sum_to(w)>: expand's backward is exactly the adjoint of expand."""
    x = rand64(shape, seed)
    extra = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2), label="extra"))
    target = extra + tuple(s * 0 + (data.draw(st.integers(1, 3)) if s == 1 else s) for s in shape)
    w = np.random.default_rng(seed + 7).standard_normal(target)
    y = x.expand(*target)
    (y * minigrad.tensor(w, dtype=minigrad.float64)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), numpy_sum_to(w, shape), atol=1e-12)
