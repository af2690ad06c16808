"""minigrad.nn: modules, parameters, Linear init, state_dict, losses and functional API."""
import copy
import math
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import minigrad
from minigrad import nn
from minigrad.nn import functional as F


def mlp(seed=0):
    minigrad.manual_seed(seed)
    return nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))


class TwoLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 4), nn.Sigmoid())
        self.head = nn.Linear(4, 2, bias=False)
        self.scale = nn.Parameter(minigrad.ones(1))
        self.note = "not a parameter"

    def forward(self, x):
        return self.head(self.body(x)) * self.scale


# --- Parameter ----------------------------------------------------------------------------
def test_parameter_is_a_leaf_tensor_that_requires_grad():
    p = nn.Parameter(minigrad.tensor([1.0, 2.0]))
    assert isinstance(p, minigrad.Tensor)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert not nn.Parameter(minigrad.zeros(2), requires_grad=False).requires_grad


def test_parameter_shares_memory_with_its_data():
    t = minigrad.tensor([1.0, 2.0])
    p = nn.Parameter(t)
    t[0] = 5.0
    assert p.tolist() == [5.0, 2.0]


def test_parameter_repr_like_pytorch():
    p = nn.Parameter(minigrad.tensor([1.0, 2.0]))
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"


def test_parameter_in_operations_and_backward():
    p = nn.Parameter(minigrad.tensor([1.0, 2.0, 3.0]))
    y = (p * p).sum()
    assert type(y) is minigrad.Tensor and y.grad_fn is not None
    y.backward()
    np.testing.assert_allclose(p.grad.numpy(), [2.0, 4.0, 6.0])
    assert type(p.detach()) is minigrad.Tensor


def test_parameter_rejects_in_place_update_outside_no_grad():
    p = nn.Parameter(minigrad.zeros(3))
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        p.add_(1.0)
    with minigrad.no_grad():
        p.add_(1.0)
    assert p.tolist() == [1.0, 1.0, 1.0]


def test_parameter_pickle_and_deepcopy_keep_the_class():
    p = nn.Parameter(minigrad.tensor([1.0, 2.0]))
    for q in (pickle.loads(pickle.dumps(p)), copy.deepcopy(p)):
        assert isinstance(q, nn.Parameter) and q.requires_grad
        assert q.tolist() == [1.0, 2.0]
        q.data[0] = 9.0  # an independent copy
    assert p.tolist() == [1.0, 2.0]


def test_parameter_keeps_its_accumulate_grad_node_and_is_still_collected():
    import gc
    import weakref

    p = nn.Parameter(minigrad.tensor([1.0, 2.0]))
    n1 = (p * 2).sum().grad_fn.next_functions[0][0].next_functions[0][0]
    n2 = (p * 3).sum().grad_fn.next_functions[0][0].next_functions[0][0]
    assert type(n1).__name__ == "AccumulateGrad" and n1 is n2 and n1.variable is p
    (p * 2).sum().backward()
    (p * 3).sum().backward()
    assert p.grad.tolist() == [5.0, 5.0]
    model = nn.Linear(3, 2)
    model(minigrad.randn(4, 3)).sum().backward()
    ref = weakref.ref(model.weight)
    del model
    gc.collect()
    assert ref() is None


def test_parameter_requires_tensor_data():
    with pytest.raises(TypeError, match="expected a Tensor"):
        nn.Parameter([1.0, 2.0])


# --- Linear init ------------------------------------------------------------------------
@pytest.mark.parametrize("fan_in,fan_out", [(1, 3), (4, 7), (100, 50)])
def test_linear_init_within_pytorch_bounds(fan_in, fan_out):
    minigrad.manual_seed(1)
    layer = nn.Linear(fan_in, fan_out)
    bound = 1 / math.sqrt(fan_in)
    assert layer.weight.shape == (fan_out, fan_in) and layer.bias.shape == (fan_out,)
    for p in (layer.weight, layer.bias):
        a = p.detach().numpy()
        assert a.dtype == np.float32
        assert np.all(np.abs(a) <= bound)


