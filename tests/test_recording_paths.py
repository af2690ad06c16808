"""The lean recording paths of built-in ops (_apply_pair, _apply_first) build the same node as the general one.

``minigrad.autograd._builtin`` records the operators and ``Cls.apply(x)`` through shortcuts that exist only
for speed; ``_record_builtin`` is the general path every built-in can take. Both must give the same node:
edges, ``needs_input_grad``, saved tensors (and their version checks), gradients.
"""
from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad._ops import arithmetic, pointwise
from minigrad.autograd._builtin import _record_builtin

UNARY = [pointwise.Relu, pointwise.Exp, pointwise.Log, pointwise.Sigmoid, pointwise.Tanh, pointwise.Sqrt]
PAIRS = [arithmetic.Add, arithmetic.Mul, arithmetic.Sub, arithmetic.Div]


def _node_summary(node):
    edges = node._edges
    return (type(node), node.needs_input_grad, tuple(e for k, e in enumerate(edges) if k % 4 != 0),
            tuple(type(e) for e in edges[::4]), node._saved_outputs)


def _leaf(seed, shape=(3, 4)):
    rng = np.random.default_rng(seed)
    return minigrad.tensor(rng.uniform(0.5, 2.0, shape), requires_grad=True)


@pytest.mark.parametrize("cls", UNARY, ids=lambda c: c.__name__)
def test_unary_lean_path_equals_general_path(cls):
    x = _leaf(0)
    lean = cls.apply(x * 1.0)  # Cls.apply(one tensor) takes _apply_first
    general = _record_builtin(cls, (x * 1.0,))
    assert _node_summary(lean.grad_fn) == _node_summary(general.grad_fn)
    np.testing.assert_array_equal(lean.detach().numpy(), general.detach().numpy())
    (gl,) = minigrad.autograd.grad(lean.sum(), x)
    (gg,) = minigrad.autograd.grad(general.sum(), x)
    np.testing.assert_array_equal(gl.numpy(), gg.numpy())


@pytest.mark.parametrize("cls", PAIRS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
def test_pair_lean_path_equals_general_path(cls, needs):
    a, b = _leaf(1), _leaf(2, (4,))
    a.requires_grad_(needs[0])
    b.requires_grad_(needs[1])
    op = {arithmetic.Add: "__add__", arithmetic.Mul: "__mul__", arithmetic.Sub: "__sub__",
          arithmetic.Div: "__truediv__"}[cls]
    lean = getattr(a, op)(b)  # the operator takes _apply_pair
    general = _record_builtin(cls, (a, b))
    assert _node_summary(lean.grad_fn) == _node_summary(general.grad_fn)
    inputs = tuple(t for t in (a, b) if t.requires_grad)
    for gl, gg in zip(minigrad.autograd.grad(lean.sum(), inputs), minigrad.autograd.grad(general.sum(), inputs)):
        np.testing.assert_array_equal(gl.numpy(), gg.numpy())


@pytest.mark.parametrize("path", ["lean", "general"])
def test_a_saved_output_changed_in_place_is_caught_on_both_paths(path):
    x = _leaf(3)
    h = x * 1.0
    y = pointwise.Exp.apply(h) if path == "lean" else _record_builtin(pointwise.Exp, (h,))
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_relu_module_records_the_same_node_as_the_tensor_method():
    x = _leaf(4) - 1.2
    a = minigrad.nn.functional.relu(x)
    b = x.relu()
    assert _node_summary(a.grad_fn) == _node_summary(b.grad_fn)
    assert a.grad_fn.name() == "ReluBackward0"


def test_built_in_ops_inside_a_non_recording_custom_forward_record_nothing():
    # Function.apply runs forward with grad mode off even when it records nothing; the built-ins' shortcut
    # (_GRAD_OFF) must see that, or an op on a tensor passed inside a list would be recorded.
    class MulAll(minigrad.autograd.Function):
        @staticmethod
        def forward(ctx, x, others):
            for o in others:
                x = x * o
            return x

        @staticmethod
        def backward(ctx, g):
            return g, None

    a = minigrad.tensor([2.0], requires_grad=True)
    y = MulAll.apply(minigrad.tensor([3.0]), [a])
    assert not y.requires_grad and y.grad_fn is None
    assert minigrad.is_grad_enabled()


def test_version_counters_count_past_a_byte_and_stay_out_of_the_garbage_collector():
    """The counter is 8 bytes in a bytearray (untracked by the GC, for speed): it must still count like an int."""
    import gc

    x = _leaf(4)
    y = x.exp()  # saves its output: the output gets a counter, shared with the node
    counter = y._vc
    assert counter is not None and not gc.is_tracked(counter)
    gc.collect()  # a collection untracks tuples that hold only untracked objects
    assert not gc.is_tracked(y.grad_fn._saved[0])  # (array, counter, output_nr)
    view = y[0]
    with minigrad.no_grad():
        for _ in range(300):  # a single byte would overflow at 256
            view.add_(0.0)
    assert y._version == view._version == 300
    with pytest.raises(RuntimeError, match="is at version 300; expected version 0 instead"):
        y.sum().backward()
    z = _leaf(5)
    with minigrad.no_grad():
        for _ in range(70_000):
            z._bump_version()
    assert z._version == 70_000
    w = z * 2.0  # mul saves z at version 70,000: no error while it stays there
    w.sum().backward()
    np.testing.assert_array_equal(z.grad.numpy(), np.full((3, 4), 2.0))
