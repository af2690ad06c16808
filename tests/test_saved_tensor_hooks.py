"""torch.autograd.graph.saved_tensors_hooks / save_on_cpu / disable_saved_tensors_hooks on minigrad.

Each scenario is one function of the library, run on minigrad and (when installed) on PyTorch: the
log of pack / unpack calls (what pack received, in which order) and the gradients must be the same.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

import minigrad
from minigrad.autograd.graph import _HOOKED
from _engines import engines



def _custom_mul(T):
    class MulSave(T.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            out = a * b
            ctx.save_for_backward(a, out, None)
            return out

        @staticmethod
        def backward(ctx, g):
            a, out, none = ctx.saved_tensors
            assert none is None
            a2, _, _ = ctx.saved_tensors  # a second read unpacks again
            assert a2 is not a
            return g * out / a, g * a

    return MulSave


def scenario(T):
    """Built-in ops and a custom Function under hooks: the pack/unpack log and the gradient."""
    log = []

    def pack(t):
        fn = t.grad_fn
        log.append(("pack", [round(v, 6) for v in t.detach().tolist()], t.requires_grad,
                    None if fn is None else fn.name()))
        return ("box", t.detach())

    def unpack(box):
        log.append(("unpack", [round(v, 6) for v in box[1].tolist()]))
        return box[1]

    x = T.tensor([0.5, 1.0, 2.0], dtype=T.float64, requires_grad=True)
    c = T.tensor([1.0, 2.0, 3.0], dtype=T.float64)
    with T.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = x * x          # saves self and other: x twice
        z = y.exp()        # saves its result
        w = z.sin()        # saves self (z)
        v = _custom_mul(T).apply(w, c)  # saves a, its output, and None (None is not packed)
    log.append("forward done")
    v.sum().backward()
    return log, x.grad.tolist()


def test_pack_and_unpack_run_when_and_on_what_pytorch_runs_them():
    log, grad = scenario(minigrad)
    kinds = [e[0] if isinstance(e, tuple) else e for e in log]
    # 2 (mul) + 1 (exp) + 1 (sin) + 2 (custom: a and out; None skipped) packs, then the unpacks in backward:
    # the custom node reads saved_tensors twice (2 x 2), sin 1, exp 1, mul 2.
    assert kinds == ["pack"] * 6 + ["forward done"] + ["unpack"] * 8
    assert log[2][3] == "ExpBackward0"  # exp's pack receives its output
    assert log[5][3] == "MulSaveBackward"  # and so does the custom Function's
    x = np.array([0.5, 1.0, 2.0])
    z = np.exp(x * x)
    expected = np.cos(z) * z * 2 * x * np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(grad, expected, rtol=1e-12)


def test_the_log_and_gradient_match_pytorch():
    torch = pytest.importorskip("torch")
    mine, theirs = scenario(minigrad), scenario(torch)
    assert mine[0] == theirs[0]
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-12)


@pytest.mark.parametrize("T", engines(), ids=lambda T: T.__name__)
def test_nesting_applies_only_the_innermost_pair(T):
    log = []
    outer = (lambda t: (log.append("pack-outer"), t.detach())[1], lambda t: (log.append("unpack-outer"), t)[1])
    inner = (lambda t: (log.append("pack-inner"), t.detach())[1], lambda t: (log.append("unpack-inner"), t)[1])
    x = T.ones(2, requires_grad=True)
    with T.autograd.graph.saved_tensors_hooks(*outer):
        with T.autograd.graph.saved_tensors_hooks(*inner):
            a = x.exp()
        b = x.sin()
    (a + b).sum().backward()
    assert log.count("pack-inner") == 1 and log.count("pack-outer") == 1
    assert sorted(log[2:]) == ["unpack-inner", "unpack-outer"]


@pytest.mark.parametrize("T", engines(), ids=lambda T: T.__name__)
def test_no_pack_when_nothing_is_recorded_and_unpack_at_each_backward(T):
    counts = {"pack": 0, "unpack": 0}

    def pack(t):
        counts["pack"] += 1
        return t.detach()

    def unpack(t):
        counts["unpack"] += 1
        return t

    x = T.ones(3, requires_grad=True)
    with T.autograd.graph.saved_tensors_hooks(pack, unpack):
        with T.no_grad():
            x.exp()
        T.ones(3).exp()  # no input requires grad: nothing is saved
        assert counts["pack"] == 0
        y = x.sin()
    assert counts == {"pack": 1, "unpack": 0}
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert counts == {"pack": 1, "unpack": 2}
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()


@pytest.mark.parametrize("T", engines(), ids=lambda T: T.__name__)
def test_unpack_must_return_a_tensor(T):
    x = T.ones(3, requires_grad=True)
    with T.autograd.graph.saved_tensors_hooks(lambda t: 1, lambda p: p):
        y = x.sin()
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor but got result of type int"):
        y.sum().backward()


@pytest.mark.parametrize("T", engines(), ids=lambda T: T.__name__)
def test_hooks_belong_to_their_thread(T):
    seen = []
    x = T.ones(3, requires_grad=True)
    with T.autograd.graph.saved_tensors_hooks(lambda t: (seen.append(1), t.detach())[1], lambda t: t):
        th = threading.Thread(target=lambda: x.sin().sum().backward())
        th.start()
        th.join()
        assert seen == []
        x.sin()
    assert seen == [1]


@pytest.mark.parametrize("T", engines(), ids=lambda T: T.__name__)
def test_disable_saved_tensors_hooks(T):
    g = T.autograd.graph
    with g.disable_saved_tensors_hooks("no hooks in here"):
        with pytest.raises(RuntimeError, match="no hooks in here"):
            with g.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with g.saved_tensors_hooks(lambda t: t, lambda t: t):
        with pytest.raises(RuntimeError, match="no hooks in here"):
            with g.disable_saved_tensors_hooks("no hooks in here"):
                pass
    with g.saved_tensors_hooks(lambda t: t, lambda t: t):  # usable again afterwards
        pass


@pytest.mark.parametrize("pin", [False, True])
@pytest.mark.parametrize("T", engines(), ids=lambda T: T.__name__)
def test_save_on_cpu_gives_the_same_gradients(T, pin):
    T.manual_seed(0)
    w = T.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
    x = T.tensor(np.linspace(0, 2, 8).reshape(2, 4))
    with T.autograd.graph.save_on_cpu(pin_memory=pin):
        y = (x @ w.T).tanh().sum()
    y.backward()
    g = w.grad.clone()
    w.grad = None
    (x @ w.T).tanh().sum().backward()
    assert T.equal(g, w.grad)


def test_save_on_cpu_packs_a_copy_only_with_pin_memory():
    x = minigrad.ones(3, requires_grad=True)
    for pin, same in ((False, True), (True, False)):
        hooks = minigrad.autograd.graph.save_on_cpu(pin_memory=pin)
        device, packed = hooks.pack_hook(x)
        assert device == minigrad.device("cpu")
        assert (packed._data is x._data) is same
        assert minigrad.equal(hooks.unpack_hook((device, packed)), x)


def test_an_unpacked_leaf_sends_its_gradient_to_the_leaf():
    """double backward through a saved leaf that came back from unpack_hook as a new tensor."""
    x = minigrad.tensor([1.0, 2.0], dtype=minigrad.float64, requires_grad=True)
    with minigrad.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        y = (x * x * x).sum()
    (g,) = minigrad.autograd.grad(y, x, create_graph=True)
    g.sum().backward()
    np.testing.assert_allclose(x.grad.tolist(), [6.0, 12.0])  # d/dx of 3x^2


def test_nothing_is_packed_and_the_set_is_empty_without_hooks():
    """The fast path: no hooks anywhere, so saving keeps the plain tuple (one truth test of _HOOKED)."""
    assert not _HOOKED
    x = minigrad.ones(3, requires_grad=True)
    y = x * x
    assert type(y.grad_fn._saved) is tuple
    with minigrad.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        assert _HOOKED
        y = x * x
    assert not _HOOKED
    assert type(y.grad_fn._saved) is not tuple


def _op_rows():
    import importlib

    rows = []
    for name in ("test_ops_activations", "test_ops_elementwise", "test_ops_indexing_shapes", "test_ops_matrix",
                 "test_ops_reduce_sort"):
        rows += [r for r in importlib.import_module(name).ROWS if r.grad]
    return rows


def test_every_built_in_op_gives_the_same_gradient_through_copying_hooks():
    """Each op of the op tables, forward and backward with hooks that pack a copy of every saved tensor
    (so backward reads only what the hooks gave back): the gradients equal those without hooks."""
    import optable

    packed = []

    def pack(t):
        packed.append(1)
        return minigrad.tensor(t.detach().numpy().copy())

    checked = 0
    for row in _op_rows():
        data = optable.make_data(row.kinds, seed=3)
        _, _, plain = optable.run(minigrad, row, data)
        with minigrad.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            _, _, hooked = optable.run(minigrad, row, data)
        for a, b in zip(plain, hooked):
            if a is None:
                assert b is None, row.id
            else:
                np.testing.assert_array_equal(a, b, err_msg=row.id)
        checked += 1
    assert checked > 100 and len(packed) > checked  # the hooks did run (most ops save one or two tensors)


def test_second_derivatives_through_hooked_saved_tensors():
    """gradgradcheck of every twice-differentiable op with copying hooks active: the unpacked tensors stand
    where the saved ones stood in the graph (same grad_fn, same leaf, the node's own output)."""
    import optable

    def pack(t):
        return minigrad.tensor(t.detach().numpy().copy())

    rows = [r for r in _op_rows() if r.gradgrad]
    with minigrad.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        for row in rows:
            optable.check_gradgradcheck(row)
    assert len(rows) > 100


@pytest.mark.parametrize("T", engines(), ids=lambda T: T.__name__)
def test_no_version_check_on_hooked_tensors(T):
    """PyTorch checks no version of a tensor that went through the hooks: with hooks that return the tensor
    itself, a change in place before backward is used, not refused."""
    x = T.ones(3, requires_grad=True)
    y = x.clone()
    with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        z = y.sin()
    with T.no_grad():
        y.mul_(2)
    z.sum().backward()
    np.testing.assert_allclose(x.grad.tolist(), [np.cos(2.0)] * 3, rtol=1e-6)


@pytest.mark.parametrize("T", engines(), ids=lambda T: T.__name__)
def test_graph_node_gradient_edge_and_increment_version(T):
    g = T.autograd.graph
    x = T.ones(2, requires_grad=True)
    y = x.exp()
    assert isinstance(y.grad_fn, g.Node) and isinstance(y.grad_fn.next_functions[0][0], g.Node)
    assert not isinstance(x, g.Node) and not isinstance(1, g.Node)
    edge = g.get_gradient_edge(y)
    assert edge.node is y.grad_fn and edge.output_nr == 0 and edge.ownership_token is None
    assert g.get_gradient_edge(x).node.name() == "torch::autograd::AccumulateGrad"
    with pytest.raises(RuntimeError, match="not possible to get the gradient edge for a Tensor that does not"):
        g.get_gradient_edge(T.ones(2))
    z = x * 1.0
    w = z.sin()  # saves z
    v = z._version
    g.increment_version(z)
    assert z._version == v + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        w.sum().backward()
