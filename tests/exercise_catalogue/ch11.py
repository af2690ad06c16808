"""Wrong answers to chapter 11's exercises (forward mode, function transforms, memory)."""
from exercise_catalogue import Wrong


def _sigmoid(forward_save: str, jvp_body: str) -> str:
    return ("class SigmoidFunction(Function):\n    @staticmethod\n    def forward(ctx, x):\n"
            "        y = 1 / (1 + torch.exp(-x))\n        ctx.save_for_backward(y)\n"
            f"{forward_save}        return y\n\n"
            "    @staticmethod\n    def backward(ctx, grad_output):\n        y, = ctx.saved_tensors\n"
            "        return grad_output * y * (1 - y)\n\n"
            f"    @staticmethod\n    def jvp(ctx, x_t):\n{jvp_body}\n")


_SAVE_Y = "        ctx.save_for_forward(y)\n"
_Y = "        y, = ctx.saved_tensors\n"

_SQ_FORWARD = ("    @staticmethod\n    def forward(x):\n"
               "        return torch.tensor(np.square(x.detach().numpy()))\n\n")
_SQ_SETUP = ("    @staticmethod\n    def setup_context(ctx, inputs, output):\n        x, = inputs\n"
             "        ctx.save_for_backward(x)\n\n")
_SQ_BACKWARD = ("    @staticmethod\n    def backward(ctx, grad_output):\n        x, = ctx.saved_tensors\n"
                "        return 2 * x * grad_output\n\n")


def _square(body: str, head: str = "") -> str:
    return "class SquareV(Function):\n" + head + body + "\n"


def _rule(ret: str) -> str:
    return f"    @staticmethod\n    def vmap(info, in_dims, x):\n        return {ret}\n"


def _ckpt(body: str) -> str:
    return "def checkpointed_forward(blocks, x):\n" + body + "\n"


