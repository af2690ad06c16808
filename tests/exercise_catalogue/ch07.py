"""Wrong answers to chapter 7's exercises (double backward)."""
from exercise_catalogue import Wrong


def _exp_twice(inner_backward: str, outer_backward: str = "        x, = ctx.saved_tensors\n"
               "        return ExpNumPyBackward.apply(grad_output, x)") -> str:
    return f"""\
class ExpNumPyBackward(Function):
    @staticmethod
    def forward(ctx, grad_output, x):
        ctx.save_for_backward(grad_output, x)
        return torch.from_numpy(np.exp(x.detach().numpy()) * grad_output.detach().numpy())

    @staticmethod
    def backward(ctx, gg):
{inner_backward}


class ExpTwice(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.from_numpy(np.exp(x.detach().numpy()))

    @staticmethod
    def backward(ctx, grad_output):
{outer_backward}
"""


_INNER = "        grad_output, x = ctx.saved_tensors\n        ex = torch.exp(x)\n"


def _logcosh(forward_save: str, backward: str) -> str:
    return f"""\
class LogCoshFixed(Function):
    @staticmethod
    def forward(ctx, x):
{forward_save}
        a = x.abs()
        return a + torch.log(1 + torch.exp(-2 * a)) - 0.6931471805599453

    @staticmethod
    def backward(ctx, grad_output):
{backward}
"""


def _hvp(body: str, by_hand: str = "by_hand = 12 * x0.detach() ** 2 * v0") -> str:
    return f"def hessian_vector_product(f, x, v):\n{body}\n\n\n{by_hand}\n"


_HVP = ("    (grad,) = torch.autograd.grad(f(x), x, create_graph=True)\n"
        "    (Hv,) = torch.autograd.grad((grad * v).sum(), x)\n    return Hv")

WRONG = [
    # ---- Exercise 7.1: twice differentiable
    Wrong("ch07-ex1", "swapped", _exp_twice(_INNER + "        return gg * ex * grad_output, gg * ex"),
          says="second"),
    Wrong("ch07-ex1", "factor", _exp_twice(_INNER + "        return gg * ex, 2 * gg * ex * grad_output"),
          says="second"),
    Wrong("ch07-ex1", "saved-intermediate", _exp_twice(
        _INNER + "        return gg * ex, gg * ex * grad_output",
        "        x, = ctx.saved_tensors\n"
        "        return torch.from_numpy(np.exp(x.detach().numpy()) * grad_output.detach().numpy())"),
          says="no graph"),
    Wrong("ch07-ex1", "count", _exp_twice(_INNER + "        return gg * ex * grad_output"),
          says="incorrect number of gradients"),
    Wrong("ch07-ex1", "correct", _exp_twice(
        "        grad_output, x = ctx.saved_tensors\n"
        "        return gg * torch.exp(x), gg * torch.exp(x) * grad_output")),
    # ---- Exercise 7.2: find the double-backward bug
    Wrong("ch07-ex2", "saved-intermediate", _logcosh("        ctx.save_for_backward(torch.tanh(x))",
                                                     "        t, = ctx.saved_tensors\n        return grad_output * t"),
          says="intermediate saved in forward"),
    Wrong("ch07-ex2", "saved-intermediate", _logcosh(
        "        ctx.save_for_backward(x)\n        ctx.t = torch.tanh(x)",
        "        return grad_output * ctx.t"), says="intermediate saved in forward"),
    Wrong("ch07-ex2", "sign", _logcosh("        ctx.save_for_backward(x)",
                                       "        x, = ctx.saved_tensors\n        return -grad_output * torch.tanh(x)"),
          says="wrong sign"),
    Wrong("ch07-ex2", "unstable", """\
class LogCoshFixed(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log((torch.exp(x) + torch.exp(-x)) / 2)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        e, f = torch.exp(x), torch.exp(-x)
        return grad_output * (e - f) / (e + f)
""", says="800"),
    Wrong("ch07-ex2", "correct", _logcosh(
        "        ctx.save_for_backward(x)",
        "        x, = ctx.saved_tensors\n        return grad_output * (1 - 2 / (torch.exp(2 * x) + 1))")),
    # ---- Exercise 7.3: Hessian-vector products
    Wrong("ch07-ex3", "value", _hvp("    (grad,) = torch.autograd.grad(f(x), x)\n"
                                    "    (Hv,) = torch.autograd.grad((grad * v).sum(), x)\n    return Hv"),
          says="raised"),
    Wrong("ch07-ex3", "value", _hvp("    (grad,) = torch.autograd.grad(f(x), x, create_graph=True)\n"
                                    "    (Hv,) = torch.autograd.grad(grad.sum(), x)\n    return Hv * v"),
          says="expected Hv"),
    Wrong("ch07-ex3", "value", _hvp("    (grad,) = torch.autograd.grad(f(x), x, create_graph=True)\n"
                                    "    (Hv,) = torch.autograd.grad((grad * v).sum(), x, create_graph=True)\n"
                                    "    return Hv"), says="still has a graph"),
    Wrong("ch07-ex3", "value", _hvp("    f(x).backward(create_graph=True)\n"
                                    "    (Hv,) = torch.autograd.grad((x.grad * v).sum(), x)\n    return Hv"),
          says="x.grad"),
    Wrong("ch07-ex3", "value", _hvp(_HVP, by_hand="by_hand = 6 * x0.detach() * v0"), says="by_hand"),
]
