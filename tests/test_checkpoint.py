"""torch.utils.checkpoint on minigrad: the same gradients as without it, recomputation in backward,
less memory (tracemalloc), the RNG state of the forward in the recomputation, PyTorch's warnings and errors."""
from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest

import minigrad
from _engines import LIBS
import minigrad.utils.checkpoint as mg_checkpoint



def _ck(T):
    if T is minigrad:
        return mg_checkpoint
    import torch.utils.checkpoint

    return torch.utils.checkpoint


def _params(T):
    w1 = T.tensor(np.linspace(-1, 1, 12).reshape(4, 3), requires_grad=True)
    w2 = T.tensor(np.linspace(-2, 1, 8).reshape(2, 4), requires_grad=True)
    x = T.tensor(np.linspace(0, 1, 6).reshape(2, 3), requires_grad=True)
    return w1, w2, x


@LIBS
@pytest.mark.parametrize("reentrant", [False, True])
def test_same_gradients_as_without_checkpoint(T, reentrant):
    w1, w2, x = _params(T)
    calls = []

    def f(a):
        calls.append(1)
        return (a @ w1.T).tanh() @ w2.T

    y = _ck(T).checkpoint(f, x, use_reentrant=reentrant)
    assert len(calls) == 1
    y.pow(2).sum().backward()
    assert len(calls) == 2  # recomputed once, in backward
    got = [t.grad.clone() for t in (w1, w2, x)]
    for t in (w1, w2, x):
        t.grad = None
    f(x).pow(2).sum().backward()
    for g, t in zip(got, (w1, w2, x)):
        np.testing.assert_allclose(g.tolist(), t.grad.tolist(), rtol=1e-12)
    assert y.grad_fn.name() == ("CheckpointFunctionBackward" if reentrant else "MmBackward0")


def test_gradients_and_node_names_match_pytorch():
    torch = pytest.importorskip("torch")
    for reentrant in (False, True):
        out = []
        for T in (minigrad, torch):
            w1, w2, x = _params(T)
            y = _ck(T).checkpoint(lambda a: (a @ w1.T).tanh() @ w2.T, x, use_reentrant=reentrant)
            y.pow(2).sum().backward()
            out.append((y.grad_fn.name(), [t.grad.tolist() for t in (w1, w2, x)]))
        assert out[0][0] == out[1][0]
        np.testing.assert_allclose(np.concatenate([np.ravel(g) for g in out[0][1]]),
                                   np.concatenate([np.ravel(g) for g in out[1][1]]), rtol=1e-12)


def test_non_reentrant_works_with_autograd_grad_and_double_backward():
    w1, w2, x = _params(minigrad)
    y = mg_checkpoint.checkpoint(lambda a: (a @ w1.T).tanh() @ w2.T, x, use_reentrant=False)
    (g,) = minigrad.autograd.grad(y.sum(), w1, create_graph=True)
    (gg,) = minigrad.autograd.grad(g.pow(2).sum(), x)
    y2 = (x @ w1.T).tanh() @ w2.T
    (g2,) = minigrad.autograd.grad(y2.sum(), w1, create_graph=True)
    (gg2,) = minigrad.autograd.grad(g2.pow(2).sum(), x)
    np.testing.assert_allclose(g.tolist(), g2.tolist(), rtol=1e-12)
    np.testing.assert_allclose(gg.tolist(), gg2.tolist(), rtol=1e-12)


@LIBS
def test_retain_graph_recomputes_at_each_backward(T):
    w1, w2, x = _params(T)
    calls = []

    def f(a):
        calls.append(1)
        return (a @ w1.T).tanh() @ w2.T

    y = _ck(T).checkpoint(f, x, use_reentrant=False).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert len(calls) == 3
    np.testing.assert_allclose(x.grad.tolist(), (2 * _plain_grad(T)).tolist(), rtol=1e-12)


def _plain_grad(T):
    w1, w2, x = _params(T)
    ((x @ w1.T).tanh() @ w2.T).sum().backward()
    return x.grad


@LIBS
@pytest.mark.parametrize("reentrant", [False, True])
def test_the_recomputation_draws_the_same_dropout_mask(T, reentrant):
    T.manual_seed(0)
    x = T.ones(64, dtype=T.float64, requires_grad=True)

    def f(a):
        return T.nn.functional.dropout(a * 2, 0.5, training=True)

    y = _ck(T).checkpoint(f, x, use_reentrant=reentrant)
    T.randn(10)  # the RNG moves on before backward
    y.sum().backward()
    assert T.equal(x.grad, y.detach())  # d(sum)/dx is the mask x 2 / (1 - p) = y itself
    # preserve_rng_state=False: the recomputation draws the next mask, not the forward's
    x.grad = None
    y = _ck(T).checkpoint(f, x, use_reentrant=reentrant, preserve_rng_state=False)
    y.sum().backward()
    assert not T.equal(x.grad, y.detach())


def test_the_rng_outside_is_left_where_it_was():
    minigrad.manual_seed(3)
    x = minigrad.ones(8, dtype=minigrad.float64, requires_grad=True)
    y = mg_checkpoint.checkpoint(lambda a: minigrad.nn.functional.dropout(a, 0.5), x, use_reentrant=False)
    after_forward = minigrad.randn(4)
    minigrad.manual_seed(3)
    minigrad.nn.functional.dropout(minigrad.ones(8), 0.5)
    minigrad.randn(4)
    expected_next = minigrad.randn(4)
    minigrad.manual_seed(3)
    minigrad.nn.functional.dropout(minigrad.ones(8), 0.5)
    assert minigrad.equal(minigrad.randn(4), after_forward)
    y.sum().backward()  # recomputes with the forward's state, then puts the outside state back
    assert minigrad.equal(minigrad.randn(4), expected_next)


