"""minigrad.optim: SGD and Adam against NumPy reference updates (and PyTorch when installed)."""
import math

import numpy as np
import pytest

import minigrad
from minigrad import nn, optim


def _params(seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((3, 4)).astype(dtype), rng.standard_normal(4).astype(dtype)]


def _grads(n_steps, shapes, seed=1, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(n_steps)]


def _run_minigrad(opt_cls, kwargs, init, grads):
    params = [nn.Parameter(minigrad.tensor(a)) for a in init]
    opt = opt_cls(params, **kwargs)
    history = []
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = minigrad.tensor(g)
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
    return history


def np_sgd(init, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
    """PyTorch's SGD written out in NumPy."""
    params = [a.copy() for a in init]
    bufs = [None] * len(params)
    history = []
    for step_grads in grads:
        for i, g in enumerate(step_grads):
            d = g + weight_decay * params[i]
            if momentum:
                if bufs[i] is None:
                    bufs[i] = d.copy()
                else:
                    bufs[i] = momentum * bufs[i] + (1 - dampening) * d
                d = d + momentum * bufs[i] if nesterov else bufs[i]
            params[i] = params[i] - lr * d
        history.append([p.copy() for p in params])
    return history


def np_adam(init, grads, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False):
    """Adam with bias correction (Kingma & Ba, PyTorch's variant of where eps goes)."""
    b1, b2 = betas
    params = [a.copy() for a in init]
    m = [np.zeros_like(a) for a in init]
    v = [np.zeros_like(a) for a in init]
    vmax = [np.zeros_like(a) for a in init]
    history = []
    for t, step_grads in enumerate(grads, start=1):
        for i, g in enumerate(step_grads):
            g = g + weight_decay * params[i]
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            vmax[i] = np.maximum(vmax[i], v[i])
            m_hat = m[i] / (1 - b1 ** t)
            v_hat = (vmax[i] if amsgrad else v[i]) / (1 - b2 ** t)
            params[i] = params[i] - lr * m_hat / (np.sqrt(v_hat) + eps)
        history.append([p.copy() for p in params])
    return history


SGD_CASES = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, weight_decay=0.01),
    dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.1),
    dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
    dict(lr=0.2, weight_decay=0.5),
]


