"""Wrong answers to chapter 8's exercises (patterns from real code)."""
from exercise_catalogue import Wrong, function


def _sign(forward: str, backward: str) -> str:
    return function("SignSTE", forward, backward)


_SIGN_FWD = ("        ctx.save_for_backward(x)\n"
             "        return torch.where(x >= 0, 1.0, -1.0).to(x.dtype)")
_X = "        x, = ctx.saved_tensors\n"


def _max(forward: str, backward: str) -> str:
    return f"""\
class MaxWithIndex(Function):
    @staticmethod
    def forward(ctx, x):
{forward}

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
{backward}
"""


_MAX_FWD = """\
        idx = torch.tensor(np.argmax(x.detach().numpy(), axis=1))
        rows = torch.arange(x.shape[0])
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        ctx.shape = x.shape
        return x[rows, idx], idx"""
_MAX_BWD = """\
        idx, = ctx.saved_tensors
        grad = torch.zeros(ctx.shape, dtype=grad_values.dtype)
        grad[torch.arange(ctx.shape[0]), idx] = grad_values
        return grad"""

WRONG = [
    # ---- Exercise 8.1: a clipped straight-through sign
    Wrong("ch08-ex1", "kink", _sign("        ctx.save_for_backward(x)\n"
                                    "        return torch.where(x > 0, 1.0, -1.0).to(x.dtype)",
                                    _X + "        return grad_output * (x.abs() <= 1).to(grad_output.dtype)"),
          says="at x = 0 the sign should be +1"),
    Wrong("ch08-ex1", "kink", _sign(_SIGN_FWD, _X + "        return grad_output * (x.abs() < 1).to(grad_output.dtype)"),
          says="at |x| = 1 exactly"),
    Wrong("ch08-ex1", "mask", _sign(_SIGN_FWD, "        return grad_output"), says="differ"),
    Wrong("ch08-ex1", "mask", _sign(_SIGN_FWD, _X + "        return grad_output * (x.abs() > 1).to(grad_output.dtype)"),
          says="differ"),
    Wrong("ch08-ex1", "grad-output", _sign(_SIGN_FWD, _X + "        return (x.abs() <= 1).to(x.dtype)"),
          says="grad_output"),
    Wrong("ch08-ex1", "saves", _sign("        out = torch.where(x >= 0, 1.0, -1.0).to(x.dtype)\n"
                                     "        ctx.save_for_backward(out)\n        return out",
                                     "        out, = ctx.saved_tensors\n"
                                     "        return grad_output * (out.abs() <= 1).to(grad_output.dtype)"),
          says="differ"),
    Wrong("ch08-ex1", "value", _sign("        ctx.save_for_backward(x)\n        return torch.where(x >= 0, 1.0, -1.0)",
                                     _X + "        return grad_output * (x.abs() <= 1).to(grad_output.dtype)"),
          says="float64"),
    Wrong("ch08-ex1", "correct", _sign("        ctx.save_for_backward(x)\n"
                                       "        return (x >= 0).to(x.dtype) * 2 - 1",
                                       _X + "        inside = x.abs() <= 1\n"
                                            "        return torch.where(inside, grad_output, torch.zeros_like(grad_output))")),
    # ---- Exercise 8.2: the maximum and its position
    Wrong("ch08-ex2", "value", _max(_MAX_FWD.replace("np.argmax", "np.argmin"), _MAX_BWD), says="indices should be"),
    Wrong("ch08-ex2", "value", _max(_MAX_FWD.replace("        ctx.mark_non_differentiable(idx)\n", ""), _MAX_BWD),
          says="mark_non_differentiable"),
    Wrong("ch08-ex2", "value", _max(_MAX_FWD.replace("        ctx.mark_non_differentiable(idx)\n", "").replace(
        "return x[rows, idx], idx", "return x[rows, idx], idx.to(x.dtype)"), _MAX_BWD), says="int64"),
    Wrong("ch08-ex2", "mask", _max(_MAX_FWD, "        return grad_values[:, None] * torch.ones(ctx.shape, "
                                             "dtype=grad_values.dtype)"),
          says="differ"),
    Wrong("ch08-ex2", "shape", _max(_MAX_FWD, "        return grad_values"), says="shape"),
    Wrong("ch08-ex2", "correct", _max("""\
        idx = x.argmax(dim=1)
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(x, idx)
        return x[torch.arange(x.shape[0]), idx], idx""", """\
        x, idx = ctx.saved_tensors
        grad = torch.zeros_like(x)
        grad[torch.arange(x.shape[0]), idx] = grad_values
        return grad, None""")),
]
