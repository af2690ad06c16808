"""Wrong answers to chapter 6's exercises (beyond elementwise)."""
from exercise_catalogue import Wrong


def _bmm(grad_a: str, grad_b: str, needs: bool = True) -> str:
    if needs:
        body = (f"        grad_a = grad_b = None\n"
                f"        if ctx.needs_input_grad[0]:\n            grad_a = {grad_a}\n"
                f"        if ctx.needs_input_grad[1]:\n            grad_b = {grad_b}\n")
    else:
        body = f"        grad_a = {grad_a}\n        grad_b = {grad_b}\n"
    return f"""\
class BatchedMatmul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
{body}        return grad_a, grad_b
"""


_GA = "grad_output @ b.transpose(-1, -2)"
_GB = "a.transpose(-1, -2) @ grad_output"


def _scale_shift(forward: str, backward: str, wrapper: str = "    return ScaleShift.apply(x, scale, shift)") -> str:
    return f"""\
class ScaleShift(Function):
    @staticmethod
    def forward(ctx, x, scale, shift):
{forward}

    @staticmethod
    def backward(ctx, grad_output):
{backward}


def scale_shift(x, scale=None, shift=None):
{wrapper}
"""


_SS_FWD = ("        ctx.save_for_backward(x, scale)\n"
           "        out = x.clone() if scale is None else x * scale\n"
           "        return out if shift is None else out + shift")
_SS_BWD = """\
        x, scale = ctx.saved_tensors
        grad_x = grad_scale = grad_shift = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output if scale is None else grad_output * scale
        if ctx.needs_input_grad[1]:
            grad_scale = (grad_output * x).sum(0)
        if ctx.needs_input_grad[2]:
            grad_shift = grad_output.sum(0)
        return grad_x, grad_scale, grad_shift"""

WRONG = [
    # ---- Exercise 6.1: batched matmul
    Wrong("ch06-ex1", "swapped", _bmm("grad_output @ b", _GB), says="raised"),
    Wrong("ch06-ex1", "swapped", _bmm("b.transpose(-1, -2) @ grad_output", _GB), says="raised"),
    Wrong("ch06-ex1", "factor", _bmm("2 * grad_output @ b.transpose(-1, -2)", _GB), says="constant factor"),
    Wrong("ch06-ex1", "grad-output", _bmm(_GA, "a.transpose(-1, -2) @ torch.ones_like(grad_output)"),
          says="ignores grad_output"),
    Wrong("ch06-ex1", "value", _bmm(_GA, _GB, needs=False), says="needs_input_grad"),
    Wrong("ch06-ex1", "value", _bmm(_GA, "(a.transpose(-1, -2) @ grad_output).sum(0, keepdim=True).expand(b.shape)"),
          says="differs"),
    Wrong("ch06-ex1", "correct", _bmm("torch.matmul(grad_output, b.transpose(1, 2))",
                                      "torch.matmul(a.transpose(1, 2), grad_output)")),
    # ---- Exercise 6.2: optional scale and shift
    Wrong("ch06-ex2", "count", _scale_shift(_SS_FWD, _SS_BWD.replace(
        "return grad_x, grad_scale, grad_shift", "return grad_x, grad_scale")), says="incorrect number of gradients"),
    Wrong("ch06-ex2", "value", _scale_shift(_SS_FWD, _SS_BWD.replace(
        "grad_scale = (grad_output * x).sum(0)", "grad_scale = grad_output * x").replace(
        "grad_shift = grad_output.sum(0)", "grad_shift = grad_output")), says="sum over the batch"),
    Wrong("ch06-ex2", "value", _scale_shift(_SS_FWD, _SS_BWD.replace(
        "grad_x = grad_output if scale is None else grad_output * scale", "grad_x = grad_output")),
          says="gradient for x"),
    Wrong("ch06-ex2", "value", _scale_shift(_SS_FWD, _SS_BWD,
                                            wrapper="    return ScaleShift.apply(x, shift, scale)"),
          says="differs"),
    Wrong("ch06-ex2", "in-place", _scale_shift(
        "        ctx.save_for_backward(x.clone(), scale)\n"
        "        out = x\n        if scale is not None:\n            out *= scale\n"
        "        if shift is not None:\n            out += shift\n        return out", _SS_BWD), says="in place"),
    # ---- Exercise 6.3: should this be a Function?
    Wrong("ch06-ex3", "value", 'tools = {"a": "function", "b": "function", "c": "hook", "d": "module", '
                               '"e": "function", "f": "function"}', says="a: not 'function'"),
    Wrong("ch06-ex3", "value", 'tools = {"a": "composition", "b": "function", "c": "function", "d": "module", '
                               '"e": "composition", "f": "module"}', says="3 of 6 right"),
    Wrong("ch06-ex3", "value", 'tools = {"a": "composition", "b": "function", "c": "hook", "d": "Module", '
                               '"e": "function", "f": "function"}', says="must be one of"),
    Wrong("ch06-ex3", "value", 'tools = {"a": "composition", "b": "function"}', says="exactly once"),
]
