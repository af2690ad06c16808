"""Autograd semantics: grad modes, hooks, retain_grad, accumulation, autograd.grad,
custom Functions (multi-output, setup_context, once_differentiable), the graph's
structure and memory behaviour, version counters and devices."""
from __future__ import annotations

import gc
import re
import warnings
import weakref

import numpy as np
import pytest

import minigrad
from minigrad.autograd import Function, gradcheck, gradgradcheck
from minigrad.autograd.function import once_differentiable


def leaf(*values, dtype=minigrad.float32):
    return minigrad.tensor(list(values), dtype=dtype, requires_grad=True)


# --- grad modes ---------------------------------------------------------------------------------
def test_grad_mode_context_managers():
    x = leaf(1.0, 2.0)
    assert minigrad.is_grad_enabled()
    with minigrad.no_grad():
        assert not minigrad.is_grad_enabled()
        y = x * 2
        with minigrad.enable_grad():
            assert minigrad.is_grad_enabled()
            z = x * 2
        assert not minigrad.is_grad_enabled()
    assert minigrad.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf
    assert z.requires_grad and z.grad_fn.name() == "MulBackward0"


def test_set_grad_enabled_context_and_function():
    x = leaf(1.0)
    with minigrad.set_grad_enabled(False):
        assert not (x * 2).requires_grad
        with minigrad.set_grad_enabled(True):
            assert (x * 2).requires_grad
    assert minigrad.is_grad_enabled()
    minigrad.set_grad_enabled(False)  # takes effect immediately, as a plain call
    try:
        assert not minigrad.is_grad_enabled()
        assert not (x * 2).requires_grad
    finally:
        minigrad.set_grad_enabled(True)
    assert minigrad.is_grad_enabled()


def test_grad_mode_decorators():
    @minigrad.no_grad()
    def inference(t):
        assert not minigrad.is_grad_enabled()
        return t * 2

    @minigrad.enable_grad()
    def training(t):
        return t * 2

    @minigrad.set_grad_enabled(False)
    def off(t):
        return t * 2

    assert minigrad.is_grad_enabled()  # decorating does not switch the mode (PyTorch restores it)
    x = leaf(1.0)
    assert not inference(x).requires_grad
    assert minigrad.is_grad_enabled()
    with minigrad.no_grad():
        assert training(x).requires_grad
        assert not minigrad.is_grad_enabled()
    assert not off(x).requires_grad
    assert inference.__name__ == "inference"  # functools.wraps


def test_grad_mode_bare_decorator():
    @minigrad.no_grad
    def f():
        return minigrad.is_grad_enabled()

    assert f() is False


def test_grad_mode_restored_after_exception():
    with pytest.raises(ValueError):
        with minigrad.no_grad():
            raise ValueError
    assert minigrad.is_grad_enabled()

    @minigrad.no_grad()
    def boom():
        raise KeyError

    with pytest.raises(KeyError):
        boom()
    assert minigrad.is_grad_enabled()


def test_backward_runs_with_grad_mode_off_by_default():
    seen = []

    class Spy(Function):
        @staticmethod
        def forward(ctx, a):
            seen.append(("forward", minigrad.is_grad_enabled()))
            return a * 2

        @staticmethod
        def backward(ctx, g):
            seen.append(("backward", minigrad.is_grad_enabled()))
            return g * 2

    x = leaf(1.0)
    Spy.apply(x).sum().backward()
    minigrad.autograd.grad(Spy.apply(x).sum(), x, create_graph=True)
    assert seen == [("forward", False), ("backward", False), ("forward", False), ("backward", True)]


# --- hooks and retain_grad -------------------------------------------------------------------------
def test_leaf_hook_sees_and_replaces_gradient():
    x = leaf(1.0, 2.0)
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))
    x.register_hook(lambda g: g * 10)
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]]
    assert x.grad.tolist() == [30.0, 30.0]


def test_non_leaf_hook_replaces_gradient_flowing_on():
    x = leaf(1.0, 2.0)
    h = x * 3
    seen = []
    h.register_hook(lambda g: seen.append(g.tolist()))
    h.register_hook(lambda g: g * 0.5)
    (h * h).sum().backward()
    assert seen == [[6.0, 12.0]]  # d(h^2)/dh = 2h
    assert x.grad.tolist() == [9.0, 18.0]  # 0.5 * 2h * 3


def test_hook_handle_remove():
    x = leaf(1.0)
    handle = x.register_hook(lambda g: g * 100)
    (x * 1).sum().backward()
    assert x.grad.item() == 100.0
    handle.remove()
    x.grad = None
    (x * 1).sum().backward()
    assert x.grad.item() == 1.0
    h = x * 2
    handle = h.register_hook(lambda g: g * 0)
    handle.remove()
    x.grad = None
    h.sum().backward()
    assert x.grad.item() == 2.0


def test_hook_sees_the_total_gradient_of_a_fan_out_tensor():
    x = leaf(2.0)
    h = x * 1
    seen = []
    h.register_hook(lambda g: seen.append(g.item()))
    (h * 3 + h * 4 + h).sum().backward()
    assert seen == [8.0]  # called once, with the summed gradient
    assert x.grad.item() == 8.0


