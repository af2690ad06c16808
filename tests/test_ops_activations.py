"""Activations and the loss on logits (nn.functional and nn modules): gradcheck, gradgradcheck
and PyTorch as an oracle for each (tests/optable.py), then PyTorch's edge behaviour, errors and reprs."""
from __future__ import annotations

import numpy as np
import pytest
from optable import Row, check_error_matches_torch, check_gradcheck, check_gradgradcheck, check_oracle, params

import minigrad
import minigrad.nn.functional as F
from minigrad import nn


def Fn(T):
    return T.nn.functional


def t(T, arr):
    return T.tensor(np.asarray(arr, dtype=np.float64))


W34 = np.linspace(0.2, 1.8, 12).reshape(3, 4)
PW4 = np.array([0.5, 1.0, 2.0, 3.5])

ROWS = [
    Row("silu", lambda T, x: Fn(T).silu(x), [("n", (3, 4))]),
    Row("silu-big", lambda T, x: Fn(T).silu(x), [("big", (10,))]),
    Row("gelu", lambda T, x: Fn(T).gelu(x), [("n", (3, 4))]),
    Row("gelu-wide", lambda T, x: Fn(T).gelu(x * 3), [("n", (20,))]),
    Row("gelu-tanh", lambda T, x: Fn(T).gelu(x, approximate="tanh"), [("n", (3, 4))]),
    Row("leaky_relu", lambda T, x: Fn(T).leaky_relu(x), [("a", (3, 4))]),
    Row("leaky_relu-slope", lambda T, x: Fn(T).leaky_relu(x, 0.2), [("a", (5,))]),
    Row("elu", lambda T, x: Fn(T).elu(x), [("a", (3, 4))]),
    Row("elu-alpha", lambda T, x: Fn(T).elu(x, alpha=0.5), [("a", (6,))]),
    Row("celu", lambda T, x: Fn(T).celu(x, alpha=2.0), [("a", (6,))]),
    Row("selu", lambda T, x: Fn(T).selu(x), [("a", (2, 3))]),
    Row("softplus", lambda T, x: Fn(T).softplus(x), [("n", (3, 4))]),
    Row("softplus-beta-threshold", lambda T, x: Fn(T).softplus(x * 4, beta=2.0, threshold=3.0), [("a", (12,))]),
    Row("softplus-big", lambda T, x: Fn(T).softplus(x), [("big", (10,))]),
    Row("hardtanh", lambda T, x: Fn(T).hardtanh(x * 2), [("a", (3, 4))]),
    Row("hardtanh-bounds", lambda T, x: Fn(T).hardtanh(x, -0.5, 0.8), [("a", (3, 4))]),
    Row("relu6", lambda T, x: Fn(T).relu6(x * 5), [("a", (3, 4))]),
    Row("logsigmoid", lambda T, x: Fn(T).logsigmoid(x), [("n", (3, 4))]),
    Row("logsigmoid-big", lambda T, x: Fn(T).logsigmoid(x), [("big", (10,))]),
    Row("mish", lambda T, x: Fn(T).mish(x), [("n", (3, 4))]),
    Row("softsign", lambda T, x: Fn(T).softsign(x), [("n", (3, 4))]),
    Row("erf", lambda T, x: T.erf(x * 2), [("n", (3, 4))]),
    Row("erfc", lambda T, x: T.erfc(x), [("n", (3, 4))]),
    Row("modules", lambda T, x: T.nn.Sequential(T.nn.GELU(), T.nn.SiLU(), T.nn.LeakyReLU(0.1), T.nn.ELU(),
                                                T.nn.Softplus(), T.nn.Hardtanh(), T.nn.Mish(), T.nn.CELU(),
                                                T.nn.SELU(), T.nn.ReLU6(), T.nn.LogSigmoid(), T.nn.Softsign())(x),
        [("n", (3, 4))]),
    # binary cross-entropy on logits
    Row("bce_logits", lambda T, x, y: Fn(T).binary_cross_entropy_with_logits(x, y), [("n", (3, 4)), ("y01", (3, 4))]),
    Row("bce_logits-target-grad", lambda T, x, y: Fn(T).binary_cross_entropy_with_logits(x, y),
        [("n", (3, 4)), ("u", (3, 4))]),
    Row("bce_logits-sum", lambda T, x, y: Fn(T).binary_cross_entropy_with_logits(x, y, reduction="sum"),
        [("n", (5,)), ("u", (5,))]),
    Row("bce_logits-none", lambda T, x, y: Fn(T).binary_cross_entropy_with_logits(x, y, reduction="none"),
        [("n", (2, 3)), ("u", (2, 3))]),
    Row("bce_logits-weight", lambda T, x, y: Fn(T).binary_cross_entropy_with_logits(x, y, weight=t(T, W34)),
        [("n", (3, 4)), ("u", (3, 4))]),
    Row("bce_logits-weight-bcast", lambda T, x, y: Fn(T).binary_cross_entropy_with_logits(
        x, y, weight=t(T, PW4), reduction="sum"), [("n", (3, 4)), ("u", (3, 4))]),
    Row("bce_logits-pos_weight", lambda T, x, y: Fn(T).binary_cross_entropy_with_logits(x, y, pos_weight=t(T, PW4)),
        [("n", (3, 4)), ("u", (3, 4))]),
    Row("bce_logits-both-none", lambda T, x, y: Fn(T).binary_cross_entropy_with_logits(
        x, y, weight=t(T, W34), pos_weight=t(T, PW4), reduction="none"), [("n", (3, 4)), ("u", (3, 4))]),
    Row("bce_logits-extreme", lambda T, x, y: Fn(T).binary_cross_entropy_with_logits(x, y, pos_weight=t(T, PW4[:2])),
        [("big", (5, 2)), ("u", (5, 2))]),
    Row("bce_logits-module", lambda T, x, y: T.nn.BCEWithLogitsLoss(weight=t(T, W34), pos_weight=t(T, PW4))(x, y),
        [("n", (3, 4)), ("y01", (3, 4))]),
    Row("bce_logits-0d", lambda T, x, y: Fn(T).binary_cross_entropy_with_logits(x, y), [("n", ()), ("u", ())]),
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


# --- behaviour beyond the table -------------------------------------------------------------------------------------
def test_bce_with_logits_is_finite_where_bce_on_sigmoid_saturates():
    x = minigrad.tensor([40.0, -40.0, 0.0], requires_grad=True)
    y = minigrad.tensor([0.0, 1.0, 1.0])
    loss = F.binary_cross_entropy_with_logits(x, y, reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [40.0, 40.0, np.log(2.0)], rtol=1e-6)
    loss.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, -1.0, -0.5], rtol=1e-6)
    saturated = F.binary_cross_entropy(x.detach().sigmoid(), y, reduction="none")
    assert saturated[0].item() == pytest.approx(100.0)  # BCE on probabilities clamps its log at -100


