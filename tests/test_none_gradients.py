"""A node that only None reaches still runs, as in PyTorch's engine.

When a backward returns None for an input, PyTorch does not drop the nodes below it: a custom
Function there is still called, with zeros (or with None under ``set_materialize_grads(False)``),
and what it returns flows on. A built-in op passes None on. Each scenario records which
backwards ran and with what, and the leaves' ``.grad``; the expectations are written out, and
the same scenario on PyTorch (when installed) must record the same.
"""
from __future__ import annotations

import pytest

import minigrad

try:
    import torch
except ImportError:  # the oracle half is skipped without PyTorch
    torch = None


def _scenario(lib, kind: str):
    Function = lib.autograd.Function
    calls: list = []

    class Upstream(Function):  # returns None: no gradient for its input
        @staticmethod
        def forward(ctx, y):
            return y * 3

        @staticmethod
        def backward(ctx, g):
            calls.append("Upstream")
            return None

    class Down(Function):
        @staticmethod
        def forward(ctx, x):
            if kind == "no-materialize":
                ctx.set_materialize_grads(False)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            calls.append(("Down", None if g is None else g.tolist()))
            return None if g is None else g * 2 + 1

    class Pair(Function):  # two outputs, only the first used
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 4

        @staticmethod
        def backward(ctx, g1, g2):
            calls.append(("Pair", None if g1 is None else g1.tolist(), None if g2 is None else g2.tolist()))
            return g1 + 1

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    if kind == "leaf-hook":  # the engine path that follows PyTorch's node order exactly
        x.register_hook(lambda g: calls.append(("hook", g.tolist())))
    if kind == "through-builtin":
        loss = Upstream.apply(Down.apply(x) * 5).sum()
    elif kind == "pair":
        loss = Upstream.apply(Pair.apply(x)[0]).sum()
    else:
        loss = Upstream.apply(Down.apply(x)).sum()
    if kind == "grad":
        (gx,) = lib.autograd.grad(loss, x)
        return calls, gx.tolist()
    loss.backward()
    return calls, None if x.grad is None else x.grad.tolist()


EXPECTED = {
    "plain": (["Upstream", ("Down", [0.0, 0.0])], [1.0, 1.0]),
    "leaf-hook": (["Upstream", ("Down", [0.0, 0.0]), ("hook", [1.0, 1.0])], [1.0, 1.0]),
    "no-materialize": (["Upstream", ("Down", None)], None),
    "through-builtin": (["Upstream", ("Down", [0.0, 0.0])], [1.0, 1.0]),
    "pair": (["Upstream", ("Pair", [0.0, 0.0], [0.0, 0.0])], [1.0, 1.0]),
    "grad": (["Upstream", ("Down", [0.0, 0.0])], [1.0, 1.0]),
}


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_minigrad_runs_a_node_that_only_none_reaches(kind):
    assert _scenario(minigrad, kind) == EXPECTED[kind]


@pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")
@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_pytorch_does_the_same(kind):
    assert _scenario(torch, kind) == EXPECTED[kind]


def test_a_node_reached_by_none_and_by_a_gradient_runs_once_with_the_gradient():
    calls = []

    class Quiet(minigrad.autograd.Function):
        @staticmethod
        def forward(ctx, y):
            return y.clone()

        @staticmethod
        def backward(ctx, g):
            return None

    class Down(minigrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            calls.append(g.tolist())
            return g

    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    d = Down.apply(x)
    (Quiet.apply(d).sum() + (d * 3).sum()).backward()
    assert calls == [[3.0, 3.0]]
    assert x.grad.tolist() == [3.0, 3.0]