def test_linear_init_is_roughly_uniform():
    minigrad.manual_seed(2)
    layer = nn.Linear(400, 500)
    w = layer.weight.detach().numpy().ravel() * math.sqrt(400)  # now U(-1, 1)
    assert abs(w.min() + 1) < 0.01 and abs(w.max() - 1) < 0.01
    assert abs(w.mean()) < 0.01
    assert abs(w.var() - 1 / 3) < 0.01  # the variance of U(-1, 1)
    hist, _ = np.histogram(w, bins=10, range=(-1, 1))
    assert hist.min() > 0.9 * len(w) / 10 and hist.max() < 1.1 * len(w) / 10


def test_linear_init_is_seeded():
    minigrad.manual_seed(3)
    a = nn.Linear(5, 4)
    minigrad.manual_seed(3)
    b = nn.Linear(5, 4)
    c = nn.Linear(5, 4)
    assert np.array_equal(a.weight.detach().numpy(), b.weight.detach().numpy())
    assert np.array_equal(a.bias.detach().numpy(), b.bias.detach().numpy())
    assert not np.array_equal(a.weight.detach().numpy(), c.weight.detach().numpy())


def test_linear_forward_matches_numpy_and_records_addmm():
    minigrad.manual_seed(0)
    layer = nn.Linear(3, 2)
    x = minigrad.randn(5, 3)
    y = layer(x)
    W, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    np.testing.assert_allclose(y.detach().numpy(), x.numpy() @ W.T + b, rtol=1e-6)
    assert y.grad_fn.name() == "AddmmBackward0"
    y.sum().backward()
    np.testing.assert_allclose(layer.weight.grad.numpy(), np.ones((2, 5)) @ x.numpy(), rtol=1e-6)
    np.testing.assert_allclose(layer.bias.grad.numpy(), [5.0, 5.0])


def test_linear_without_bias_and_dtype():
    layer = nn.Linear(3, 2, bias=False, dtype=minigrad.float64)
    assert layer.bias is None
    assert [n for n, _ in layer.named_parameters()] == ["weight"]
    assert layer.weight.dtype == minigrad.float64
    assert layer(minigrad.randn(4, 3, dtype=minigrad.float64)).shape == (4, 2)


def test_linear_shape_error_names_both_shapes():
    layer = nn.Linear(3, 2)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(4x5 and 3x2\)"):
        layer(minigrad.randn(4, 5))


# --- Module bookkeeping -------------------------------------------------------------------
def test_parameters_and_named_parameters_of_nested_modules():
    model = TwoLayer()
    names = [n for n, _ in model.named_parameters()]
    assert names == ["scale", "body.0.weight", "body.0.bias", "head.weight"]
    assert len(list(model.parameters())) == 4
    assert all(isinstance(p, nn.Parameter) for p in model.parameters())
    assert [n for n, _ in model.named_parameters(recurse=False)] == ["scale"]
    assert "note" not in dict(model.named_parameters())


def test_shared_parameter_listed_once():
    lin = nn.Linear(2, 2)
    model = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(model.parameters())) == 2
    assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias"]


def test_children_and_modules():
    model = TwoLayer()
    assert [type(m).__name__ for m in model.children()] == ["Sequential", "Linear"]
    assert [n for n, _ in model.named_modules()] == ["", "body", "body.0", "body.1", "head"]
    assert len(list(model.modules())) == 5


def test_setattr_registration_and_replacement():
    model = nn.Module()
    model.w = nn.Parameter(minigrad.zeros(2))
    model.sub = nn.Linear(2, 2)
    assert set(dict(model.named_parameters())) == {"w", "sub.weight", "sub.bias"}
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'w'"):
        model.w = minigrad.zeros(2)
    model.w = None
    assert "w" not in dict(model.named_parameters())
    del model.sub
    assert list(model.named_parameters()) == []


def test_assigning_before_init_is_an_error():
    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(minigrad.zeros(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Bad()


def test_missing_forward():
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        nn.Module()(1)


def test_train_eval_flags_propagate():
    model = TwoLayer()
    assert model.training and all(m.training for m in model.modules())
    assert model.eval() is model
    assert not model.training and not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())
    model.train(False)
    assert not model.body[0].training


def test_zero_grad_set_to_none_and_to_zero():
    model = mlp()
    model(minigrad.randn(4, 2)).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in model.parameters())
    model(minigrad.randn(4, 2)).sum().backward()
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_gradients_accumulate_without_zero_grad():
    model = mlp()
    x = minigrad.randn(4, 2)
    model(x).sum().backward()
    g1 = model[0].weight.grad.numpy().copy()
    model(x).sum().backward()
    np.testing.assert_allclose(model[0].weight.grad.numpy(), 2 * g1, rtol=1e-6)


