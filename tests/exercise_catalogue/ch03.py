"""Wrong answers to chapter 3's exercises."""
from exercise_catalogue import Wrong, function


def _leaky(forward: str, backward: str) -> str:
    return function("LeakyReLUFunction", forward, backward, args="input, negative_slope=0.01")


def _fn(name: str, forward: str, backward: str) -> str:
    return function(name, forward, backward, args="input")


_LEAKY_FWD = ("        ctx.save_for_backward(input)\n        ctx.negative_slope = negative_slope\n"
              "        return torch.where(input > 0, input, input * negative_slope)")
_IN = "        input, = ctx.saved_tensors\n"
_MASK_FWD = "        mask = input > 0\n        ctx.save_for_backward(mask)\n        return torch.where(mask, input, torch.zeros_like(input))"
_MASK_BWD = "        mask, = ctx.saved_tensors\n        return torch.where(mask, grad_output, torch.zeros_like(grad_output))"
_ZERO = "torch.zeros_like(grad_output)"

WRONG = [
    # ---- Exercise 3.1: Leaky ReLU
    Wrong("ch03-ex1", "kink", _leaky(_LEAKY_FWD, _IN + "        return torch.where(input >= 0, grad_output, "
                                                       "grad_output * ctx.negative_slope), None"),
          says="at exactly x = 0"),
    Wrong("ch03-ex1", "mask", _leaky(_LEAKY_FWD, _IN + "        return torch.where(input < 0, grad_output, "
                                                       "grad_output * ctx.negative_slope), None"),
          says="wrong side of the kink"),
    Wrong("ch03-ex1", "count", _leaky(_LEAKY_FWD, _IN + "        return torch.where(input > 0, grad_output, "
                                                        "grad_output * ctx.negative_slope)"),
          says="wrong number of returned gradients"),
    Wrong("ch03-ex1", "factor", _leaky(_LEAKY_FWD, _IN + "        return torch.where(input > 0, grad_output, "
                                                         "grad_output * 0.01), None"),
          says="wrong everywhere x < 0"),
    Wrong("ch03-ex1", "in-place", _leaky("        ctx.save_for_backward(input.clone())\n"
                                         "        ctx.negative_slope = negative_slope\n"
                                         "        input[input < 0] *= negative_slope\n        return input",
                                         _IN + "        return torch.where(input > 0, grad_output, "
                                               "grad_output * ctx.negative_slope), None"),
          says="in place"),
    # ---- Exercise 3.2: a one-byte mask
    Wrong("ch03-ex2", "saves", _fn("ReLUMaskFunction", "        ctx.save_for_backward(input)\n"
                                                       "        return torch.where(input > 0, input, torch.zeros_like(input))",
                                   _IN + f"        return torch.where(input > 0, grad_output, {_ZERO})"),
          says="bool mask"),
    Wrong("ch03-ex2", "kink", _fn("ReLUMaskFunction", "        mask = input >= 0\n        ctx.save_for_backward(mask)\n"
                                                      "        return torch.where(mask, input, torch.zeros_like(input))",
                                  _MASK_BWD), says="at exactly x = 0"),
    Wrong("ch03-ex2", "in-place", _fn("ReLUMaskFunction", "        mask = input > 0\n        ctx.save_for_backward(mask)\n"
                                                          "        input[~mask] = 0\n        return input", _MASK_BWD),
          says="in place"),
    Wrong("ch03-ex2", "mask", _fn("ReLUMaskFunction", _MASK_FWD,
                                  "        mask, = ctx.saved_tensors\n"
                                  f"        return torch.where(mask, {_ZERO}, grad_output)"),
          says="wrong side of the kink"),
    # ---- Exercise 3.3: ReLU6
    Wrong("ch03-ex3", "kink", _fn("ReLU6Function", "        inside = (input >= 0) & (input <= 6)\n"
                                                   "        ctx.save_for_backward(inside)\n        return input.clamp(0, 6)",
                                  f"        inside, = ctx.saved_tensors\n        return torch.where(inside, grad_output, {_ZERO})"),
          says="at exactly x = 0"),
    Wrong("ch03-ex3", "kink", _fn("ReLU6Function", "        inside = (input > 0) & (input <= 6)\n"
                                                   "        ctx.save_for_backward(inside)\n        return input.clamp(0, 6)",
                                  f"        inside, = ctx.saved_tensors\n        return torch.where(inside, grad_output, {_ZERO})"),
          says="at exactly x = 6"),
    Wrong("ch03-ex3", "mask", _fn("ReLU6Function", "        positive = input > 0\n"
                                                   "        ctx.save_for_backward(positive)\n        return input.clamp(0, 6)",
                                  f"        positive, = ctx.saved_tensors\n        return torch.where(positive, grad_output, {_ZERO})"),
          says="wrong everywhere x > 6"),
    Wrong("ch03-ex3", "in-place", _fn("ReLU6Function", "        inside = (input > 0) & (input < 6)\n"
                                                       "        ctx.save_for_backward(inside)\n        return input.clamp_(0, 6)",
                                      f"        inside, = ctx.saved_tensors\n        return torch.where(inside, grad_output, {_ZERO})"),
          says="in place"),
    Wrong("ch03-ex3", "correct", _fn("ReLU6Function", "        ctx.save_for_backward(input)\n        return input.clamp(0, 6)",
                                     _IN + f"        return torch.where((input > 0) & (input < 6), grad_output, {_ZERO})")),
]