@LIBS
def test_use_reentrant_not_passed_warns_as_pytorch(T):
    x = T.ones(3, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y = _ck(T).checkpoint(lambda a: a.sin(), x)
        _ck(T).checkpoint_sequential([lambda a: a.sin(), lambda a: a.cos()], 2, x)
    msgs = [str(m.message) for m in w]
    assert msgs[0].startswith("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
                              "Starting in PyTorch 2.9")
    assert msgs[1].startswith("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
                              "passed explicitly.")
    assert all(m.category is UserWarning for m in w)
    assert y.grad_fn.name() == "CheckpointFunctionBackward"  # the default is still the reentrant variant


def test_warning_texts_are_pytorchs():
    torch = pytest.importorskip("torch")
    import torch.utils.checkpoint as tc

    texts = []
    for ck, T in ((mg_checkpoint, minigrad), (tc, torch)):
        x = T.ones(3, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ck.checkpoint(lambda a: a.sin(), x)
            ck.checkpoint_sequential([lambda a: a.sin(), lambda a: a.cos()], 2, x)
            ck.checkpoint(lambda a: a.sin(), T.ones(3), use_reentrant=True)
            ck.checkpoint(lambda a: a.sin(), T.ones(3), use_reentrant=False)  # no warning for this one
        texts.append([str(m.message) for m in w])
    assert texts[0] == texts[1]


@LIBS
def test_errors_as_pytorch(T):
    ck = _ck(T)
    x = T.ones(3, requires_grad=True)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        ck.checkpoint(lambda a: a, x, use_reentrant=True, foo=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        ck.checkpoint(lambda a: a, x, use_reentrant=False, foo=1)  # passed on to the function
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        ck.checkpoint(lambda a: a, x, use_reentrant=True, debug=True)
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        ck.checkpoint(lambda a: a, x, use_reentrant=False, determinism_check="bogus")


@LIBS
def test_a_recomputation_that_saves_other_shapes_is_a_checkpoint_error(T):
    x = T.ones(4, requires_grad=True)
    calls = []

    def f(a):
        calls.append(1)
        return (a[:2] if len(calls) > 1 else a).sin().sum()

    y = _ck(T).checkpoint(f, x, use_reentrant=False)
    with pytest.raises(_ck(T).CheckpointError, match="Recomputed values for the following tensors have different "
                                                       "metadata than during the forward pass"):
        y.backward()


@LIBS
def test_checkpoint_sequential_gives_the_same_gradients(T):
    T.manual_seed(0)
    model = T.nn.Sequential(T.nn.Linear(3, 5), T.nn.Tanh(), T.nn.Linear(5, 5), T.nn.Tanh(), T.nn.Linear(5, 1))
    x = T.tensor(np.linspace(-1, 1, 12).reshape(4, 3), dtype=T.float32)
    _ck(T).checkpoint_sequential(model, 2, x, use_reentrant=False).sum().backward()
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).sum().backward()
    for g, p in zip(got, model.parameters()):
        np.testing.assert_allclose(g.tolist(), p.grad.tolist(), rtol=1e-6)


@LIBS
def test_no_grad_runs_the_function_only(T):
    x = T.ones(3, requires_grad=True)
    with T.no_grad():
        y = _ck(T).checkpoint(lambda a: a.exp(), x, use_reentrant=False)
    assert not y.requires_grad


def _peak_of_step(model, x, blocks: int | None) -> int:
    model.zero_grad(set_to_none=True)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        if blocks is None:
            y = model(x)
        else:
            n = len(model) // blocks
            y = x
            for k in range(0, len(model), n):
                y = mg_checkpoint.checkpoint(model[k:k + n], y, use_reentrant=False)
        y.pow(2).mean().backward()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_checkpointing_a_deep_mlp_needs_much_less_memory_for_the_same_gradients():
    """64 Linear+Tanh pairs, batch 512 x 64 float64 activations (256 KiB each). Without checkpointing the
    step keeps every layer's activations until backward (~64 of them); with 8 checkpointed blocks it keeps
    the 8 blocks' inputs and, during backward, one block's recomputed activations."""
    minigrad.manual_seed(0)
    layers = []
    for _ in range(64):
        layers += [minigrad.nn.Linear(64, 64), minigrad.nn.Tanh()]
    model = minigrad.nn.Sequential(*layers).double()
    x = minigrad.randn(512, 64, dtype=minigrad.float64)
    plain = _peak_of_step(model, x, None)
    g_plain = [p.grad.clone() for p in model.parameters()]
    checkpointed = _peak_of_step(model, x, 8)
    g_ck = [p.grad for p in model.parameters()]
    for a, b in zip(g_plain, g_ck):
        np.testing.assert_allclose(a.tolist(), b.tolist(), rtol=1e-10, atol=1e-300)
    activation = 512 * 64 * 8
    assert plain > 60 * activation  # the baseline really holds the activations
    assert checkpointed < 0.5 * plain, (checkpointed / plain)  # measured: 0.40