def test_repr_like_pytorch():
    assert repr(nn.Linear(2, 16)) == "Linear(in_features=2, out_features=16, bias=True)"
    assert repr(nn.ReLU()) == "ReLU()"
    assert repr(nn.MSELoss()) == "MSELoss()"
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Sequential(nn.Linear(16, 1, bias=False), nn.Sigmoid()))
    assert repr(model) == (
        "Sequential(\n"
        "  (0): Linear(in_features=2, out_features=16, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Sequential(\n"
        "    (0): Linear(in_features=16, out_features=1, bias=False)\n"
        "    (1): Sigmoid()\n"
        "  )\n"
        ")"
    )


def test_sequential_indexing_len_iteration():
    model = mlp()
    assert len(model) == 5
    assert isinstance(model[0], nn.Linear) and isinstance(model[-1], nn.Linear)
    assert [type(m).__name__ for m in model] == ["Linear", "ReLU", "Linear", "Tanh", "Linear"]
    head = model[:2]
    assert isinstance(head, nn.Sequential) and len(head) == 2 and head[0] is model[0]
    with pytest.raises(IndexError):
        model[5]
    x = minigrad.randn(3, 2)
    y = x
    for m in model:
        y = m(y)
    np.testing.assert_array_equal(model(x).detach().numpy(), y.detach().numpy())


def test_sequential_from_ordered_dict_and_append():
    model = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 3)), ("act", nn.ReLU())]))
    assert [n for n, _ in model.named_parameters()] == ["fc.weight", "fc.bias"]
    model.append(nn.Linear(3, 1))
    assert "2.weight" in dict(model.named_parameters()) and model(minigrad.randn(4, 2)).shape == (4, 1)


def test_module_double_converts_parameters():
    model = mlp().double()
    assert all(p.dtype == minigrad.float64 for p in model.parameters())
    assert model(minigrad.randn(3, 2, dtype=minigrad.float64)).dtype == minigrad.float64
    assert all(p.dtype == minigrad.float32 for p in model.float().parameters())


# --- state_dict ----------------------------------------------------------------------------
def test_state_dict_keys_and_detached_values():
    model = TwoLayer()
    sd = model.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == ["scale", "body.0.weight", "body.0.bias", "head.weight"]
    for v in sd.values():
        assert type(v) is minigrad.Tensor and not v.requires_grad
    # shares memory with the parameter, as in PyTorch
    with minigrad.no_grad():
        model.scale.fill_(3.0)
    assert sd["scale"].item() == 3.0


def test_state_dict_round_trip_gives_identical_outputs():
    a, b = mlp(seed=0), mlp(seed=1)
    x = minigrad.randn(7, 2)
    assert not np.array_equal(a(x).detach().numpy(), b(x).detach().numpy())
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    np.testing.assert_array_equal(a(x).detach().numpy(), b(x).detach().numpy())
    # loaded by copy: changing a afterwards leaves b alone
    with minigrad.no_grad():
        a[0].weight.mul_(2.0)
    assert not np.array_equal(a[0].weight.detach().numpy(), b[0].weight.detach().numpy())


def test_state_dict_survives_pickle():
    a, b = mlp(seed=0), mlp(seed=5)
    b.load_state_dict(pickle.loads(pickle.dumps(a.state_dict())))
    x = minigrad.randn(3, 2)
    np.testing.assert_array_equal(a(x).detach().numpy(), b(x).detach().numpy())


def test_load_state_dict_bumps_version():
    model = nn.Linear(2, 2)
    v = model.weight._version
    model.load_state_dict(nn.Linear(2, 2).state_dict())
    assert model.weight._version > v


