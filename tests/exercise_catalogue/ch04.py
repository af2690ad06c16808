"""Wrong answers to chapter 4's exercises."""
from exercise_catalogue import Wrong, function


def _fn(name: str, forward: str, backward: str) -> str:
    return function(name, forward, backward, args="input")


_TANH_FWD = "        output = torch.tanh(input)\n        ctx.save_for_backward(output)\n        return output"
_OUT = "        output, = ctx.saved_tensors\n"
_IN = "        input, = ctx.saved_tensors\n"
_SOFTPLUS_FWD = ("        ctx.save_for_backward(input)\n"
                 "        return input.clamp(min=0) + torch.log1p(torch.exp(-input.abs()))")
_SILU_BWD = ("        input, = ctx.saved_tensors\n        sig = torch.sigmoid(input)\n"
             "        return grad_output * sig * (1 + input * (1 - sig))")

WRONG = [
    # ---- Exercise 4.1: Tanh
    Wrong("ch04-ex1", "saves", _fn("TanhFunction", "        ctx.save_for_backward(input)\n        return torch.tanh(input)",
                                   _IN + "        return grad_output * (1 - torch.tanh(input) ** 2)"),
          says="forward saved its input"),
    Wrong("ch04-ex1", "sign", _fn("TanhFunction", _TANH_FWD, _OUT + "        return grad_output * (output * output - 1)"),
          says="wrong sign"),
    Wrong("ch04-ex1", "grad-output", _fn("TanhFunction", _TANH_FWD, _OUT + "        return 1 - output * output"),
          says="ignores grad_output"),
    Wrong("ch04-ex1", "factor", _fn("TanhFunction", _TANH_FWD, _OUT + "        return 2 * grad_output * (1 - output * output)"),
          says="constant factor"),
    # ---- Exercise 4.2: Softplus
    Wrong("ch04-ex2", "unstable", _fn("SoftplusFunction", "        ctx.save_for_backward(input)\n"
                                                          "        return torch.log(1 + torch.exp(input))",
                                      _IN + "        return grad_output * torch.sigmoid(input)"),
          says="is not stable"),
    Wrong("ch04-ex2", "unstable", _fn("SoftplusFunction", "        ctx.save_for_backward(input)\n"
                                                          "        z = torch.exp(-input.abs())\n"
                                                          "        return input.clamp(min=0) + torch.log(1 + z)",
                                      _IN + "        return grad_output * torch.sigmoid(input)"),
          says="torch.log1p"),
    Wrong("ch04-ex2", "saved-intermediate", _fn("SoftplusFunction",
                                                "        sig = torch.sigmoid(input)\n        ctx.save_for_backward(sig)\n"
                                                "        return input.clamp(min=0) + torch.log1p(torch.exp(-input.abs()))",
                                                "        sig, = ctx.saved_tensors\n        return grad_output * sig"),
          says="neither an input nor an output"),
    Wrong("ch04-ex2", "sign", _fn("SoftplusFunction", _SOFTPLUS_FWD, _IN + "        return -grad_output * torch.sigmoid(input)"),
          says="wrong sign"),
    # ---- Exercise 4.3: SiLU
    Wrong("ch04-ex3", "saved-intermediate", _fn("SiLUFunction",
                                                "        sig = torch.sigmoid(input)\n        ctx.save_for_backward(input, sig)\n"
                                                "        return input * sig",
                                                "        input, sig = ctx.saved_tensors\n"
                                                "        return grad_output * sig * (1 + input * (1 - sig))"),
          says="neither an input nor an output"),
    Wrong("ch04-ex3", "unstable", _fn("SiLUFunction", "        ctx.save_for_backward(input)\n"
                                                      "        return input / (1 + torch.exp(-input))",
                                      "        input, = ctx.saved_tensors\n        sig = 1 / (1 + torch.exp(-input))\n"
                                      "        return grad_output * sig * (1 + input * (1 - sig))"),
          says="is not stable"),
    Wrong("ch04-ex3", "values", _fn("SiLUFunction", "        ctx.save_for_backward(input)\n"
                                                    "        return input * torch.sigmoid(input)",
                                    _IN + "        return grad_output * torch.sigmoid(input)   # forgets the product rule"),
          says="differs from the expected value"),
    Wrong("ch04-ex3", "sign", _fn("SiLUFunction", "        ctx.save_for_backward(input)\n"
                                                  "        return input * torch.sigmoid(input)",
                                  _SILU_BWD.replace("return grad_output", "return -grad_output")),
          says="wrong sign"),
]