def test_bce_with_logits_module_keeps_weights_as_buffers():
    m = nn.BCEWithLogitsLoss(pos_weight=minigrad.ones(2))
    assert list(m.state_dict()) == ["pos_weight"]
    assert repr(m) == "BCEWithLogitsLoss()"
    assert m.reduction == "mean" and m.weight is None


@pytest.mark.parametrize("name", ["silu", "leaky_relu", "elu", "hardtanh", "mish", "celu", "selu"])
def test_inplace_activation_is_recorded_as_in_place(name):
    x = minigrad.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    y = x * 1.0
    out = getattr(F, name)(y, inplace=True)
    assert out is y and y._version == 1
    y.sum().backward()
    x2 = minigrad.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    getattr(F, name)(x2 * 1.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy())


def test_inplace_activation_on_a_leaf_that_requires_grad_is_refused():
    x = minigrad.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        F.silu(x, inplace=True)


@pytest.mark.parametrize("module", [
    "nn.GELU()", "nn.GELU(approximate='tanh')", "nn.SiLU()", "nn.SiLU(inplace=True)", "nn.LeakyReLU()",
    "nn.LeakyReLU(0.2, True)", "nn.ELU()", "nn.ELU(alpha=0.5, inplace=True)", "nn.CELU()", "nn.SELU()",
    "nn.Softplus()", "nn.Softplus(2, 10)", "nn.Hardtanh()", "nn.Hardtanh(-2.0, 2.0, True)", "nn.ReLU6()",
    "nn.ReLU6(True)", "nn.Mish()", "nn.LogSigmoid()", "nn.Softsign()", "nn.BCEWithLogitsLoss()",
    "nn.BCEWithLogitsLoss(reduction='sum')",
])
def test_module_repr_matches_torch(module):
    torch = pytest.importorskip("torch")
    assert repr(eval(module, {"nn": nn})) == repr(eval(module, {"nn": torch.nn}))


@pytest.mark.parametrize("name", ["silu", "gelu", "leaky_relu", "elu", "softplus", "hardtanh", "logsigmoid", "mish",
                                  "softsign", "relu6", "celu", "selu"])
def test_node_names_match_torch(name):
    torch = pytest.importorskip("torch")
    names = []
    for T in (minigrad, torch):
        x = T.tensor([0.5, -1.0], requires_grad=True)
        names.append(getattr(T.nn.functional, name)(x).grad_fn.name())
    assert names[0] == names[1]


ERRORS = [
    "F.binary_cross_entropy_with_logits(torch.randn(3, 4), torch.rand(3))",
    "F.binary_cross_entropy_with_logits(torch.randn(3), torch.tensor([1, 0, 1]))",
    "F.binary_cross_entropy_with_logits(torch.tensor([1, 0, 1]), torch.rand(3))",
    "F.binary_cross_entropy_with_logits(torch.randn(3, 4), torch.rand(3, 4), pos_weight=torch.rand(3))",
    "F.binary_cross_entropy_with_logits(torch.randn(3, 4), torch.rand(3, 4), weight=torch.rand(5, 3, 4))",
    "F.binary_cross_entropy_with_logits(torch.randn(3, 4), torch.rand(3, 4), reduction='avg')",
    "F.binary_cross_entropy_with_logits(torch.randn(3, requires_grad=True), torch.rand(3),"
    " weight=torch.rand(3, requires_grad=True))",
    "F.binary_cross_entropy_with_logits(torch.randn(3, requires_grad=True), torch.rand(3),"
    " pos_weight=torch.rand(3, requires_grad=True))",
    "nn.BCEWithLogitsLoss(reduction='avg')(torch.randn(2), torch.rand(2))",
    "F.gelu(torch.tensor([1]))",
    "F.gelu(torch.randn(2), approximate='exact')",
    "F.silu(torch.tensor([1]))",
    "F.leaky_relu(torch.tensor([1]))",
    "F.elu(torch.tensor([True]))",
    "F.softplus(torch.tensor([1]))",
    "F.logsigmoid(torch.tensor([1]))",
    "F.mish(torch.tensor([1]))",
    "F.celu(torch.randn(2), 0.0)",
    "F.hardtanh(torch.randn(2), 2.0, 1.0)",
    "nn.Hardtanh(2.0, 1.0)",
]


@pytest.mark.parametrize("source", ERRORS)
def test_errors_match_torch(source):
    check_error_matches_torch(source)
