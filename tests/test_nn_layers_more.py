"""nn layers and functions of issue 12: LayerNorm, BatchNorm1d (running statistics, train / eval), Embedding,
Dropout, the containers, L1 / SmoothL1 / Huber losses, one_hot, pad, normalize, cosine_similarity:
gradcheck, gradgradcheck, PyTorch as an oracle, and module behaviour compared with PyTorch."""
from __future__ import annotations

import numpy as np
import pytest
from optable import Row, check_error_matches_torch, check_gradcheck, check_gradgradcheck, check_oracle, params

import minigrad
from minigrad import nn


def Fn(T):
    return T.nn.functional


def t(T, arr, dtype=None):
    return T.tensor(np.asarray(arr), dtype=dtype)


ROWS = [
    Row("layer_norm", lambda T, x: Fn(T).layer_norm(x, (4,)), [("n", (3, 4))]),
    Row("layer_norm-affine", lambda T, x, w, b: Fn(T).layer_norm(x, (3, 4), w, b), [("n", (2, 3, 4)), ("n", (3, 4)), ("n", (3, 4))]),
    Row("layer_norm-eps", lambda T, x, w: Fn(T).layer_norm(x, [4], w, eps=0.1), [("n", (5, 4)), ("n", (4,))]),
    Row("batch_norm-train", lambda T, x, w, b: Fn(T).batch_norm(x, None, None, w, b, training=True),
        [("n", (5, 3)), ("n", (3,)), ("n", (3,))]),
    Row("batch_norm-train-3d", lambda T, x: Fn(T).batch_norm(x, None, None, training=True), [("n", (3, 2, 4))]),
    Row("batch_norm-eval", lambda T, x, w, b: Fn(T).batch_norm(x, t(T, [0.5, -1.0, 0.0], x.dtype),
                                                              t(T, [2.0, 0.5, 1.0], x.dtype), w, b),
        [("n", (4, 3)), ("n", (3,)), ("n", (3,))]),
    Row("embedding", lambda T, w: Fn(T).embedding(t(T, [[0, 2, 2], [4, 1, 0]]), w), [("n", (5, 3))]),
    # padding_idx: the row is used in forward but gets no gradient, on purpose (so no gradcheck; PyTorch agrees)
    Row("embedding-padding", lambda T, w: Fn(T).embedding(t(T, [0, 2, 3, 2]), w, padding_idx=2), [("n", (4, 3))],
        grad=False),
    Row("l1_loss", lambda T, a, b: Fn(T).l1_loss(a, b), [("n", (3, 4)), ("n", (3, 4))]),
    Row("l1_loss-sum", lambda T, a, b: Fn(T).l1_loss(a, b, reduction="sum"), [("n", (5,)), ("N", (5,))]),
    Row("smooth_l1_loss", lambda T, a, b: Fn(T).smooth_l1_loss(a * 2, b, beta=0.7), [("n", (3, 4)), ("n", (3, 4))]),
    Row("huber_loss", lambda T, a, b: Fn(T).huber_loss(a * 2, b, delta=0.8, reduction="none"), [("n", (3, 4)), ("n", (3, 4))]),
    Row("pad", lambda T, x: Fn(T).pad(x, (1, 2)), [("n", (3, 4))]),
    Row("pad-2d-value", lambda T, x: Fn(T).pad(x, (1, 0, 2, 1), value=0.5), [("n", (2, 3, 4))]),
    Row("pad-negative-crops", lambda T, x: Fn(T).pad(x, (-1, 2, 0, -1)), [("n", (3, 4))]),
    Row("normalize", lambda T, x: Fn(T).normalize(x), [("n", (3, 4))]),
    Row("normalize-p1-dim0", lambda T, x: Fn(T).normalize(x, p=1, dim=0), [("a", (3, 4))]),
    Row("cosine_similarity", lambda T, a, b: Fn(T).cosine_similarity(a, b), [("n", (3, 4)), ("n", (3, 4))]),
    Row("LayerNorm-module", lambda T, x: T.nn.LayerNorm(4, dtype=x.dtype)(x), [("n", (3, 4))]),
]


