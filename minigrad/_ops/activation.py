"""Activation functions beyond relu / sigmoid / tanh: SiLU, GELU, LeakyReLU, ELU, Softplus,
Hardtanh, LogSigmoid, Mish, Softsign, with PyTorch's formulas, defaults and node names.

Each backward has the two forms of nn_ops.py: the formula on the NumPy arrays for the
ordinary backward (grad mode off), the same formula in minigrad operations when the
backward is recorded (``create_graph=True``), so that second derivatives work.
"""
from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import _GradMode
from .pointwise import stable_sigmoid, where
from .reduction import _TORCH_TYPE
from .special import erf_array

_wrap = Tensor._wrap
_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_K = math.sqrt(2.0 / math.pi)  # the tanh approximation of GELU: tanh(k (x + 0.044715 x^3))


def _require_float(a: Tensor, kernel: str) -> np.ndarray:
    """The input's array; integer and bool inputs are PyTorch's NotImplementedError (``kernel``: its kernel's name)."""
    x = a._data
    if x.dtype.kind != "f":
        raise NotImplementedError(
            f'"{kernel}" not implemented for \'{_TORCH_TYPE.get(a.dtype.name, a.dtype.name)}\'\n'
            f"{kernel.removesuffix('_cpu')}: this activation is defined for floating tensors; the input has dtype "
            f"{a.dtype} (shape {list(x.shape)}). Convert it first, e.g. x.float()."
        )
    return x


def softplus_array(x: np.ndarray) -> np.ndarray:
    """log(1 + e^x) without overflow: max(x, 0) + log1p(e^-|x|)."""
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


class Silu(Function):
    """x * sigmoid(x) (also called swish)."""

    _node_name = "SiluBackward0"

    @staticmethod
    def forward(ctx, a):
        x = _require_float(a, "silu_cpu")
        ctx.save_for_backward(a)
        return _wrap(x * stable_sigmoid(x))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        if not _GradMode.enabled:
            x = a._data
            s = stable_sigmoid(x)
            return _wrap(g._data * s * (1 + x * (1 - s)))
        s = a.sigmoid()
        return g * (s * (1 + a * (1 - s)))


class Gelu(Function):
    """x * Phi(x), Phi the standard normal CDF; ``approximate='tanh'`` uses PyTorch's tanh formula."""

    _node_name = "GeluBackward0"

    @staticmethod
    def forward(ctx, a, approximate):
        x = _require_float(a, "GeluKernelImpl")
        if approximate not in ("none", "tanh"):
            raise RuntimeError(f"approximate argument must be either none or tanh.\ngelu: got approximate="
                               f"{approximate!r}.")
        ctx.save_for_backward(a)
        ctx.approximate = approximate
        if approximate == "tanh":
            return _wrap(0.5 * x * (1 + np.tanh(_TANH_K * (x + 0.044715 * x ** 3))))
        return _wrap(0.5 * x * (1 + erf_array(x * _SQRT_HALF)))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        if ctx.approximate == "tanh":
            if not _GradMode.enabled:
                x = a._data
                t = np.tanh(_TANH_K * (x + 0.044715 * x ** 3))
                d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _TANH_K * (1 + 3 * 0.044715 * x * x)
                return _wrap(g._data * d), None
            t = (_TANH_K * (a + 0.044715 * a ** 3)).tanh()
            return g * (0.5 * (1 + t) + 0.5 * a * (1 - t * t) * _TANH_K * (1 + 3 * 0.044715 * a * a)), None
        # d/dx x Phi(x) = Phi(x) + x phi(x)
        if not _GradMode.enabled:
            x = a._data
            cdf = 0.5 * (1 + erf_array(x * _SQRT_HALF))
            return _wrap(g._data * (cdf + x * np.exp(-0.5 * x * x) * _INV_SQRT_2PI)), None
        from .special import Erf

        cdf = 0.5 * (1 + Erf.apply(a * _SQRT_HALF))
        return g * (cdf + a * (a * a * -0.5).exp() * _INV_SQRT_2PI), None


class LeakyRelu(Function):
    """x for x > 0, negative_slope * x otherwise."""

    _node_name = "LeakyReluBackward0"

    @staticmethod
    def forward(ctx, a, slope):
        x = _require_float(a, "leaky_relu_cpu")
        ctx.slope = slope
        ctx.save_for_backward(a)
        return _wrap(np.where(x > 0, x, x * slope))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        scale = np.where(a._data > 0, 1.0, ctx.slope).astype(g._data.dtype)  # a constant: no gradient of its own
        if not _GradMode.enabled:
            return _wrap(g._data * scale), None
        return g * _wrap(scale), None