@pytest.mark.parametrize("kwargs", SGD_CASES, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
def test_sgd_against_numpy_reference(kwargs):
    init = _params()
    grads = _grads(6, [a.shape for a in init])
    got = _run_minigrad(optim.SGD, kwargs, init, grads)
    want = np_sgd(init, grads, **kwargs)
    for step_got, step_want in zip(got, want):
        for a, b in zip(step_got, step_want):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_sgd_momentum_buffer_starts_at_first_gradient():
    p = nn.Parameter(minigrad.tensor([1.0, 1.0], dtype=minigrad.float64))
    opt = optim.SGD([p], lr=0.1, momentum=0.9, dampening=0.5)
    p.grad = minigrad.tensor([1.0, 2.0], dtype=minigrad.float64)
    opt.step()
    # no dampening on the first step: buffer == gradient, so p = 1 - 0.1 * g
    np.testing.assert_allclose(p.detach().numpy(), [0.9, 0.8])
    np.testing.assert_allclose(opt.state[p]["momentum_buffer"].numpy(), [1.0, 2.0])


ADAM_CASES = [
    dict(lr=1e-3),
    dict(lr=0.05, betas=(0.8, 0.99)),
    dict(lr=0.01, weight_decay=0.1),
    dict(lr=0.01, amsgrad=True),
    dict(lr=0.02, eps=1e-3, weight_decay=0.05, amsgrad=True),
]


@pytest.mark.parametrize("kwargs", ADAM_CASES, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
def test_adam_against_numpy_reference(kwargs):
    init = _params()
    grads = _grads(8, [a.shape for a in init])
    got = _run_minigrad(optim.Adam, kwargs, init, grads)
    want = np_adam(init, grads, **kwargs)
    for step_got, step_want in zip(got, want):
        for a, b in zip(step_got, step_want):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_adam_first_step_moves_each_weight_by_lr():
    # With bias correction the first update is lr * g / (|g| + eps): a step of size lr.
    p = nn.Parameter(minigrad.tensor([0.0, 0.0, 0.0], dtype=minigrad.float64))
    opt = optim.Adam([p], lr=0.1)
    p.grad = minigrad.tensor([3.0, -0.01, 100.0], dtype=minigrad.float64)
    opt.step()
    np.testing.assert_allclose(p.detach().numpy(), [-0.1, 0.1, -0.1], rtol=1e-5)
    assert opt.state[p]["step"].item() == 1.0


def test_float32_parameters_stay_float32():
    init = _params(dtype=np.float32)
    grads = _grads(3, [a.shape for a in init], dtype=np.float32)
    for cls, kw in [(optim.SGD, dict(lr=0.1, momentum=0.9, weight_decay=0.01)), (optim.Adam, dict(lr=0.1))]:
        params = [nn.Parameter(minigrad.tensor(a)) for a in init]
        opt = cls(params, **kw)
        for g in grads:
            for p, gi in zip(params, g):
                p.grad = minigrad.tensor(gi)
            opt.step()
        assert all(p.dtype == minigrad.float32 for p in params)
        for s in opt.state.values():
            assert all(v.dtype == minigrad.float32 for k, v in s.items() if k != "step")
    want = np_sgd([a.astype(np.float64) for a in init], grads, lr=0.1, momentum=0.9, weight_decay=0.01)
    got = _run_minigrad(optim.SGD, dict(lr=0.1, momentum=0.9, weight_decay=0.01), init, grads)
    np.testing.assert_allclose(got[-1][0], want[-1][0], rtol=1e-5, atol=1e-6)


def test_step_updates_in_place_and_bumps_version():
    p = nn.Parameter(minigrad.ones(3))
    data = p.detach().numpy()
    v = p._version
    opt = optim.SGD([p], lr=0.5)
    p.grad = minigrad.ones(3)
    opt.step()
    assert p.detach().numpy() is data or np.shares_memory(p.detach().numpy(), data)
    assert data.tolist() == [0.5, 0.5, 0.5]
    assert p._version == v + 1
    assert p.requires_grad and p.is_leaf and p.grad_fn is None


def test_stale_graph_notices_the_update():
    p = nn.Parameter(minigrad.ones(3))
    y = (p * p).sum()  # MulBackward0 saved p
    opt = optim.SGD([p], lr=0.1)
    p.grad = minigrad.ones(3)
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_parameters_without_grad_are_skipped():
    a = nn.Parameter(minigrad.ones(2))
    b = nn.Parameter(minigrad.ones(2))
    for opt in (optim.SGD([a, b], lr=0.1, momentum=0.9), optim.Adam([a, b], lr=0.1)):
        a.grad = minigrad.ones(2)
        b.grad = None
        opt.step()
        assert b.tolist() == [1.0, 1.0]
        assert b not in opt.state


def test_zero_grad_to_none_and_to_zero():
    p = nn.Parameter(minigrad.ones(2))
    opt = optim.SGD([p], lr=0.1)
    p.grad = minigrad.ones(2)
    opt.zero_grad(set_to_none=False)
    assert p.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


def test_param_groups_with_their_own_lr():
    a = nn.Parameter(minigrad.ones(2))
    b = nn.Parameter(minigrad.ones(2))
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 1.0]
    a.grad = minigrad.ones(2)
    b.grad = minigrad.ones(2)
    opt.step()
    np.testing.assert_allclose(a.detach().numpy(), [0.9, 0.9])
    np.testing.assert_allclose(b.detach().numpy(), [0.0, 0.0])
    opt.param_groups[0]["lr"] = 0.5  # schedules change lr like this
    opt.step()
    np.testing.assert_allclose(a.detach().numpy(), [0.4, 0.4])


def test_closure_is_called_with_grad_enabled():
    p = nn.Parameter(minigrad.tensor([2.0]))
    opt = optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with minigrad.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 4.0
    assert p.item() == 1.0  # 2 - 0.25 * 4


def test_optimizer_argument_errors():
    p = nn.Parameter(minigrad.ones(2))
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.SGD([p], lr=-1)
    with pytest.raises(ValueError, match="Invalid momentum value"):
        optim.SGD([p], lr=0.1, momentum=-0.5)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        optim.Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts"):
        optim.SGD(p, lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([p * 2], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)


def test_optimizer_state_dict_round_trip():
    init = _params()
    grads = _grads(6, [a.shape for a in init])

    def make():
        params = [nn.Parameter(minigrad.tensor(a)) for a in init]
        return params, optim.Adam(params, lr=0.05, amsgrad=True)

    pa, oa = make()
    for g in grads[:3]:
        for p, gi in zip(pa, g):
            p.grad = minigrad.tensor(gi)
        oa.step()
    sd = oa.state_dict()
    assert sorted(sd["state"]) == [0, 1] and sd["param_groups"][0]["params"] == [0, 1]
    pb, ob = make()
    with minigrad.no_grad():
        for a, b in zip(pa, pb):
            b.copy_(a)
    ob.load_state_dict(sd)
    for g in grads[3:]:
        for pp in (pa, pb):
            for p, gi in zip(pp, g):
                p.grad = minigrad.tensor(gi)
        oa.step()
        ob.step()
    for a, b in zip(pa, pb):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_repr_lists_hyperparameters():
    text = repr(optim.SGD([nn.Parameter(minigrad.ones(1))], lr=0.1, momentum=0.9))
    assert text.startswith("SGD (\nParameter Group 0") and "lr: 0.1" in text and "momentum: 0.9" in text


def test_training_with_model_parameters_reduces_loss():
    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
    x = minigrad.randn(32, 3)
    y = x.sum(1, keepdim=True).detach()
    for cls, kw in [(optim.SGD, dict(lr=0.05, momentum=0.9, weight_decay=1e-4)), (optim.Adam, dict(lr=0.01))]:
        for p in model.parameters():
            nn.init.uniform_(p, -0.3, 0.3)
        opt = cls(model.parameters(), **kw)
        first = None
        for _ in range(100):
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            first = loss.item() if first is None else first
        assert loss.item() < 0.1 * first


# --- PyTorch as an oracle (skipped when torch is not installed) ----------------------------------
def _torch_and_minigrad_runs(opt_name, kwargs, loss_name, steps=5):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    sizes = [(3, 5), (5, 4)]
    weights = []
    for fan_in, fan_out in sizes:
        weights += [rng.uniform(-0.5, 0.5, (fan_out, fan_in)), rng.uniform(-0.5, 0.5, fan_out)]
    x = rng.standard_normal((10, 3))
    if loss_name == "cross_entropy":
        y_np = rng.integers(0, 4, 10)
    else:
        y_np = rng.standard_normal((10, 4))
    results = []
    for lib, nn_mod, opt_mod in [(torch, torch.nn, torch.optim), (minigrad, nn, optim)]:
        model = nn_mod.Sequential(nn_mod.Linear(3, 5), nn_mod.Tanh(), nn_mod.Linear(5, 4)).double()
        with lib.no_grad():
            for p, w in zip(model.parameters(), weights):
                p.copy_(lib.tensor(w))
        opt = getattr(opt_mod, opt_name)(model.parameters(), **kwargs)
        X, Y = lib.tensor(x), lib.tensor(y_np)
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            loss = getattr(nn_mod.functional, loss_name)(model(X), Y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        results.append((losses, [p.detach().numpy().copy() for p in model.parameters()]))
    return results


@pytest.mark.parametrize("opt_name,kwargs", [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.2, weight_decay=0.01)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True)),
])
@pytest.mark.parametrize("loss_name", ["cross_entropy", "mse_loss"])
def test_against_pytorch(opt_name, kwargs, loss_name):
    (t_losses, t_params), (m_losses, m_params) = _torch_and_minigrad_runs(opt_name, kwargs, loss_name)
    np.testing.assert_allclose(m_losses, t_losses, rtol=1e-10)
    for a, b in zip(m_params, t_params):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_linear_init_distribution_matches_pytorch_bounds():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    minigrad.manual_seed(0)
    t = torch.nn.Linear(30, 20)
    m = nn.Linear(30, 20)
    for name in ("weight", "bias"):
        a = getattr(t, name).detach().numpy()
        b = getattr(m, name).detach().numpy()
        assert a.shape == b.shape and a.dtype == b.dtype
        assert np.abs(b).max() <= 1 / math.sqrt(30) and np.abs(a).max() <= 1 / math.sqrt(30)
    assert repr(t) == repr(m)
    assert list(t.state_dict()) == list(m.state_dict())