def test_retain_grad():
    x = leaf(1.0, 2.0)
    h = x * 2
    h.retain_grad()
    assert h.retains_grad and not x.retains_grad
    (h * h).sum().backward()
    assert h.grad.tolist() == [4.0, 8.0]
    assert x.grad.tolist() == [8.0, 16.0]


def test_non_leaf_grad_access_warns_and_is_none():
    x = leaf(1.0)
    h = x * 2
    h.sum().backward()
    with pytest.warns(UserWarning, match="The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"):
        assert h.grad is None


# --- accumulation, retain_graph, fan-out ------------------------------------------------------------------
def test_accumulation_across_backward_calls():
    x = leaf(1.0, 2.0)
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0]
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    x.grad.zero_()
    assert x.grad.tolist() == [0.0, 0.0]


def test_grad_does_not_alias_a_gradient_flowing_elsewhere():
    x = leaf(1.0, 2.0)
    y = leaf(0.0, 0.0)
    (x + y).sum().backward()
    x.grad.add_(1)  # must not change y.grad
    assert y.grad.tolist() == [1.0, 1.0]


def test_retain_graph_twice():
    x = leaf(1.0, 2.0)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    first = x.grad.tolist()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy() if not x.grad.requires_grad else x.grad.detach().numpy(),
                               3 * np.array(first), rtol=1e-6)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_fan_out_accumulates():
    x = leaf(1.5, -2.0)
    y = x * x * x + x  # x used four times
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.array([1.5, -2.0]) ** 2 + 1, rtol=1e-6)


def test_fan_out_many_uses():
    x = leaf(1.0)
    total = x * 0
    for i in range(1, 201):
        total = total + x * float(i)
    total.sum().backward()
    assert x.grad.item() == sum(range(1, 201))


def test_diamond_graph():
    x = minigrad.tensor([0.3, 0.7], dtype=minigrad.float64, requires_grad=True)
    a = x * 2
    y = (a.exp() + a.sin()).sum()
    y.backward()
    xv = np.array([0.3, 0.7])
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2 * xv) + 2 * np.cos(2 * xv))


def test_backward_with_gradient_argument():
    x = leaf(1.0, 2.0, 3.0)
    y = x * x
    y.backward(minigrad.tensor([1.0, 0.0, 2.0]))
    assert x.grad.tolist() == [2.0, 0.0, 12.0]


def test_backward_on_a_leaf():
    x = leaf(1.0, 2.0)
    x.backward(minigrad.tensor([3.0, 4.0]))
    assert x.grad.tolist() == [3.0, 4.0]


def test_backward_inputs_argument():
    x, w = leaf(1.0, 2.0), leaf(3.0, 4.0)
    (x * w).sum().backward(inputs=[w])
    assert w.grad.tolist() == [1.0, 2.0]
    assert x.grad is None


def test_autograd_backward_function():
    x = leaf(1.0, 2.0)
    minigrad.autograd.backward([(x * 2).sum(), (x * x).sum()])
    assert x.grad.tolist() == [4.0, 6.0]


# --- autograd.grad -----------------------------------------------------------------------------------
def test_autograd_grad_does_not_touch_dot_grad():
    x = leaf(1.0, 2.0)
    (g,) = minigrad.autograd.grad((x * x).sum(), x)
    assert g.tolist() == [2.0, 4.0]
    assert x.grad is None


def test_autograd_grad_single_input_and_list():
    x, w = leaf(1.0), leaf(2.0)
    y = (x * w).sum()
    gx, gw = minigrad.autograd.grad(y, [x, w])
    assert (gx.item(), gw.item()) == (2.0, 1.0)
    assert isinstance(minigrad.autograd.grad((x * 5).sum(), x), tuple)


def test_autograd_grad_allow_unused():
    x, z = leaf(1.0), leaf(2.0)
    gx, gz = minigrad.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
    assert gx.item() == 2.0 and gz is None
    gx, gz = minigrad.autograd.grad((x * 2).sum(), [x, z], allow_unused=True, materialize_grads=True)
    assert gz.tolist() == [0.0]


def test_autograd_grad_grad_outputs():
    x = leaf(1.0, 2.0)
    (g,) = minigrad.autograd.grad(x * x, x, grad_outputs=minigrad.tensor([1.0, 10.0]))
    assert g.tolist() == [2.0, 40.0]


def test_autograd_grad_of_an_intermediate():
    x = leaf(1.0, 2.0)
    h = x * 3
    y = (h * h).sum()
    (gh,) = minigrad.autograd.grad(y, h)
    assert gh.tolist() == [6.0, 12.0]


