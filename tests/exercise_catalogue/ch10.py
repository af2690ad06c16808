"""Wrong answers to chapter 10's exercises (the capstone)."""
from exercise_catalogue import Wrong, function

# the digits (section 1): Exercise 10.3's demonstration trains on X_train, y_train
PRELUDE_CELLS = ("digits-load", "digits-split")

_FUSED_FWD = ("        pre = x @ weight.T + bias\n        mask = pre > 0\n"
              "        ctx.save_for_backward(x, weight, mask)\n"
              "        return torch.where(mask, pre, torch.zeros_like(pre))")
_FUSED_IN = "        x, weight, mask = ctx.saved_tensors\n"
_MASKED = "        g = torch.where(mask, grad_output, torch.zeros_like(grad_output))\n"
_NEEDS = ("        grad_x = grad_weight = grad_bias = None\n"
          "        if ctx.needs_input_grad[0]:\n            grad_x = g @ weight\n"
          "        if ctx.needs_input_grad[1]:\n            grad_weight = g.T @ x\n"
          "        if ctx.needs_input_grad[2]:\n            grad_bias = g.sum(0)\n"
          "        return grad_x, grad_weight, grad_bias")


def _fused(forward: str, backward: str) -> str:
    return function("LinearReLUFunction", forward, backward, args="x, weight, bias")


def _step(body: str) -> str:
    return "def sgd_step(parameters, lr, weight_decay):\n" + body + "\n"


_NO_GRAD = "    with torch.no_grad():\n        for p in parameters:\n"


def _fixed(backward_return: str, culprit: str = "SuspectCrossEntropy") -> str:
    return (f'culprit = "{culprit}"\n\n\n'
            + function("FixedFunction",
                       "        log_p = logits.log_softmax(1)\n        ctx.save_for_backward(log_p, target)\n"
                       "        return -log_p[torch.arange(len(target)), target].mean()",
                       "        log_p, target = ctx.saved_tensors\n        grad = log_p.exp()\n"
                       "        grad[torch.arange(len(target)), target] -= 1\n"
                       f"        return {backward_return}",
                       args="logits, target"))


_RIGHT_FIX = "grad * (grad_output / len(target)), None"

WRONG = [
    # ---- Exercise 10.1: a fused Linear + ReLU layer
    Wrong("ch10-ex1", "mask", _fused(_FUSED_FWD, _FUSED_IN + "        g = torch.where(mask, torch.zeros_like("
                                                              "grad_output), grad_output)\n" + _NEEDS),
          says="gradient for x"),
    Wrong("ch10-ex1", "grad-output", _fused(_FUSED_FWD, _FUSED_IN + "        g = grad_output\n" + _NEEDS),
          says="gradient for x"),
    Wrong("ch10-ex1", "swapped", _fused(_FUSED_FWD, _FUSED_IN + _MASKED
                                        + _NEEDS.replace("grad_weight = g.T @ x", "grad_weight = x.T @ g")),
          says="shape"),
    Wrong("ch10-ex1", "count", _fused(_FUSED_FWD, _FUSED_IN + _MASKED + "        return g @ weight, g.T @ x"),
          says="wrong number of returned gradients"),
    Wrong("ch10-ex1", "needs", _fused(_FUSED_FWD, _FUSED_IN + _MASKED
                                      + "        return g @ weight, g.T @ x, g.sum(0)"),
          says="needs_input_grad"),
    Wrong("ch10-ex1", "in-place", _fused("        pre = x @ weight.T + bias\n        mask = pre > 0\n"
                                         "        ctx.save_for_backward(x, weight, mask)\n"
                                         "        x[x < 0] = 0\n"
                                         "        return torch.where(mask, pre, torch.zeros_like(pre))",
                                         _FUSED_IN + _MASKED + _NEEDS),
          says="in place"),
    Wrong("ch10-ex1", "correct", _fused("        out = (x @ weight.T + bias).clamp(min=0)\n"
                                        "        ctx.save_for_backward(x, weight, out)\n        return out",
                                        "        x, weight, out = ctx.saved_tensors\n"
                                        "        g = grad_output * (out > 0).to(grad_output.dtype)\n" + _NEEDS)),
    # ---- Exercise 10.2: weight decay by hand
    Wrong("ch10-ex2", "factor", _step(_NO_GRAD + "            p -= lr * p.grad + weight_decay * p"),
          says="not multiplied by the learning rate"),
    Wrong("ch10-ex2", "sign", _step(_NO_GRAD + "            p += lr * (p.grad + weight_decay * p)"),
          says="uphill"),
    Wrong("ch10-ex2", "value", _step(_NO_GRAD + "            p = p - lr * (p.grad + weight_decay * p)"),
          says="did not change"),
    Wrong("ch10-ex2", "grad-mode", _step("    for p in parameters:\n"
                                         "        p -= lr * (p.grad + weight_decay * p)"),
          says="no_grad"),
    Wrong("ch10-ex2", "factor", _step(_NO_GRAD + "            p -= lr * (p.grad + 2 * weight_decay * p)"),
          says="twice too large"),
    Wrong("ch10-ex2", "value", _step(_NO_GRAD + "            p -= lr * p.grad"),
          says="weight decay term weight_decay * p is missing"),
    Wrong("ch10-ex2", "correct", _step(_NO_GRAD + "            p.mul_(1 - lr * weight_decay)\n"
                                                  "            p.sub_(lr * p.grad)")),
    # ---- Exercise 10.3: the Function that makes training diverge
    Wrong("ch10-ex3", "value", _fixed(_RIGHT_FIX, culprit="SuspectReLU"), says="SuspectReLU is correct"),
    Wrong("ch10-ex3", "value", _fixed(_RIGHT_FIX, culprit="SuspectLinear"), says="SuspectLinear is correct"),
    Wrong("ch10-ex3", "factor", _fixed("grad * grad_output, None"), says="6 times too large"),
    Wrong("ch10-ex3", "sign", _fixed("-grad * (grad_output / len(target)), None"), says="wrong sign"),
    Wrong("ch10-ex3", "count", _fixed("grad * (grad_output / len(target))"),
          says="wrong number of returned gradients"),
    # the old solution: the right gradient, but log_p saved (chapter 7's double-backward bug)
    Wrong("ch10-ex3", "saved-intermediate", _fixed(_RIGHT_FIX), says="saves an intermediate"),
    Wrong("ch10-ex3", "in-place", 'culprit = "SuspectCrossEntropy"\n\n\n'
          + function("FixedFunction",
                     "        ctx.save_for_backward(logits, target)\n"
                     "        return -logits.log_softmax(1)[torch.arange(len(target)), target].mean()",
                     "        logits, target = ctx.saved_tensors\n"
                     "        grad = logits.softmax(1)\n"
                     "        grad[torch.arange(len(target)), target] -= 1\n"
                     "        return grad * (grad_output / len(target)), None",
                     args="logits, target"), says="modified by an inplace operation"),
    Wrong("ch10-ex3", "correct", 'culprit = "SuspectCrossEntropy"\n\n\n'
          + function("FixedFunction",
                     "        ctx.save_for_backward(logits, target)\n"
                     "        return torch.nn.functional.cross_entropy(logits, target)",
                     "        logits, target = ctx.saved_tensors\n"
                     "        onehot = torch.zeros_like(logits)\n"
                     "        onehot[torch.arange(len(target)), target] = 1\n"
                     "        p = logits.softmax(1)\n"
                     "        return (p - onehot) * grad_output / len(target), None",
                     args="logits, target")),
]