@pytest.mark.parametrize("row", params(ROWS, "grad"))
def test_gradcheck(row):
    check_gradcheck(row)


@pytest.mark.parametrize("row", params(ROWS, "gradgrad"))
def test_gradgradcheck(row):
    check_gradgradcheck(row)


@pytest.mark.parametrize("row", params(ROWS, "oracle"))
def test_matches_torch(row):
    check_oracle(row)


def _batchnorm_run(T, momentum):
    """Three training steps and one evaluation of BatchNorm1d; returns outputs, running stats and gradients."""
    T.manual_seed(0)
    bn = T.nn.BatchNorm1d(3, momentum=momentum)
    rng = np.random.default_rng(3)
    outs = []
    for _ in range(3):
        x = T.tensor(rng.standard_normal((6, 3)) * 2 + 1, dtype=T.float32, requires_grad=True)
        y = bn(x)
        (y * T.tensor(np.arange(18.0).reshape(6, 3), dtype=T.float32)).sum().backward()
        outs.append((y.detach().numpy().copy(), x.grad.numpy().copy(), bn.weight.grad.numpy().copy()))
    bn.eval()
    ev = bn(T.tensor(rng.standard_normal((4, 3)), dtype=T.float32)).detach().numpy()
    return outs, bn.running_mean.numpy().copy(), bn.running_var.numpy().copy(), int(bn.num_batches_tracked), ev


