"""minigrad.autograd: Function, backward/grad, grad modes, anomaly detection, gradcheck."""
from . import forward_ad, function, functional, graph
from .anomaly_mode import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .engine import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .variable import Variable, inference_mode, is_inference_mode_enabled

__all__ = [
    "Function", "FunctionCtx", "once_differentiable", "backward", "grad", "no_grad", "enable_grad",
    "set_grad_enabled", "is_grad_enabled", "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
    "gradcheck", "gradgradcheck", "GradcheckError", "function", "functional", "graph", "Variable", "inference_mode",
    "is_inference_mode_enabled", "forward_ad",
]


def __getattr__(name: str):
    from .._unsupported import missing

    raise missing(f"autograd.{name}", __all__)