def test_load_state_dict_missing_and_unexpected_keys():
    model = mlp()
    sd = model.state_dict()
    del sd["0.bias"]
    sd["extra.weight"] = minigrad.zeros(1)
    with pytest.raises(RuntimeError) as info:
        model.load_state_dict(sd)
    msg = str(info.value)
    assert msg.startswith("Error(s) in loading state_dict for Sequential:\n\t")
    assert 'Missing key(s) in state_dict: "0.bias".' in msg
    assert 'Unexpected key(s) in state_dict: "extra.weight".' in msg
    assert msg.index("Missing") < msg.index("Unexpected")
    result = model.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["0.bias"] and result.unexpected_keys == ["extra.weight"]


def test_load_state_dict_shape_mismatch_even_when_not_strict():
    model = nn.Linear(2, 16)
    other = nn.Linear(3, 16).state_dict()
    for strict in (True, False):
        with pytest.raises(RuntimeError, match=r"size mismatch for weight: copying a param with shape "
                                               r"torch.Size\(\[16, 3\]\) from checkpoint, the shape in current "
                                               r"model is torch.Size\(\[16, 2\]\)"):
            model.load_state_dict(other, strict=strict)


# --- activations -------------------------------------------------------------------------
def test_activation_modules_match_numpy():
    x = minigrad.tensor([[-2.0, -0.5, 0.0, 0.5, 3.0]])
    a = x.numpy()
    np.testing.assert_allclose(nn.ReLU()(x).numpy(), np.maximum(a, 0))
    np.testing.assert_allclose(nn.Sigmoid()(x).numpy(), 1 / (1 + np.exp(-a)), rtol=1e-6)
    np.testing.assert_allclose(nn.Tanh()(x).numpy(), np.tanh(a), rtol=1e-6)
    assert nn.Identity()(x) is x


def test_functional_matches_modules():
    minigrad.manual_seed(0)
    x = minigrad.randn(6, 4, requires_grad=True)
    for mod, fn in [(nn.ReLU(), F.relu), (nn.Sigmoid(), F.sigmoid), (nn.Tanh(), F.tanh)]:
        np.testing.assert_array_equal(mod(x).detach().numpy(), fn(x).detach().numpy())
        assert mod(x).grad_fn.name() == fn(x).grad_fn.name()
    lin = nn.Linear(4, 3)
    np.testing.assert_array_equal(lin(x).detach().numpy(), F.linear(x, lin.weight, lin.bias).detach().numpy())
    t = minigrad.randn(6, 4)
    c = minigrad.tensor([0, 1, 2, 3, 0, 1])
    np.testing.assert_array_equal(nn.MSELoss()(x, t).detach().numpy(), F.mse_loss(x, t).detach().numpy())
    np.testing.assert_array_equal(nn.CrossEntropyLoss(reduction="sum")(x, c).detach().numpy(),
                                  F.cross_entropy(x, c, reduction="sum").detach().numpy())
    p = x.sigmoid()
    y = minigrad.rand(6, 4)
    np.testing.assert_array_equal(nn.BCELoss()(p, y).detach().numpy(),
                                  F.binary_cross_entropy(p, y).detach().numpy())


def test_softmax_and_log_softmax_match_numpy():
    minigrad.manual_seed(0)
    x = minigrad.randn(3, 5, dtype=minigrad.float64)
    a = x.numpy()
    e = np.exp(a - a.max(1, keepdims=True))
    sm = e / e.sum(1, keepdims=True)
    np.testing.assert_allclose(F.softmax(x, dim=1).numpy(), sm, rtol=1e-12)
    np.testing.assert_allclose(F.log_softmax(x, dim=1).numpy(), np.log(sm), rtol=1e-12)
    np.testing.assert_allclose(nn.Softmax(dim=0)(x).numpy().sum(0), np.ones(5), rtol=1e-12)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        F.softmax(x)


# --- losses against NumPy formulas --------------------------------------------------------
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_against_numpy(reduction):
    minigrad.manual_seed(0)
    x = minigrad.randn(5, 3, dtype=minigrad.float64, requires_grad=True)
    t = minigrad.randn(5, 3, dtype=minigrad.float64)
    loss = nn.MSELoss(reduction=reduction)(x, t)
    d = x.detach().numpy() - t.numpy()
    expected = {"mean": (d ** 2).mean(), "sum": (d ** 2).sum(), "none": d ** 2}[reduction]
    np.testing.assert_allclose(loss.detach().numpy(), expected, rtol=1e-12)
    loss.sum().backward()
    scale = 2 / d.size if reduction == "mean" else 2
    np.testing.assert_allclose(x.grad.numpy(), scale * d, rtol=1e-12)