def test_higher_order_with_create_graph():
    x = minigrad.tensor([0.5, 2.0], dtype=minigrad.float64, requires_grad=True)
    y = (x ** 3).sum()
    (g,) = minigrad.autograd.grad(y, x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    np.testing.assert_allclose(g.detach().numpy(), 3 * np.array([0.5, 2.0]) ** 2)
    (gg,) = minigrad.autograd.grad(g.sum(), x, create_graph=True)
    np.testing.assert_allclose(gg.detach().numpy(), 6 * np.array([0.5, 2.0]))
    (ggg,) = minigrad.autograd.grad(gg.sum(), x)
    np.testing.assert_allclose(ggg.numpy(), [6.0, 6.0])
    assert x.grad is None


def test_create_graph_backward_gives_differentiable_grad():
    x = minigrad.tensor([0.3], dtype=minigrad.float64, requires_grad=True)
    y = x.sin()
    y.backward(create_graph=True)
    assert x.grad.requires_grad
    np.testing.assert_allclose(x.grad.detach().numpy(), np.cos([0.3]))
    (gg,) = minigrad.autograd.grad(x.grad.sum(), x)
    np.testing.assert_allclose(gg.numpy(), -np.sin([0.3]))


def test_hessian_vector_product():
    x = minigrad.tensor([1.0, 2.0], dtype=minigrad.float64, requires_grad=True)
    v = minigrad.tensor([1.0, -1.0], dtype=minigrad.float64)
    f = (x[0] ** 2) * x[1] + x[1] ** 3  # H = [[2 x1, 2 x0], [2 x0, 6 x1]]
    (g,) = minigrad.autograd.grad(f, x, create_graph=True)
    (hv,) = minigrad.autograd.grad((g * v).sum(), x)
    np.testing.assert_allclose(hv.numpy(), [2 * 2.0 - 2 * 1.0, 2 * 1.0 - 6 * 2.0])


# --- custom Functions ---------------------------------------------------------------------------------------
class SplitAndIndex(Function):
    """Three outputs: first half, doubled second half, and (non-differentiable) indices."""

    received = []

    @staticmethod
    def forward(ctx, x, materialize):
        n = x.shape[0] // 2
        ctx.n = n
        ctx.set_materialize_grads(materialize)
        idx = minigrad.arange(x.shape[0])
        ctx.mark_non_differentiable(idx)
        return x[:n] * 1, x[n:] * 2, idx

    @staticmethod
    def backward(ctx, g1, g2, gidx):
        SplitAndIndex.received.append((g1, g2, gidx))
        g2 = minigrad.zeros(ctx.n) if g2 is None else g2
        g1 = minigrad.zeros(ctx.n) if g1 is None else g1
        return minigrad.cat([g1, g2 * 2]), None


def test_multi_output_function_with_non_differentiable_output():
    x = leaf(1.0, 2.0, 3.0, 4.0)
    a, b, idx = SplitAndIndex.apply(x, True)
    assert a.grad_fn is b.grad_fn and a.grad_fn.name() == "SplitAndIndexBackward"
    assert a.requires_grad and b.requires_grad
    assert not idx.requires_grad and idx.grad_fn is None and idx.dtype == minigrad.int64
    SplitAndIndex.received.clear()
    (a.sum() * 3).backward()
    g1, g2, gidx = SplitAndIndex.received[0]
    assert g1.tolist() == [3.0, 3.0]
    assert g2.tolist() == [0.0, 0.0]  # materialized zeros for an output that got no gradient
    assert gidx is not None and gidx.tolist() == [0, 0, 0, 0]
    assert x.grad.tolist() == [3.0, 3.0, 0.0, 0.0]


def test_multi_output_both_outputs_used():
    x = leaf(1.0, 2.0, 3.0, 4.0)
    a, b, _ = SplitAndIndex.apply(x, True)
    (a.sum() + (b * b).sum()).backward()
    # d/dx of b^2 with b = 2 x[2:]: 2 b * 2 = 8 x
    assert x.grad.tolist() == [1.0, 1.0, 24.0, 32.0]


def test_set_materialize_grads_false_passes_none():
    x = leaf(1.0, 2.0, 3.0, 4.0)
    a, b, idx = SplitAndIndex.apply(x, False)
    SplitAndIndex.received.clear()
    b.sum().backward()
    g1, g2, gidx = SplitAndIndex.received[0]
    assert g1 is None and gidx is None
    assert g2.tolist() == [1.0, 1.0]
    assert x.grad.tolist() == [0.0, 0.0, 2.0, 2.0]


class CubeSetup(Function):
    """PyTorch 2 style: forward without ctx, plus setup_context."""

    @staticmethod
    def forward(x, k):
        return x ** 3 * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, k = inputs
        ctx.save_for_backward(x)
        ctx.k = k

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x * x * g * ctx.k, None


def test_setup_context_style_function():
    x = minigrad.tensor([0.5, -1.0, 2.0], dtype=minigrad.float64, requires_grad=True)
    y = CubeSetup.apply(x, 2.0)
    assert y.grad_fn.name() == "CubeSetupBackward"
    np.testing.assert_allclose(y.detach().numpy(), 2 * np.array([0.5, -1.0, 2.0]) ** 3)
    assert gradcheck(lambda t: CubeSetup.apply(t, 2.0), (x,))
    assert gradgradcheck(lambda t: CubeSetup.apply(t, 2.0), (x,))


def test_needs_input_grad():
    seen = {}

    class Three(Function):
        @staticmethod
        def forward(ctx, a, b, k):
            seen["forward"] = ctx.needs_input_grad
            return a * b * k

        @staticmethod
        def backward(ctx, g):
            seen["backward"] = ctx.needs_input_grad
            return g, g, None

    a, b = leaf(1.0), minigrad.tensor([2.0])
    Three.apply(a, b, 3.0).sum().backward()
    assert seen["forward"] == (True, False, False)
    assert seen["backward"] == (True, False, False)
    assert b.grad is None  # a gradient returned for an input that needs none is dropped


def test_custom_function_kwargs_and_non_tensor_args():
    class Scale(Function):
        @staticmethod
        def forward(ctx, x, factor=2.0):
            ctx.factor = factor
            return x * factor

        @staticmethod
        def backward(ctx, g):
            return g * ctx.factor, None

    x = leaf(1.0)
    Scale.apply(x, factor=5.0).sum().backward()
    assert x.grad.item() == 5.0


class NumpyExp(Function):
    @staticmethod
    def forward(ctx, x):
        out = minigrad.tensor(np.exp(x.detach().numpy()))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return minigrad.tensor(out.detach().numpy() * g.detach().numpy())


def test_once_differentiable_first_order_works():
    x = minigrad.tensor([0.1, -0.4, 1.3], dtype=minigrad.float64, requires_grad=True)
    assert gradcheck(NumpyExp.apply, (x,))
    NumpyExp.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.1, -0.4, 1.3]))


