"""Whether a function transform (torch.func's grad, vjp, jacrev, jvp, jacfwd, hessian, vmap) is running.

Kept apart, without imports, so that ``Function.apply`` can read it cheaply and every transform
(reverse mode in minigrad.func, forward mode, vmap) shares one counter and one error text.
"""
from __future__ import annotations

import contextlib


class _State:
    depth = 0  # how many transforms are running the user's function right now (nesting adds up)


STATE = _State()

_SETUP_CONTEXT_REQUIRED = (
    "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...), it must "
    "override the setup_context staticmethod. For more details, please see "
    "https://pytorch.org/docs/main/notes/extending.func.html"
)

# minigrad's own Functions outside the op catalogue (convolution, pooling...) work under transforms
_ENGINE_MODULES = ("minigrad.nn.", "minigrad.autograd.", "minigrad.utils.", "minigrad._ops.", "minigrad.func.")


@contextlib.contextmanager
def transform(kind: str = ""):
    """Mark the user's function as running under a transform: ``with transform("vmap"): out = f(x)``.

    Why: PyTorch refuses an autograd.Function without ``setup_context`` under any transform; the
    check in ``Function.apply`` needs to know that one is active.
    """
    STATE.depth += 1
    try:
        yield
    finally:
        STATE.depth -= 1


def check_function_supported(cls) -> None:
    """PyTorch's error for a custom Function in the old style (``forward(ctx, ...)``) under a transform."""
    if not cls._new_style and not cls._builtin and not cls.__module__.startswith(_ENGINE_MODULES):
        raise RuntimeError(_SETUP_CONTEXT_REQUIRED + f"\n{cls.__name__} defines forward(ctx, ...) without "
                           "setup_context: write forward(*args) and setup_context(ctx, inputs, output).")