def _np_log_softmax(a):
    z = a - a.max(1, keepdims=True)
    return z - np.log(np.exp(z).sum(1, keepdims=True))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_against_numpy(reduction):
    minigrad.manual_seed(0)
    x = minigrad.randn(6, 4, dtype=minigrad.float64, requires_grad=True)
    y = minigrad.tensor([3, 0, 1, 1, 2, 0])
    loss = nn.CrossEntropyLoss(reduction=reduction)(x, y)
    a, t = x.detach().numpy(), y.numpy()
    per = -_np_log_softmax(a)[np.arange(6), t]
    expected = {"mean": per.mean(), "sum": per.sum(), "none": per}[reduction]
    np.testing.assert_allclose(loss.detach().numpy(), expected, rtol=1e-12)
    loss.sum().backward()
    sm = np.exp(_np_log_softmax(a))
    grad = sm - np.eye(4)[t]
    if reduction == "mean":
        grad /= 6
    np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-10, atol=1e-14)


def test_cross_entropy_graph_is_log_softmax_then_nll():
    x = minigrad.randn(2, 3, requires_grad=True)
    loss = F.cross_entropy(x, minigrad.tensor([0, 2]))
    assert loss.grad_fn.name() == "NllLossBackward0"
    assert loss.grad_fn.next_functions[0][0].name() == "LogSoftmaxBackward0"


def test_cross_entropy_with_probability_targets_and_single_sample():
    minigrad.manual_seed(0)
    x = minigrad.randn(4, 3, dtype=minigrad.float64)
    probs = F.softmax(minigrad.randn(4, 3, dtype=minigrad.float64), dim=1)
    expected = -(probs.numpy() * _np_log_softmax(x.numpy())).sum(1).mean()
    np.testing.assert_allclose(F.cross_entropy(x, probs).item(), expected, rtol=1e-12)
    one = F.cross_entropy(x[0], minigrad.tensor(2))
    np.testing.assert_allclose(one.item(), -_np_log_softmax(x.numpy()[:1])[0, 2], rtol=1e-12)


def test_nll_loss_against_numpy():
    minigrad.manual_seed(0)
    logp = F.log_softmax(minigrad.randn(5, 3, dtype=minigrad.float64), dim=1)
    y = minigrad.tensor([0, 2, 1, 1, 0])
    np.testing.assert_allclose(F.nll_loss(logp, y).item(), -logp.numpy()[np.arange(5), y.numpy()].mean())
    np.testing.assert_allclose(nn.NLLLoss(reduction="sum")(logp, y).item(),
                               -logp.numpy()[np.arange(5), y.numpy()].sum())


def test_cross_entropy_errors():
    x = minigrad.randn(3, 4)
    with pytest.raises(IndexError, match="out of bounds"):
        F.cross_entropy(x, minigrad.tensor([0, 4, 1]))
    with pytest.raises(ValueError, match="batch_size"):
        F.cross_entropy(x, minigrad.tensor([0, 1]))
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        nn.CrossEntropyLoss(reduction="avg")


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_loss_against_numpy(reduction):
    p = minigrad.tensor([0.1, 0.5, 0.9, 0.3], dtype=minigrad.float64, requires_grad=True)
    y = minigrad.tensor([0.0, 1.0, 1.0, 0.2], dtype=minigrad.float64)
    loss = nn.BCELoss(reduction=reduction)(p, y)
    a, t = p.detach().numpy(), y.numpy()
    per = -(t * np.log(a) + (1 - t) * np.log(1 - a))
    expected = {"mean": per.mean(), "sum": per.sum(), "none": per}[reduction]
    np.testing.assert_allclose(loss.detach().numpy(), expected, rtol=1e-12)
    loss.sum().backward()
    grad = (a - t) / (a * (1 - a))
    if reduction == "mean":
        grad /= 4
    np.testing.assert_allclose(p.grad.numpy(), grad, rtol=1e-10)


