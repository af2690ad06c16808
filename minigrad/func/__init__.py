"""minigrad.func: PyTorch's function transforms (torch.func).

grad, grad_and_value, vjp, jacrev, hessian and functional_call, on minigrad's tape (see
``_reverse``); jvp and jacfwd (forward mode) and vmap come from their own modules when present.
"""
from ._functional_call import functional_call
from ._reverse import grad, grad_and_value, hessian, jacrev, vjp

__all__ = ["grad", "grad_and_value", "vjp", "jacrev", "hessian", "functional_call"]

try:  # forward mode (jvp, jacfwd), written alongside
    from ._forward import jacfwd, jvp  # noqa: F401

    __all__ += ["jvp", "jacfwd"]
except ImportError:
    pass

try:  # vmap, written alongside (minigrad._functorch)
    from .._functorch.vmap import vmap  # noqa: F401

    __all__ += ["vmap"]
except ImportError:
    pass


def __getattr__(name: str):
    from .._unsupported import missing

    raise missing(f"func.{name}", __all__)
