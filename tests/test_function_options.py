"""PyTorch 2.13's class options of a custom Function: ``clear_saved_tensors_on_access`` and
``boxed_grads_call``; and ``grad_fn.apply`` of a custom node. Each test runs on minigrad and, when it
is installed, on PyTorch (the oracle)."""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import minigrad
from _engines import LIBS

ONCE = "saved_tensors can only be accessed once when clear_saved_tensors_on_access=True"


def _exp_fn(T, clear: bool, reads: int = 1):
    class Exp(T.autograd.Function):
        clear_saved_tensors_on_access = clear

        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            for _ in range(reads):
                _, y = ctx.saved_tensors
            return g * y

    return Exp


@LIBS
def test_the_defaults_are_false(T):
    assert T.autograd.Function.clear_saved_tensors_on_access is False
    assert T.autograd.Function.boxed_grads_call is False


@LIBS
def test_one_read_gives_the_gradient(T):
    x = T.tensor([0.0, 1.0], dtype=T.float64, requires_grad=True)
    _exp_fn(T, True).apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.tolist(), np.exp([0.0, 1.0]))


@LIBS
def test_a_second_read_raises(T):
    x = T.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=ONCE):
        _exp_fn(T, True, reads=2).apply(x).sum().backward()
    _exp_fn(T, False, reads=2).apply(x).sum().backward()  # without the option: read as often as you like


@LIBS
def test_a_second_backward_through_a_retained_graph_raises_the_same(T):
    x = T.ones(2, requires_grad=True)
    y = _exp_fn(T, True).apply(x).sum()
    y.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match=ONCE):
        y.backward()


@LIBS
def test_reading_from_outside_counts_too(T):
    y = _exp_fn(T, True).apply(T.ones(2, requires_grad=True))
    assert len(y.grad_fn.saved_tensors) == 2
    with pytest.raises(RuntimeError, match=ONCE):
        y.grad_fn.saved_tensors


@LIBS
def test_gradcheck_raises_with_the_option_and_passes_without(T):
    x = T.tensor([0.3, -0.2], dtype=T.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match=ONCE):
        T.autograd.gradcheck(_exp_fn(T, True).apply, (x,))
    assert T.autograd.gradcheck(_exp_fn(T, False).apply, (x,))


def test_the_read_lets_go_of_the_saved_tensors():
    """The node keeps no reference after the read: an intermediate saved in forward dies with backward's copy."""
    refs = []

    class Square(minigrad.autograd.Function):
        clear_saved_tensors_on_access = True

        @staticmethod
        def forward(ctx, x):
            two_x = x * 2  # an intermediate: neither input nor output
            ctx.save_for_backward(two_x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (two_x,) = ctx.saved_tensors
            refs.append(weakref.ref(two_x))
            out = g * two_x
            del two_x
            gc.collect()
            refs.append(refs[0]() is None)
            return out

    x = minigrad.tensor([1.0, 3.0], requires_grad=True)
    y = Square.apply(x)
    node = y.grad_fn
    y.sum().backward(retain_graph=True)
    assert refs[1] is True  # freed inside backward, while the graph is still retained
    assert node is not None and x.grad.tolist() == [2.0, 6.0]


def _boxed(T, log):
    class Pair(T.autograd.Function):
        boxed_grads_call = True

        @staticmethod
        def forward(ctx, a, b):
            return a * 2, b * 3

        @staticmethod
        def backward(ctx, grads):
            log.append((type(grads).__name__, len(grads), [None if g is None else g.tolist() for g in grads]))
            ga, gb = grads
            grads.clear()  # the point of the option: backward may drop the gradients it no longer needs
            return (None if ga is None else ga * 2), (None if gb is None else gb * 3)

    return Pair


@LIBS
def test_boxed_grads_call_passes_one_list(T):
    log = []
    a, b = T.ones(2, requires_grad=True), T.ones(2, requires_grad=True)
    p, q = _boxed(T, log).apply(a, b)
    (p.sum() + 2 * q.sum()).backward()
    assert log == [("list", 2, [[1.0, 1.0], [2.0, 2.0]])]
    assert a.grad.tolist() == [2.0, 2.0] and b.grad.tolist() == [6.0, 6.0]
    p, q = _boxed(T, log).apply(a, b)
    p.sum().backward()  # the unused output's gradient is materialized as zeros, in the list
    assert log[-1] == ("list", 2, [[1.0, 1.0], [0.0, 0.0]])


@LIBS
def test_grad_fn_apply_of_a_custom_node(T):
    log = []
    a, b = T.ones(2, requires_grad=True), T.ones(2, requires_grad=True)
    p, _ = _boxed(T, log).apply(a, b)
    ga, gb = p.grad_fn.apply(T.ones(2), T.ones(2))
    assert ga.tolist() == [2.0, 2.0] and gb.tolist() == [3.0, 3.0]
    assert log == [("list", 2, [[1.0, 1.0], [1.0, 1.0]])]
    y = _exp_fn(T, False).apply(T.zeros(2, requires_grad=True))
    assert y.grad_fn.apply(T.ones(2)).tolist() == [1.0, 1.0]


@LIBS
def test_a_boxed_subclass_is_not_boxed_twice(T):
    log = []
    Pair = _boxed(T, log)

    class Child(Pair):
        pass

    a, b = T.ones(2, requires_grad=True), T.ones(2, requires_grad=True)
    p, q = Child.apply(a, b)
    (p + q).sum().backward()
    assert log == [("list", 2, [[1.0, 1.0], [1.0, 1.0]])]