def test_bce_clamps_log_at_minus_100():
    p = minigrad.tensor([0.0, 1.0, 0.0, 1.0], dtype=minigrad.float64, requires_grad=True)
    y = minigrad.tensor([1.0, 0.0, 0.0, 1.0], dtype=minigrad.float64)
    loss = F.binary_cross_entropy(p, y, reduction="none")
    np.testing.assert_array_equal(loss.detach().numpy(), [100.0, 100.0, 0.0, 0.0])
    assert F.binary_cross_entropy(p, y).item() == 50.0
    loss.sum().backward()
    assert np.all(np.isfinite(p.grad.numpy()))


def test_bce_with_weight_and_range_error():
    p = minigrad.tensor([0.2, 0.7], dtype=minigrad.float64)
    y = minigrad.tensor([0.0, 1.0], dtype=minigrad.float64)
    w = minigrad.tensor([2.0, 0.5], dtype=minigrad.float64)
    per = -np.array([np.log(0.8), np.log(0.7)])
    np.testing.assert_allclose(F.binary_cross_entropy(p, y, weight=w).item(), (per * [2.0, 0.5]).mean())
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(minigrad.tensor([1.5]), minigrad.tensor([1.0]))


def test_loss_gradients_pass_gradcheck():
    from minigrad.autograd import gradcheck

    minigrad.manual_seed(0)
    x = minigrad.randn(4, 3, dtype=minigrad.float64, requires_grad=True)
    t = minigrad.randn(4, 3, dtype=minigrad.float64)
    y = minigrad.tensor([0, 2, 1, 2])
    w = minigrad.randn(2, 3, dtype=minigrad.float64, requires_grad=True)
    b = minigrad.randn(2, dtype=minigrad.float64, requires_grad=True)
    assert gradcheck(lambda a: F.mse_loss(a, t), (x,))
    assert gradcheck(lambda a: F.cross_entropy(a, y), (x,))
    assert gradcheck(lambda a: F.binary_cross_entropy(a.sigmoid(), t.sigmoid()), (x,))
    assert gradcheck(F.linear, (x, w, b))


def test_mse_warns_on_broadcasting_shapes():
    with pytest.warns(UserWarning, match="different to the input size"):
        F.mse_loss(minigrad.zeros(4, 1), minigrad.zeros(4))


# --- init ----------------------------------------------------------------------------------
def test_init_functions():
    from minigrad.nn import init

    t = minigrad.empty(200, 300)
    v = t._version
    assert init.zeros_(t) is t and not t.numpy().any() and t._version > v
    assert (init.ones_(t).numpy() == 1).all()
    bound = math.sqrt(6 / 500)
    a = init.xavier_uniform_(t).numpy()
    assert np.abs(a).max() <= bound and np.abs(a).max() > 0.95 * bound
    a = init.kaiming_uniform_(t, nonlinearity="relu").numpy()
    assert np.abs(a).max() <= math.sqrt(6 / 300)
    a = init.normal_(t, 1.0, 0.5).numpy()
    assert abs(a.mean() - 1.0) < 0.01 and abs(a.std() - 0.5) < 0.01
    a = init.uniform_(t, -2.0, 3.0).numpy()
    assert a.min() >= -2.0 and a.max() < 3.0
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(minigrad.empty(3))
    p = nn.Parameter(minigrad.empty(3, 3))
    init.zeros_(p)  # works on parameters (no in-place error)
    assert p.requires_grad and not p.detach().numpy().any()


# --- end to end ------------------------------------------------------------------------------
def test_tiny_training_run_loss_decreases():
    minigrad.manual_seed(0)
    x = minigrad.randn(64, 2)
    y = (x[:, :1] * x[:, 1:]).detach()  # learn a product
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = minigrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.MSELoss()
    losses = []
    for _ in range(200):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.2 * losses[0]
    assert np.mean(losses[-10:]) < np.mean(losses[:10])


def test_classifier_training_run_is_deterministic():
    def run():
        minigrad.manual_seed(0)
        x = minigrad.randn(128, 2)
        y = (x[:, 0] * x[:, 1] > 0).long()
        model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
        opt = minigrad.optim.Adam(model.parameters(), lr=0.05)
        for _ in range(100):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
        acc = (model(x).argmax(1) == y).float().mean().item()
        return loss.item(), acc

    (l1, acc1), (l2, acc2) = run(), run()
    assert l1 == l2 and acc1 == acc2
    assert acc1 > 0.9


