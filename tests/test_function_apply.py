"""How apply calls forward, as in PyTorch 2: grad mode off even when nothing is recorded,
keyword arguments, and forward's defaults in setup_context's ``inputs``."""
import minigrad
from minigrad.autograd import Function


class MulAll(Function):
    """Multiplies x by every tensor of a list: the list's tensors are not inputs autograd sees."""

    @staticmethod
    def forward(ctx, x, others):
        out = x.clone()
        for t in others:
            out = out * t
        return out

    @staticmethod
    def backward(ctx, g):
        return g, None


def test_forward_does_not_record_even_when_nothing_requires_grad_directly():
    a = minigrad.tensor([2.0], requires_grad=True)
    y = MulAll.apply(minigrad.tensor([3.0]), [a])
    assert not y.requires_grad and y.grad_fn is None  # PyTorch: False, None


def test_tensors_in_a_list_get_no_gradient():
    a = minigrad.tensor([2.0], requires_grad=True)
    x = minigrad.tensor([3.0], requires_grad=True)
    y = MulAll.apply(x, [a])
    assert len(y.grad_fn.next_functions) == 1
    y.backward()
    assert x.grad.tolist() == [1.0] and a.grad is None


class ScaleSplit(Function):
    @staticmethod
    def forward(x, k=2.0, shift=0.0):
        return x * k + shift

    @staticmethod
    def setup_context(ctx, inputs, output):
        ScaleSplit.seen = inputs
        ctx.k = inputs[1]

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None, None


def test_setup_context_sees_forwards_defaults():
    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    y = ScaleSplit.apply(x)
    assert len(ScaleSplit.seen) == 3 and ScaleSplit.seen[1:] == (2.0, 0.0)
    assert y.grad_fn.needs_input_grad == (True, False, False)
    y = ScaleSplit.apply(x, shift=1.0)
    assert ScaleSplit.seen[1:] == (2.0, 1.0) and y.tolist() == [3.0, 5.0]
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_old_style_keywords_bind_without_defaults():
    class Scale(Function):
        @staticmethod
        def forward(ctx, x, k=2.0):
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    x = minigrad.tensor([1.0], requires_grad=True)
    assert Scale.apply(x).grad_fn.needs_input_grad == (True,)           # as PyTorch: no defaults bound
    assert Scale.apply(x, k=3.0).grad_fn.needs_input_grad == (True, False)