class Elu(Function):
    """x for x > 0, alpha * (e^x - 1) otherwise (CELU and SELU are scalings of it)."""

    _node_name = "EluBackward0"

    @staticmethod
    def forward(ctx, a, alpha, scale, input_scale):
        x = _require_float(a, "elu_cpu")
        ctx.alpha, ctx.scale, ctx.input_scale = alpha, scale, input_scale
        ctx.save_for_backward(a)
        return _wrap(np.where(x > 0, x * scale, np.expm1(np.minimum(x, 0) * input_scale) * (alpha * scale)))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        alpha, scale, k = ctx.alpha, ctx.scale, ctx.input_scale
        if not _GradMode.enabled:
            x = a._data
            d = np.where(x > 0, scale, np.exp(np.minimum(x, 0) * k) * (alpha * scale * k))
            return _wrap(g._data * d), None, None, None
        pos = _wrap(a._data > 0)
        neg_part = (a.clamp(max=0) * k).exp() * (alpha * scale * k)
        return g * where(pos, scale, neg_part), None, None, None


class Celu(Elu):
    _node_name = "CeluBackward0"


class Softplus(Function):
    """log(1 + e^(beta x)) / beta, and x itself where beta x > threshold (PyTorch's linear tail)."""

    _node_name = "SoftplusBackward0"

    @staticmethod
    def forward(ctx, a, beta, threshold):
        x = _require_float(a, "softplus_cpu")
        ctx.beta, ctx.threshold = beta, threshold
        ctx.save_for_backward(a)
        bx = x * beta
        return _wrap(np.where(bx > threshold, x, softplus_array(bx) / beta).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        beta, threshold = ctx.beta, ctx.threshold
        linear = a._data * beta > threshold
        if not _GradMode.enabled:
            return _wrap(g._data * np.where(linear, 1.0, stable_sigmoid(a._data * beta))), None, None
        return g * where(_wrap(linear), 1.0, (a * beta).sigmoid()), None, None


class Hardtanh(Function):
    """x clipped to [min_val, max_val]; the gradient is 0 at the bounds (PyTorch's hardtanh_backward)."""

    _node_name = "HardtanhBackward0"

    @staticmethod
    def forward(ctx, a, lo, hi):
        x = a._data
        if x.dtype == np.bool_:
            raise RuntimeError('"hardtanh" not implemented for \'Bool\'')
        ctx.save_for_backward(a)
        ctx.lo, ctx.hi = lo, hi
        return _wrap(np.clip(x, lo, hi))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        inside = (a._data > ctx.lo) & (a._data < ctx.hi)
        if not _GradMode.enabled:
            return _wrap(g._data * inside), None, None
        return g * _wrap(inside.astype(g._data.dtype)), None, None


class LogSigmoid(Function):
    """log(sigmoid(x)) = -softplus(-x), computed without overflow."""

    _node_name = "LogSigmoidBackward0"

    @staticmethod
    def forward(ctx, a):
        x = _require_float(a, "log_sigmoid_cpu")
        ctx.save_for_backward(a)
        return _wrap(-softplus_array(-x))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        if not _GradMode.enabled:
            return _wrap(g._data * stable_sigmoid(-a._data))
        return g * (-a).sigmoid()


class Mish(Function):
    """x * tanh(softplus(x))."""

    _node_name = "MishBackward0"

    @staticmethod
    def forward(ctx, a):
        x = _require_float(a, "mish_cpu")
        ctx.save_for_backward(a)
        return _wrap(x * np.tanh(softplus_array(x)))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        if not _GradMode.enabled:
            x = a._data
            t = np.tanh(softplus_array(x))
            return _wrap(g._data * (t + x * (1 - t * t) * stable_sigmoid(x)))
        t = Softplus.apply(a, 1.0, 20.0).tanh()
        return g * (t + a * (1 - t * t) * a.sigmoid())


# --- plain functions --------------------------------------------------------------------
def silu(a: Tensor) -> Tensor:
    return Silu.apply(a)


def gelu(a: Tensor, approximate: str = "none") -> Tensor:
    return Gelu.apply(a, approximate)


def leaky_relu(a: Tensor, negative_slope: float = 0.01) -> Tensor:
    return LeakyRelu.apply(a, negative_slope)


def elu(a: Tensor, alpha: float = 1.0) -> Tensor:
    return Elu.apply(a, alpha, 1.0, 1.0)


def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU\ncelu(x) = max(0, x) + min(0, alpha * "
                           "(exp(x / alpha) - 1)) divides by alpha.")
    return Celu.apply(input, alpha, 1.0, 1.0 / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input: Tensor) -> Tensor:
    return Elu.apply(input, _SELU_ALPHA, _SELU_SCALE, 1.0)


def softplus(a: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    return Softplus.apply(a, beta, threshold)


def hardtanh(a: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val\n"
                         f"hardtanh: got min_val={min_val} and max_val={max_val}.")
    return Hardtanh.apply(a, min_val, max_val)


def relu6(a: Tensor) -> Tensor:
    return Hardtanh.apply(a, 0.0, 6.0)


def logsigmoid(a: Tensor) -> Tensor:
    return LogSigmoid.apply(a)


def mish(a: Tensor) -> Tensor:
    return Mish.apply(a)


def softsign(a: Tensor) -> Tensor:
    return a / (a.abs() + 1)