def test_no_grad_inference_records_nothing():
    model = mlp()
    with minigrad.no_grad():
        y = model(minigrad.randn(3, 2))
    assert y.grad_fn is None and not y.requires_grad


def test_nn_imports_lazily_from_minigrad():
    import subprocess
    import sys

    assert minigrad.nn is nn and minigrad.optim.SGD is not None
    code = "import sys, minigrad; print('minigrad.nn' in sys.modules, 'minigrad.optim' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(__import__("pathlib").Path(__file__).parents[1]))
    assert out.stdout.split() == ["False", "False"]


# --- the NumPy fast path of fused backwards equals the recorded (create_graph) path -------------
def _fused_cases():
    minigrad.manual_seed(0)
    f64 = minigrad.float64
    x = minigrad.randn(5, 4, dtype=f64, requires_grad=True)
    x3 = minigrad.randn(2, 5, 4, dtype=f64, requires_grad=True)
    w = minigrad.randn(3, 4, dtype=f64, requires_grad=True)
    b = minigrad.randn(3, dtype=f64, requires_grad=True)
    t = minigrad.randn(5, 4, dtype=f64, requires_grad=True)
    y = minigrad.tensor([0, 3, 1, 2, 2])
    p = minigrad.rand(5, 4, dtype=f64).clamp(0.05, 0.95).requires_grad_()
    m = minigrad.randn(4, 3, dtype=f64, requires_grad=True)
    v = minigrad.randn(4, dtype=f64, requires_grad=True)
    cases = [
        ("linear", lambda: F.linear(x, w, b), (x, w, b)),
        ("linear 3-d", lambda: F.linear(x3, w, b), (x3, w, b)),
        ("linear 1-d", lambda: F.linear(x[0], w), (x, w)),
        ("softmax", lambda: F.softmax(x, dim=1), (x,)),
        ("softmax dim 0", lambda: F.softmax(x, dim=0), (x,)),
        ("log_softmax", lambda: F.log_softmax(x, dim=-1), (x,)),
        ("matmul", lambda: x @ m, (x, m)),
        ("matmul vec", lambda: x @ v, (x, v)),
        ("vec matmul", lambda: v @ m, (v, m)),
        ("dot", lambda: v @ v, (v,)),
    ]
    for red in ("mean", "sum", "none"):
        cases += [
            (f"mse {red}", lambda red=red: F.mse_loss(x, t, reduction=red), (x, t)),
            (f"cross_entropy {red}", lambda red=red: F.cross_entropy(x, y, reduction=red), (x,)),
            (f"bce {red}", lambda red=red: F.binary_cross_entropy(p, t.detach().sigmoid(), reduction=red), (p,)),
        ]
    return cases


@pytest.mark.parametrize("name,fn,inputs", _fused_cases(), ids=[c[0] for c in _fused_cases()])
def test_fast_backward_equals_recorded_backward(name, fn, inputs):
    from minigrad.autograd import grad

    out = fn()
    go = minigrad.randn(*out.shape, dtype=out.dtype) if out.ndim else minigrad.tensor(1.7, dtype=out.dtype)
    fast = grad(out, inputs, go, retain_graph=True)
    slow = grad(out, inputs, go, create_graph=True)
    for a, s in zip(fast, slow):
        assert a.shape == s.shape and not a.requires_grad
        np.testing.assert_allclose(a.numpy(), s.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_second_derivatives_of_fused_ops():
    from minigrad.autograd import gradgradcheck

    minigrad.manual_seed(1)
    f64 = minigrad.float64
    x = minigrad.randn(3, 4, dtype=f64, requires_grad=True)
    w = minigrad.randn(2, 4, dtype=f64, requires_grad=True)
    b = minigrad.randn(2, dtype=f64, requires_grad=True)
    t = minigrad.randn(3, 4, dtype=f64)
    y = minigrad.tensor([1, 0, 3])
    assert gradgradcheck(F.linear, (x, w, b))
    assert gradgradcheck(lambda a: F.softmax(a, dim=1), (x,))
    assert gradgradcheck(lambda a: F.cross_entropy(a, y), (x,))
    assert gradgradcheck(lambda a: F.mse_loss(a, t), (x,))