def test_mark_dirty_in_place_function():
    class AddOneInPlace(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = leaf(1.0, 2.0)
    h = x * 2
    v0 = h._version
    out = AddOneInPlace.apply(h)
    assert out is h
    assert h._version == v0 + 2  # add_ bumps it, and so does mark_dirty (as in PyTorch)
    assert h.grad_fn.name() == "AddOneInPlaceBackward"
    assert h.tolist() == [3.0, 5.0]
    (h * h).sum().backward()
    assert x.grad.tolist() == [12.0, 20.0]


def test_forward_returning_an_input_makes_a_new_alias():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = leaf(1.0)
    y = Identity.apply(x)
    assert y is not x and y.grad_fn.name() == "IdentityBackward" and x.is_leaf
    y.sum().backward()
    assert x.grad.item() == 2.0


# --- long chains and memory ---------------------------------------------------------------------------
def test_100000_op_chain():
    x = minigrad.tensor([1.0, 2.0], dtype=minigrad.float64, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()  # no RecursionError
    assert x.grad.tolist() == [1.0, 1.0]
    del y  # freeing the chain must not recurse either


def test_100000_op_chain_autograd_grad():
    x = leaf(0.5)
    y = x
    for i in range(100_000):
        y = y + 0.0 if i % 2 else y * 1.0
    (g,) = minigrad.autograd.grad(y.sum(), x)
    assert g.item() == 1.0


def test_saved_tensors_freed_after_backward():
    x = leaf(1.0, 2.0)
    h = x * 2
    y = h.sin()  # SinBackward0 saves h
    href = weakref.ref(h)
    node = y.grad_fn
    assert node._saved_self is h  # a built-in node shows its saved tensors as PyTorch's do
    assert not hasattr(node, "saved_tensors")  # (saved_tensors is the custom Function's API)
    del h
    assert href() is not None  # kept alive by the saved tensors
    y.sum().backward()
    assert href() is None  # released by backward, without gc
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        node._saved_self


@pytest.fixture
def no_gc():
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    yield
    if was:
        gc.enable()


def test_graph_is_freed_without_gc(no_gc):
    x = leaf(1.0, 2.0)
    y = ((x * 2).exp().sigmoid() * x).tanh().log_softmax(0).sum()
    nodes = []
    stack = [y.grad_fn]
    while stack:
        n = stack.pop()
        if n is not None:
            nodes.append(weakref.ref(n))
            stack.extend(f for f, _ in n.next_functions)
    assert len(nodes) >= 7
    del y, stack, n
    alive = [r().name() for r in nodes if r() is not None and type(r()).__name__ != "AccumulateGrad"]
    assert alive == []  # no reference cycles: refcounting alone frees the graph


def test_graph_is_freed_without_gc_after_backward(no_gc):
    x = leaf(1.0, 2.0)
    h = x.exp()  # saves its output: the classic source of a tensor <-> node cycle
    h.retain_grad()
    y = (h * h).sum()
    ref_node, ref_h = weakref.ref(h.grad_fn), weakref.ref(h)
    y.backward()
    del y, h
    assert ref_node() is None and ref_h() is None


def test_custom_function_graph_is_freed_without_gc(no_gc):
    class SaveBoth(Function):
        @staticmethod
        def forward(ctx, a):
            out = a.exp()
            ctx.save_for_backward(a, out)  # an input and an output
            return out

        @staticmethod
        def backward(ctx, g):
            a, out = ctx.saved_tensors
            return g * out

    x = leaf(1.0)
    y = SaveBoth.apply(x)
    ref = weakref.ref(y.grad_fn)
    del y
    assert ref() is None


def test_accumulate_grad_node_is_shared_per_leaf():
    x = leaf(1.0)
    a, b = x * 2, x * 3
    assert a.grad_fn.next_functions[0][0] is b.grad_fn.next_functions[0][0]


# --- version counter, detach, data -------------------------------------------------------------------------------
def test_version_counter_bumps_on_in_place_ops():
    x = minigrad.tensor([1.0, 2.0, 3.0])
    assert x._version == 0
    x.add_(1)
    assert x._version == 1
    x.mul_(2)
    x.sub_(1)
    x.div_(2)
    assert x._version == 4
    x[0] = 5.0
    assert x._version == 5
    x += 1
    assert x._version == 6
    x.zero_()
    x.fill_(2.0)
    x.clamp_(0, 1)
    assert x._version == 9
    y = x + 1  # out of place: no bump
    assert x._version == 9 and y._version == 0


def test_views_share_the_version_counter():
    x = minigrad.tensor([[1.0, 2.0], [3.0, 4.0]])
    v = x[0]
    r = x.view(4)
    t = x.T
    v.add_(1)
    assert x._version == v._version == r._version == t._version == 1
    assert x.tolist() == [[2.0, 3.0], [3.0, 4.0]]  # the view shares memory
    r[3] = 0.0
    assert x._version == 2 and x[1, 1].item() == 0.0


def test_data_does_not_share_the_version_counter():
    x = leaf(1.0, 2.0)
    d = x.data
    assert not d.requires_grad and d.is_leaf
    d.add_(1)
    assert x._version == 0  # invisible to autograd (why .detach() is preferred)
    assert x.tolist() == [2.0, 3.0]  # but the memory is shared


def test_detach():
    x = leaf(1.0, 2.0)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    d[0] = 10.0  # shares memory and the version counter
    assert y.tolist() == [10.0, 4.0]
    assert y._version == 1
    assert minigrad.detach(y) is not y


def test_clone_is_in_graph_and_does_not_share_memory():
    x = leaf(1.0, 2.0)
    c = x.clone()
    assert c.grad_fn.name() == "CloneBackward0"
    with minigrad.no_grad():
        c[0] = 5.0
    assert x.tolist() == [1.0, 2.0]
    (x.clone() * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_requires_grad_flags():
    x = minigrad.tensor([1.0])
    assert not x.requires_grad and x.is_leaf
    assert x.requires_grad_() is x and x.requires_grad
    x.requires_grad = False
    assert not x.requires_grad
    y = leaf(1.0) * 2
    y.requires_grad_(True)  # already true on a non-leaf: allowed
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad = False


def test_in_place_on_non_leaf_is_recorded():
    x = leaf(1.0, 2.0)
    y = x * 2
    y.add_(1)
    assert y.grad_fn.name() == "AddBackward0" and not y.is_leaf
    y.mul_(minigrad.tensor([3.0, 4.0]))
    assert y.grad_fn.name() == "MulBackward0"
    (y.sum()).backward()
    # y = (2x + 1) * [3, 4] -> dy/dx = 2 * [3, 4]
    assert x.grad.tolist() == [6.0, 8.0]


def test_in_place_square_of_itself_is_refused_at_backward():
    x = leaf(1.0, 2.0)
    y = x * 2
    y.add_(1)
    y.mul_(y)  # MulBackward0 saved y, which the op itself then changed: PyTorch refuses too
    with pytest.raises(RuntimeError, match="is at version 2; expected version 1 instead"):
        y.sum().backward()


def test_setitem_on_non_leaf_is_recorded():
    x = leaf(1.0, 2.0, 3.0)
    w = leaf(5.0)
    y = x * 1
    y[1] = w * 2  # w * 2 has shape [1], the slot shape []: the leading 1 is dropped, as in PyTorch
    assert y.grad_fn.name() == "CopySlices"
    assert y.tolist() == [1.0, 10.0, 3.0]
    (y * minigrad.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 100.0]
    assert w.grad.tolist() == [20.0]


# --- graph introspection --------------------------------------------------------------------------------------
def test_next_functions_and_accumulate_grad():
    a, b = leaf(1.0, 2.0), leaf(3.0, 4.0)
    c = minigrad.tensor([1.0, 1.0])
    add = a * b + c
    assert add.grad_fn.name() == "AddBackward0"
    (mul, nr), (none, _) = add.grad_fn.next_functions
    assert nr == 0
    assert mul.name() == "MulBackward0"
    assert none is None  # c needs no grad
    (acc_a, _), (acc_b, _) = mul.next_functions
    assert type(acc_a).__name__ == "AccumulateGrad" and acc_a.variable is a
    assert acc_a.name() == "torch::autograd::AccumulateGrad"  # PyTorch's name()
    assert acc_b.variable is b
    assert acc_a.next_functions == ()


def test_next_functions_list_tensor_inputs_only():
    x = leaf(1.0, 2.0)
    assert len(x.sum().grad_fn.next_functions) == 1  # PyTorch: ((AccumulateGrad, 0),)
    assert len(x.sum(0).grad_fn.next_functions) == 1
    assert len(x.clamp(0, 1).grad_fn.next_functions) == 1
    assert len(CubeSetup.apply(x, 2.0).grad_fn.next_functions) == 1  # custom Function: tensors only too


def test_next_functions_of_multi_output_node_use_output_index():
    x = leaf(1.0, 2.0, 3.0, 4.0)
    a, b, _ = SplitAndIndex.apply(x, True)
    y = a + b
    (na, ia), (nb, ib) = y.grad_fn.next_functions
    assert na is nb and (ia, ib) == (0, 1)


def test_metadata_is_a_persistent_dict():
    y = leaf(1.0) * 2
    y.grad_fn.metadata["note"] = "hello"
    assert y.grad_fn.metadata == {"note": "hello"}


GRAD_FN_NAMES = [
    ("x + x", "AddBackward0"), ("x + 1", "AddBackward0"), ("x - x", "SubBackward0"), ("1 - x", "RsubBackward1"),
    ("x * x", "MulBackward0"), ("x * 2", "MulBackward0"), ("x / x", "DivBackward0"), ("x / 2", "DivBackward0"),
    ("2 / x", "MulBackward0"), ("-x", "NegBackward0"), ("x ** 2", "PowBackward0"), ("2 ** x", "PowBackward2"),
    ("x ** x", "PowBackward1"), ("x.exp()", "ExpBackward0"), ("x.abs().log()", "LogBackward0"),
    ("x.abs().sqrt()", "SqrtBackward0"), ("x.abs()", "AbsBackward0"), ("x.sin()", "SinBackward0"),
    ("x.cos()", "CosBackward0"), ("x.tanh()", "TanhBackward0"), ("x.sigmoid()", "SigmoidBackward0"),
    ("x.relu()", "ReluBackward0"), ("x.clamp(0, 1)", "ClampBackward1"), ("x.sum()", "SumBackward0"),
    ("x.sum(1)", "SumBackward1"), ("x.mean()", "MeanBackward0"), ("x.mean(0)", "MeanBackward1"),
    ("x.max()", "MaxBackward1"), ("x.max(1)[0]", "MaxBackward0"), ("x.min(1)[0]", "MinBackward0"),
    ("x.amax(1)", "AmaxBackward0"), ("x.softmax(1)", "SoftmaxBackward0"), ("x.log_softmax(1)", "LogSoftmaxBackward0"),
    ("x @ w", "MmBackward0"), ("x.reshape(6)", "ViewBackward0"), ("x.view(6)", "ViewBackward0"),
    ("x.T", "PermuteBackward0"), ("x.transpose(0, 1)", "TransposeBackward0"), ("x.permute(1, 0)", "PermuteBackward0"),
    ("x.unsqueeze(0)", "UnsqueezeBackward0"), ("x.unsqueeze(0).squeeze()", "SqueezeBackward0"),
    ("x.unsqueeze(0).squeeze(0)", "SqueezeBackward1"), ("x[:1].expand(4, 3)", "ExpandBackward0"),
    ("minigrad.cat([x, x])", "CatBackward0"), ("minigrad.stack([x, x])", "StackBackward0"),
    ("x[0]", "SelectBackward0"), ("x[:, 1:]", "SliceBackward0"), ("x[[0, 1]]", "IndexBackward0"),
    ("x[None]", "UnsqueezeBackward0"), ("x.clone()", "CloneBackward0"), ("minigrad.maximum(x, x * 2)", "MaximumBackward0"),
    ("minigrad.where(x > 0, x, x * 2)", "WhereBackward0"), ("x.double()", "ToCopyBackward0"),
]


@pytest.mark.parametrize("expr, name", GRAD_FN_NAMES, ids=[e for e, _ in GRAD_FN_NAMES])
def test_grad_fn_names_match_pytorch(expr, name):
    x = minigrad.randn(2, 3, requires_grad=True)
    w = minigrad.randn(3, 4, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = eval(expr, {"x": x, "w": w, "minigrad": minigrad})
    assert y.grad_fn.name() == name
    assert re.fullmatch(rf"<{name} object at 0x[0-9a-f]+>", repr(y.grad_fn))
    assert f"grad_fn=<{name}>" in repr(y)


def test_custom_function_node_name():
    y = CubeSetup.apply(leaf(1.0), 1.0)
    assert y.grad_fn.name() == "CubeSetupBackward"
    assert type(y.grad_fn).__name__ == "CubeSetupBackward"
    assert "grad_fn=<CubeSetupBackward>" in repr(y)


# --- devices -----------------------------------------------------------------------------------------------------
def test_cpu_device_accepted():
    d = minigrad.device("cpu")
    assert repr(d) == "device(type='cpu')" and str(d) == "cpu" and d.type == "cpu"
    x = minigrad.zeros(2, device="cpu")
    assert x.device == d and x.device != "cpu" and not x.is_cuda  # as in PyTorch, a device is not equal to a str
    assert x.to("cpu") is x and x.to(d) is x and x.cpu() is x
    y = minigrad.ones(2, device=d, requires_grad=True)
    assert y.requires_grad
    assert x.to("cpu", dtype=minigrad.float64).dtype == minigrad.float64
    assert minigrad.randn(2, device="cpu").shape == (2,)


@pytest.mark.parametrize("make, error", [
    (lambda: minigrad.zeros(2, device="cuda"), AssertionError),
    (lambda: minigrad.tensor([1.0], device="cuda:0"), AssertionError),
    (lambda: minigrad.ones(2).to("cuda"), AssertionError),
    (lambda: minigrad.ones(2).cuda(), AssertionError),
    (lambda: minigrad.ones(2).to(device="mps"), RuntimeError),
], ids=["zeros", "tensor", "to", "cuda", "to-mps"])
def test_other_devices_are_a_clear_error(make, error):
    # PyTorch's errors on a machine without these devices, plus a line that says what to do
    with pytest.raises(error, match="(?s)(Torch not compiled with CUDA enabled|PyTorch is not linked with support for "
                                    "mps devices)\nminigrad runs on the CPU only"):
        make()


def test_naming_a_gpu_device_is_allowed_as_in_pytorch():
    d = minigrad.device("cuda:1")
    assert (d.type, d.index, str(d), repr(d)) == ("cuda", 1, "cuda:1", "device(type='cuda', index=1)")


# --- in-place ops through views of tensors in the graph (PyTorch's CopySlices); values recorded from PyTorch ---
W4 = [1.0, 10.0, 100.0, 1000.0]


def test_in_place_on_a_slice_of_a_non_leaf():
    x = leaf(1.0, 2.0, 3.0, 4.0)
    y = x * 2
    y[1:3].mul_(x[:2])
    assert y.tolist() == [2.0, 4.0, 12.0, 8.0]
    assert y.grad_fn.name() == "CopySlices"
    (y * minigrad.tensor(W4)).sum().backward()
    assert x.grad.tolist() == [42.0, 620.0, 400.0, 2000.0]


def test_augmented_assignment_on_a_slice():
    x = minigrad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1
    y[:, 1] += x[:, 0]
    (y * minigrad.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert x.grad.tolist() == [[3.0, 2.0], [7.0, 4.0]]


def test_in_place_on_a_view_of_a_tensor_without_grad():
    x = leaf(1.0, 2.0, 3.0, 4.0)
    c = minigrad.zeros(4)
    c[::2].add_(x[1:3] * 3)
    assert c.requires_grad and c.grad_fn.name() == "CopySlices"
    assert c.tolist() == [6.0, 0.0, 9.0, 0.0]
    (c * minigrad.tensor(W4)).sum().backward()
    assert x.grad.tolist() == [0.0, 3.0, 300.0, 0.0]


def test_view_is_rebased_after_in_place_change():
    x = leaf(1.0, 2.0, 3.0, 4.0)
    y = x * 1
    v = y[1:]
    v.mul_(2)
    assert y._version == v._version == 1
    (v * v).sum().backward()  # v's graph now goes through the modified base
    assert x.grad.tolist() == [0.0, 16.0, 24.0, 32.0]


def test_in_place_on_a_reshaped_view():
    x = leaf(1.0, 2.0, 3.0, 4.0)
    y = x * 1
    y.view(2, 2).mul_(minigrad.tensor([[1.0], [3.0]]))
    assert y.tolist() == [1.0, 2.0, 9.0, 12.0]
    (y * minigrad.tensor(W4)).sum().backward()
    assert x.grad.tolist() == [1.0, 10.0, 300.0, 3000.0]


def test_in_place_on_a_view_of_a_view_is_recorded_on_the_base():
    x = minigrad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1
    v = y.T[0]          # column 0 of y, through a transpose and an index
    v.mul_(10)
    assert y.tolist() == [[10.0, 2.0], [30.0, 4.0]]
    assert type(y.grad_fn).__name__ == "CopySlices" and v._version == y._version == 1
    (y * minigrad.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert x.grad.tolist() == [[10.0, 2.0], [30.0, 4.0]]  # column 0 was scaled by 10


def test_in_place_on_a_view_of_a_plain_tensor_gives_the_base_a_graph():
    w = minigrad.tensor([1.0, 2.0], requires_grad=True)
    b = minigrad.zeros(2, 3)
    b.unsqueeze(0)[0, :, 1].copy_(w * w)   # writes column 1 of b
    assert b.requires_grad and type(b.grad_fn).__name__ == "CopySlices"
    b.sum().backward()
    assert w.grad.tolist() == [2.0, 4.0]


def test_in_place_on_an_expanded_view_is_an_error():
    x = minigrad.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single"):
        x.expand(3, 2).add_(1)


def test_fill_on_non_leaf_gives_zero_gradient():
    x = leaf(1.0, -2.0, 3.0)
    y = x * 1
    y.fill_(2.0)
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]  # zeros, not None, as in PyTorch


# --- .grad owns its memory (AccumulateGrad may take a fresh gradient without copying) ------------
def test_grad_never_aliases_another_grad_or_the_callers_tensor():
    x, y = leaf(1.0, 1.0), leaf(1.0, 1.0)
    (x + y).sum().backward()  # AddBackward0 sends the same gradient tensor to both leaves
    with minigrad.no_grad():
        x.grad.mul_(5)
    assert x.grad.tolist() == [5.0, 5.0] and y.grad.tolist() == [1.0, 1.0]

    g = minigrad.ones(2)
    z = leaf(1.0, 1.0)
    z.backward(g)  # a leaf as the root: its .grad must not be the caller's tensor
    with minigrad.no_grad():
        z.grad.mul_(2)
    assert g.tolist() == [1.0, 1.0] and z.grad.tolist() == [2.0, 2.0]

    stash = []
    w = leaf(1.0, 2.0)
    w.register_hook(lambda grad: stash.append(grad * 1) or stash[-1])
    (w * 3).sum().backward()
    with minigrad.no_grad():
        w.grad.zero_()
    assert stash[0].tolist() == [3.0, 3.0]


def test_fresh_gradient_is_taken_without_copy_and_stays_writable():
    w = minigrad.randn(4, 3, requires_grad=True)
    minigrad.nn.functional.linear(minigrad.randn(2, 3), w).sum().backward()
    assert w.grad._data.flags.writeable and w.grad._data.base is None
    with minigrad.no_grad():
        w.grad.mul_(0.5)  # in-place on .grad works (e.g. gradient clipping)


class _TimesTwoKeepsARef(Function):
    """backward keeps a weak reference to the array it returns, so a test can see whether .grad is it."""

    made: list = []

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        out = minigrad.from_numpy(g.numpy() * 2.0)
        _TimesTwoKeepsARef.made.append((weakref.ref(out), weakref.ref(out.numpy())))
        return out


@pytest.mark.parametrize("last_op", ["built-in", "custom"])
def test_the_last_gradient_of_a_backward_reaches_its_leaf_without_a_copy(last_op):
    # The leaf's AccumulateGrad is the last node to run: nothing of the engine's loop may still hold the
    # gradient array, or AccumulateGrad sees a second reference and copies (it once did: 2x the memory).
    import tracemalloc

    n = 200_000
    x = minigrad.ones(n, dtype=minigrad.float64, requires_grad=True)
    y = (x * 2).sum() if last_op == "built-in" else _TimesTwoKeepsARef.apply(x).sum()
    tracemalloc.start()
    try:
        y.backward()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert x.grad.tolist()[:2] == [2.0, 2.0]
    size = x.detach().numpy().nbytes
    assert peak < 1.5 * size, f"backward peaked at {peak / size:.2f}x the gradient's size"
    if last_op == "custom":
        tensor, array = _TimesTwoKeepsARef.made[-1]
        assert tensor() is x.grad and array() is x.grad.numpy()  # .grad is the very tensor backward returned


def test_a_gradient_whose_array_someone_else_holds_is_copied_into_grad():
    # .grad takes the gradient tensor itself only when nothing else holds it or its array: here backward
    # returns two tensors on one array (one per leaf), and a hook keeps the tensor it was given.
    class SameArrayTwice(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            arr = g.numpy().copy()
            return minigrad.from_numpy(arr), minigrad.from_numpy(arr)

    class SameTensorTwice(Function):  # the usual way to write an addition's backward
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            g = g * 1  # a fresh tensor, sent to both leaves
            return g, g

    for fn in (SameArrayTwice, SameTensorTwice):
        a, b = leaf(1.0, 2.0), leaf(3.0, 4.0)
        fn.apply(a, b).sum().backward()
        assert a.grad is not b.grad and not np.shares_memory(a.grad.numpy(), b.grad.numpy()), fn.__name__

    class ReturnsALeaf(Function):  # backward returns a tensor that requires grad: .grad must not (as in PyTorch)
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return minigrad.ones(2, requires_grad=True)

    a = leaf(1.0, 2.0)
    ReturnsALeaf.apply(a).sum().backward()
    assert not a.grad.requires_grad and a.grad.grad_fn is None and a.grad.tolist() == [1.0, 1.0]

    kept = []
    c = leaf(1.0, 2.0)
    c.register_hook(lambda grad: kept.append(grad))
    (c * 3).sum().backward()
    assert kept[0] is not c.grad and not np.shares_memory(kept[0].numpy(), c.grad.numpy())


def test_relu_gradient_at_zero_and_nan_follows_pytorch():
    # PyTorch's threshold_backward: 0 where relu's output <= 0, else the incoming gradient. At x == 0 the
    # gradient is 0; at NaN (NaN <= 0 is false) it passes through.
    x = minigrad.tensor([float("nan"), -1.0, 0.0, 2.0], requires_grad=True)
    x.relu().backward(minigrad.tensor([3.0, 3.0, 3.0, 3.0]))
    assert x.grad.tolist() == [3.0, 0.0, 0.0, 3.0]


@pytest.mark.parametrize("n_saved", [1, 2])
def test_custom_function_saving_its_output_leaves_no_reference_cycle(n_saved):
    class SavesOutput(Function):
        @staticmethod
        def forward(ctx, x):
            out = x * 2
            ctx.save_for_backward(*([out] if n_saved == 1 else [out, x]))
            return out

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = minigrad.ones(3, requires_grad=True)
    gc.collect()
    gc.disable()
    try:
        out = SavesOutput.apply(x)
        ref = weakref.ref(out)
        del out
        assert ref() is None  # freed by reference counting alone
    finally:
        gc.enable()


def test_op_with_many_tensor_arguments_some_needing_grad():
    # stack(dim, *tensors) records one node with 10 arguments: needs_input_grad must be built for all of them
    xs = [minigrad.tensor([float(i)], requires_grad=(i % 2 == 0)) for i in range(9)]
    s = minigrad.stack(xs)
    assert s.grad_fn.needs_input_grad == (False,) + tuple(i % 2 == 0 for i in range(9))
    (s.sum() * 3).backward()
    assert [x.grad.tolist() if x.grad is not None else None for x in xs] == [
        [3.0] if i % 2 == 0 else None for i in range(9)]
