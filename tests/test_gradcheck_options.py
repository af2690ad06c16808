"""gradcheck's options as PyTorch 2.13 has them: fast_mode, check_undefined_grad, check_batched_grad,
and the check that backward multiplies by grad_output (always on). Each case was run on torch 2.13
(the verdicts and first lines below are PyTorch's); tests/test_torch_oracle.py-style: where torch is
installed, the same cases run on it too."""
import warnings

import pytest

import minigrad
from minigrad.autograd import Function


def _functions(torch):
    class Cube(Function if torch is minigrad else torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 3 * x * x

    class CubeWrongFactor(Cube):
        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 2 * x * x

    class SumCubeForgetsGrad(Cube):           # one output: grad_output is always 1 in the Jacobian test
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return (x * x * x).sum()

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x * x                   # forgets g

    class NoMaterialize(Cube):                 # receives None, does not handle it
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class NoMaterializeHandled(NoMaterialize):
        @staticmethod
        def backward(ctx, g):
            return None if g is None else g * 2

    class OnesWhenUndefined(NoMaterialize):
        @staticmethod
        def backward(ctx, g):
            return torch.ones(3, dtype=torch.float64) if g is None else g * 2

    class ItemInBackward(Cube):                # leaves the tensor world: vmap cannot batch it
        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            scale = float(g.sum().item()) * 0 + 3
            return g * scale * x * x

    return locals()


ENGINES = [minigrad]
try:
    import torch as _torch
    ENGINES.append(_torch)
except ImportError:  # the oracle is optional
    pass


@pytest.fixture(params=ENGINES, ids=lambda e: e.__name__)
def engine(request):
    return request.param


def _x(torch):
    return torch.tensor([1.0, 2.0, -1.5], dtype=torch.float64, requires_grad=True)


def _outcome(torch, f, **kw):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return torch.autograd.gradcheck(f, (_x(torch),), **kw)
    except Exception as e:  # noqa: BLE001 - the type and first line are the result
        return f"{type(e).__name__}: {str(e).splitlines()[0]}"


def test_fast_mode_passes_a_right_backward_and_fails_a_wrong_one(engine):
    F = _functions(engine)
    assert _outcome(engine, F["Cube"].apply, fast_mode=True) is True
    got = _outcome(engine, F["CubeWrongFactor"].apply, fast_mode=True)
    assert got == "GradcheckError: Jacobian mismatch for output 0 with respect to input 0,"
    with pytest.raises(RuntimeError) as err:
        engine.autograd.gradcheck(F["CubeWrongFactor"].apply, (_x(engine),), fast_mode=True)
    text = str(err.value)
    assert "computed \nin fast mode" in text and "we recompute numerical and analytical jacobians in slow mode" in text
    assert "12.0000" in text and "8.0000" in text          # the slow-mode Jacobians: 3x² and 2x² at x = 2
    numerical = float(text.split("numerical:", 1)[1].split("\n", 1)[0])
    analytical = float(text.split("analytical:", 1)[1].split("\n", 1)[0])
    assert analytical == pytest.approx(2 / 3 * numerical)  # one number each: u^T J v


def test_a_backward_that_forgets_grad_output_fails_even_for_one_output(engine):
    F = _functions(engine)
    for kw in ({}, {"check_undefined_grad": False}, {"fast_mode": True}):
        assert _outcome(engine, F["SumCubeForgetsGrad"].apply, **kw) == \
            "GradcheckError: backward not multiplied by grad_output"


def test_check_undefined_grad_gives_none_to_a_function_that_asked_for_it(engine):
    F = _functions(engine)
    assert _outcome(engine, F["NoMaterialize"].apply) == \
        "TypeError: unsupported operand type(s) for *: 'NoneType' and 'int'"
    assert _outcome(engine, F["NoMaterialize"].apply, check_undefined_grad=False) is True
    assert _outcome(engine, F["NoMaterializeHandled"].apply) is True
    assert _outcome(engine, F["OnesWhenUndefined"].apply) == (
        "GradcheckError: Expected all input grads to be undefined or zero when all output grads are undefined "
        'or zero. Please look at "Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"')


def test_check_batched_grad_fails_a_backward_that_leaves_the_tensor_world(engine):
    F = _functions(engine)
    assert _outcome(engine, F["ItemInBackward"].apply) is True              # off by default
    got = _outcome(engine, F["ItemInBackward"].apply, check_batched_grad=True)
    assert got.startswith("GradcheckError: While computing batched gradients, got: Batching rule not "
                          "implemented for aten::item"), got
    assert _outcome(engine, F["Cube"].apply, check_batched_grad=True) is True


def test_minigrad_restores_the_tensor_methods_after_the_batched_check():
    F = _functions(minigrad)
    _outcome(minigrad, F["ItemInBackward"].apply, check_batched_grad=True)
    t = minigrad.tensor([2.0])
    assert t.item() == 2.0 and t.tolist() == [2.0] and float(t) == 2.0 and bool(t)


def test_calls_of_the_function_are_pytorchs(engine):
    """One call whose graph every backward check uses, 2n for the numerical Jacobian (+1), and in
    fast mode 2 per input: 2n + 2 and 4 calls, on both engines."""
    calls = []

    def counted(t):
        calls.append(1)
        return t * t * t

    x = engine.randn(50, dtype=engine.float64, requires_grad=True)
    assert engine.autograd.gradcheck(counted, (x,)) and len(calls) == 2 * 50 + 2
    calls.clear()
    assert engine.autograd.gradcheck(counted, (x,), fast_mode=True) and len(calls) == 4
