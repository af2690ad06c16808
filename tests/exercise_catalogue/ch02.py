"""Wrong answers to chapter 2's exercises."""
from exercise_catalogue import Wrong, function as _fn



_CUBE_FWD = "        ctx.save_for_backward(x)\n        return x * x * x"
_X = "        x, = ctx.saved_tensors\n"
_MULADD_FWD = "        ctx.save_for_backward(a, b)\n        return a * b + c"
_NEEDS = "        a, b = ctx.saved_tensors\n        need_a, need_b, need_c = ctx.needs_input_grad\n"
_RELU_FWD = ("        mask = (x > 0).to(x.dtype)\n        ctx.save_for_backward(mask)\n"
             "        return x * 2 * mask")
_MASK = "        mask, = ctx.saved_tensors\n"

WRONG = [
    # ---- Exercise 2.1: Cube
    Wrong("ch02-ex1", "saved-intermediate", _fn("Cube", "        x2 = x * x\n        ctx.save_for_backward(x2)\n"
                                                        "        return x2 * x",
                                                "        x2, = ctx.saved_tensors\n        return grad_output * 3 * x2"),
          says="neither an input nor an output"),
    Wrong("ch02-ex1", "factor", _fn("Cube", _CUBE_FWD, _X + "        return grad_output * x * x"),
          says="constant factor"),
    Wrong("ch02-ex1", "sign", _fn("Cube", _CUBE_FWD, _X + "        return -grad_output * 3 * x * x"), says="wrong sign"),
    Wrong("ch02-ex1", "grad-output", _fn("Cube", _CUBE_FWD, _X + "        return 3 * x * x"),
          says="ignores grad_output"),
    Wrong("ch02-ex1", "in-place", _fn("Cube", "        ctx.save_for_backward(x.clone())\n        return x.mul_(x * x)",
                                      _X + "        return grad_output * 3 * x * x"), says="in place"),
    # ---- Exercise 2.2: Exp
    Wrong("ch02-ex2", "saves", _fn("Exp", "        ctx.save_for_backward(x)\n        return torch.exp(x)",
                                   _X + "        return grad_output * torch.exp(x)"),
          says="save the result of forward"),
    Wrong("ch02-ex2", "grad-output", _fn("Exp", "        out = torch.exp(x)\n        ctx.save_for_backward(out)\n"
                                                "        return out",
                                         "        out, = ctx.saved_tensors\n        return out"),
          says="ignores grad_output"),
    Wrong("ch02-ex2", "sign", _fn("Exp", "        out = torch.exp(x)\n        ctx.save_for_backward(out)\n        return out",
                                  "        out, = ctx.saved_tensors\n        return -grad_output * out"), says="wrong sign"),
    Wrong("ch02-ex2", "in-place", _fn("Exp", "        x[...] = torch.exp(x)\n        ctx.save_for_backward(x)\n        return x",
                                      "        out, = ctx.saved_tensors\n        return grad_output * out"),
          says="in place"),
    # ---- Exercise 2.3: MulAdd
    Wrong("ch02-ex3", "needs-input-grad", _fn("MulAdd", _MULADD_FWD,
                                              "        a, b = ctx.saved_tensors\n"
                                              "        return grad_output * b, grad_output * a, grad_output",
                                              args="a, b, c"), says="needs_input_grad"),
    Wrong("ch02-ex3", "swapped", _fn("MulAdd", _MULADD_FWD,
                                     _NEEDS + "        return (grad_output * a if need_a else None,\n"
                                              "                grad_output * b if need_b else None,\n"
                                              "                grad_output if need_c else None)", args="a, b, c"),
          says="belongs to b"),
    Wrong("ch02-ex3", "grad-output", _fn("MulAdd", _MULADD_FWD,
                                         _NEEDS + "        return (grad_output * b if need_a else None,\n"
                                                  "                grad_output * a if need_b else None,\n"
                                                  "                torch.ones_like(grad_output) if need_c else None)",
                                         args="a, b, c"), says="ignores grad_output"),
    Wrong("ch02-ex3", "count", _fn("MulAdd", _MULADD_FWD,
                                   _NEEDS + "        return (grad_output * b if need_a else None,\n"
                                            "                grad_output * a if need_b else None)", args="a, b, c"),
          says="wrong number of returned gradients"),
    # ---- Exercise 2.4: DoubleReLU
    Wrong("ch02-ex4", "kink", _fn("DoubleReLU", "        mask = (x >= 0).to(x.dtype)\n        ctx.save_for_backward(mask)\n"
                                                "        return x * 2 * mask",
                                  _MASK + "        return grad_output * 2 * mask"), says="at exactly x = 0"),
    Wrong("ch02-ex4", "factor", _fn("DoubleReLU", _RELU_FWD, _MASK + "        return grad_output * mask"),
          says="constant factor"),
    Wrong("ch02-ex4", "mask", _fn("DoubleReLU", "        ctx.save_for_backward(x)\n        return (x * 2).clamp(min=0)",
                                  _X + "        return grad_output * 2 * (x < 0).to(x.dtype)"),
          says="wrong side of the kink"),
    Wrong("ch02-ex4", "in-place", _fn("DoubleReLU", "        ctx.save_for_backward(x > 0)\n        x.mul_(2)\n"
                                                    "        return x.clamp_(min=0)",
                                      "        positive, = ctx.saved_tensors\n"
                                      "        return grad_output * 2 * positive.to(grad_output.dtype)"),
          says="in place"),
    Wrong("ch02-ex4", "correct", _fn("DoubleReLU", "        ctx.save_for_backward(x)\n        return (x * 2).clamp(min=0)",
                                     _X + "        return grad_output * 2 * (x > 0).to(x.dtype)")),
]