@pytest.mark.parametrize("momentum", [0.1, None])
def test_batchnorm_training_and_eval_match_torch(momentum):
    torch = pytest.importorskip("torch")
    mine, theirs = _batchnorm_run(minigrad, momentum), _batchnorm_run(torch, momentum)
    for (my, mg, mw), (ty, tg, tw) in zip(mine[0], theirs[0]):
        np.testing.assert_allclose(my, ty, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(mg, tg, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(mw, tw, rtol=1e-4, atol=1e-4)
    for m, th in zip(mine[1:], theirs[1:]):
        np.testing.assert_allclose(m, th, rtol=1e-5, atol=1e-6)


def test_dropout_train_and_eval():
    minigrad.manual_seed(0)
    x = minigrad.ones(2000, requires_grad=True)
    d = nn.Dropout(0.25)
    y = d(x)
    kept = y.detach().numpy() != 0
    assert 0.7 < kept.mean() < 0.8 and np.allclose(y.detach().numpy()[kept], 1 / 0.75)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy())  # the gradient is the same mask, scaled
    assert y.grad_fn.name() == "MulBackward0"  # as in PyTorch 2.13
    d.eval()
    assert d(x) is x
    assert nn.functional.dropout(x, 1.0).detach().numpy().max() == 0.0
    minigrad.manual_seed(0)
    again = nn.Dropout(0.25)(minigrad.ones(2000))
    assert np.array_equal(again.numpy(), y.detach().numpy())  # seeded: reproducible


def test_embedding_module():
    minigrad.manual_seed(1)
    e = nn.Embedding(10, 3, padding_idx=0)
    assert e.weight.shape == (10, 3) and e.weight[0].tolist() == [0.0, 0.0, 0.0]
    out = e(minigrad.tensor([[0, 3], [3, 9]]))
    assert out.shape == (2, 2, 3)
    out.sum().backward()
    assert e.weight.grad[0].tolist() == [0.0, 0.0, 0.0] and e.weight.grad[3].tolist() == [2.0, 2.0, 2.0]
    pre = nn.Embedding.from_pretrained(minigrad.eye(3))
    assert not pre.weight.requires_grad and pre(minigrad.tensor([2])).tolist() == [[0.0, 0.0, 1.0]]


def test_containers_register_their_entries():
    d = nn.ModuleDict({"a": nn.Linear(2, 3), "b": nn.ReLU()})
    d["c"] = nn.Linear(3, 1)
    assert list(d.keys()) == ["a", "b", "c"] and "b" in d and len(d) == 3
    assert [n for n, _ in d.named_parameters()] == ["a.weight", "a.bias", "c.weight", "c.bias"]
    pl = nn.ParameterList([nn.Parameter(minigrad.ones(2)), minigrad.zeros(1)])
    assert len(list(pl.parameters())) == 2 and isinstance(pl[1], nn.Parameter)
    pd = nn.ParameterDict({"w": nn.Parameter(minigrad.ones(2))})
    assert list(pd.state_dict()) == ["w"]


@pytest.mark.parametrize("module", [
    "nn.LayerNorm(3)", "nn.LayerNorm((2, 3), elementwise_affine=False)", "nn.LayerNorm(4, bias=False)",
    "nn.BatchNorm1d(3)", "nn.BatchNorm1d(3, affine=False, track_running_stats=False)", "nn.Dropout()",
    "nn.Dropout(0.2, inplace=True)", "nn.Embedding(10, 3)", "nn.Embedding(10, 3, padding_idx=0)", "nn.L1Loss()",
    "nn.SmoothL1Loss()", "nn.HuberLoss()", "nn.ModuleDict({'a': nn.ReLU()})",
    "nn.ParameterList([nn.Parameter(torch.ones(1)), nn.Parameter(torch.ones(2, 3))])",
    "nn.Sequential(nn.Linear(2, 4), nn.LayerNorm(4), nn.GELU(), nn.Dropout(0.1), nn.Linear(4, 1))",
])
def test_module_repr_matches_torch(module):
    torch = pytest.importorskip("torch")
    assert repr(eval(module, {"nn": nn, "torch": minigrad})) == repr(eval(module, {"nn": torch.nn, "torch": torch}))


def test_state_dict_keys_match_torch():
    torch = pytest.importorskip("torch")
    for make in ("nn.BatchNorm1d(3)", "nn.LayerNorm(3)", "nn.Embedding(4, 2)"):
        assert list(eval(make, {"nn": nn}).state_dict()) == list(eval(make, {"nn": torch.nn}).state_dict())


SAME_AS_TORCH = [
    "F.one_hot(torch.tensor([0, 2]))", "F.one_hot(torch.tensor([[1], [0]]), 3)", "F.pad(torch.ones(2, 2), (1, 1), value=2.)",
    "F.normalize(torch.tensor([[3., 4.], [0., 0.]]))", "torch.nn.BatchNorm1d(3).num_batches_tracked",
]


@pytest.mark.parametrize("source", SAME_AS_TORCH)
def test_results_match_torch(source):
    torch = pytest.importorskip("torch")
    mine = eval(source, {"torch": minigrad, "F": minigrad.nn.functional})
    theirs = eval(source, {"torch": torch, "F": torch.nn.functional})
    assert repr(mine) == repr(theirs)


ERRORS = [
    "F.one_hot(torch.tensor([0, 2]), 2)", "F.one_hot(torch.tensor([0, -1]))", "F.one_hot(torch.tensor([0., 1.]))",
    "F.layer_norm(torch.randn(4, 3), (4,))", "nn.BatchNorm1d(3)(torch.randn(1, 3))",
    "nn.BatchNorm1d(3)(torch.randn(2, 4))", "nn.Embedding(10, 3)(torch.tensor([10]))",
    "nn.Embedding(10, 3)(torch.tensor([1.]))", "F.pad(torch.randn(4, 3), (1,))",
    "F.pad(torch.randn(4, 3), (1, 1, 1, 1, 1, 1))", "F.dropout(torch.randn(3), 1.5)", "nn.Dropout(1.5)",
    "nn.BatchNorm1d(3)(torch.randn(2, 3, 4, 5))", "nn.LayerNorm(3)(torch.randn(2, 3, dtype=torch.float64))",
    "F.batch_norm(torch.randn(4, 3), torch.zeros(3, dtype=torch.float64), torch.ones(3))",
]


@pytest.mark.parametrize("source", ERRORS)
def test_errors_match_torch(source):
    check_error_matches_torch(source)