WRONG = [
    # ---- Exercise 11.1: a jvp for the sigmoid
    Wrong("ch11-ex1", "sign", _sigmoid(_SAVE_Y, _Y + "        return -x_t * y * (1 - y)"), says="wrong sign"),
    Wrong("ch11-ex1", "grad-output", _sigmoid(_SAVE_Y, _Y + "        return y * (1 - y)"),
          says="multiply by the input's tangent"),
    Wrong("ch11-ex1", "factor", _sigmoid(_SAVE_Y, _Y + "        return x_t * y"), says="(1 - y) is missing"),
    Wrong("ch11-ex1", "saves", _sigmoid("", _Y + "        return x_t * y * (1 - y)"), says="save_for_forward"),
    Wrong("ch11-ex1", "saves", _sigmoid("        ctx.save_for_forward(x)\n",
                                        "        x, = ctx.saved_tensors\n        return x_t * x * (1 - x)"),
          says="uses the input x"),
    Wrong("ch11-ex1", "correct", _sigmoid("        ctx.save_for_forward(x)\n",
                                          "        x, = ctx.saved_tensors\n        s = torch.sigmoid(x)\n"
                                          "        return x_t * s * (1 - s)")),
    # ---- Exercise 11.2: a NumPy Function made vmap-compatible
    Wrong("ch11-ex2", "value", _square(
        "    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(x)\n"
        "        return torch.tensor(np.square(x.detach().numpy()))\n\n" + _SQ_BACKWARD
        + _rule("SquareV.apply(x), in_dims[0]")), says="setup_context"),
    Wrong("ch11-ex2", "value", _square(_SQ_FORWARD + _SQ_SETUP + _SQ_BACKWARD), says="vmap(info, in_dims, x)"),
    Wrong("ch11-ex2", "value", _square(_SQ_FORWARD + _SQ_SETUP + _SQ_BACKWARD,
                                       head="    generate_vmap_rule = True\n\n"),
          says="cannot see into NumPy"),
    Wrong("ch11-ex2", "sign", _square(
        _SQ_FORWARD + _SQ_SETUP
        + "    @staticmethod\n    def backward(ctx, grad_output):\n        x, = ctx.saved_tensors\n"
          "        return -2 * x * grad_output\n\n" + _rule("SquareV.apply(x), in_dims[0]")),
          says="sign"),
    Wrong("ch11-ex2", "value", _square(_SQ_FORWARD + _SQ_SETUP + _SQ_BACKWARD + _rule("SquareV.apply(x), 1")),
          says="out_dims"),
    Wrong("ch11-ex2", "value", _square(_SQ_FORWARD + _SQ_SETUP + _SQ_BACKWARD
                                       + _rule("SquareV.apply(x).sum(0), in_dims[0]")),
          says="returned (3,)"),
    Wrong("ch11-ex2", "correct", _square(_SQ_FORWARD + _SQ_SETUP + _SQ_BACKWARD
                                         + _rule("SquareV.apply(x), 0 if in_dims[0] is None else in_dims[0]"))),
    # ---- Exercise 11.3: checkpoint the blocks
    Wrong("ch11-ex3", "value", _ckpt("    for b in blocks:\n        x = b(x)\n    return x"), says="no saving"),
    Wrong("ch11-ex3", "value", _ckpt("    with torch.no_grad():\n        for b in blocks:\n"
                                     "            x = checkpoint(b, x, use_reentrant=False)\n    return x"),
          says="does not require grad"),
    Wrong("ch11-ex3", "value", _ckpt("    for b in blocks:\n        x = checkpoint(b(x), use_reentrant=False)\n"
                                     "    return x"), says="not the result b(x)"),
    Wrong("ch11-ex3", "value", _ckpt("    for b in blocks:\n        x = checkpoint(b, x, use_reentrant=True)\n"
                                     "    return x"), says="use_reentrant=False"),
    Wrong("ch11-ex3", "value", _ckpt("    for b in blocks:\n        x = checkpoint(b, x, use_reentrant=False)\n"
                                     "        return x"), says="differs from the plain loop"),
    Wrong("ch11-ex3", "correct", _ckpt("    for b in blocks:\n        x = checkpoint(b, x, use_reentrant=False,\n"
                                       "                       preserve_rng_state=False)\n    return x")),
    # the structure, read from the source: every block through checkpoint(..., use_reentrant=False)
    Wrong("ch11-ex3", "value", _ckpt("    x = checkpoint(blocks[0], x, use_reentrant=False)\n"
                                     "    for b in blocks[1:]:\n        x = b(x)\n    return x"),
          says="runs a block outside checkpoint"),
    Wrong("ch11-ex3", "value", _ckpt("    def run(h):\n        for b in blocks:\n            h = b(h)\n"
                                     "        return h\n    return checkpoint(run, x, use_reentrant=False)"),
          says="checkpoint's first argument should be one block"),
    Wrong("ch11-ex3", "value", _ckpt("    for b in blocks:\n        y = b(x)\n"
                                     "        checkpoint(b, x, use_reentrant=False)\n        x = y\n    return x"),
          says="runs a block outside checkpoint"),
    Wrong("ch11-ex3", "value", _ckpt("    for b in blocks:\n        x = checkpoint(b, x)\n    return x"),
          says="use_reentrant=False"),
    Wrong("ch11-ex3", "value", _ckpt("    return torch.utils.checkpoint.checkpoint_sequential(blocks, len(blocks), x,\n"
                                     "                                                        use_reentrant=False)"),
          says="runs its last segment without checkpoint"),
    Wrong("ch11-ex3", "value", "def checkpoint(function, x, use_reentrant=True):\n    return function(x)\n\n\n"
          + _ckpt("    for b in blocks:\n        x = checkpoint(b, x, use_reentrant=False)\n    return x"),
          says="is not minigrad's"),
    Wrong("ch11-ex3", "correct", _ckpt("    for i in range(len(blocks)):\n"
                                       "        x = checkpoint(blocks[i], x, use_reentrant=False)\n    return x")),
    Wrong("ch11-ex3", "correct", "import functools\n\n\n" + _ckpt(
        "    return functools.reduce(lambda h, b: checkpoint(b, h, use_reentrant=False), blocks, x)")),
]
