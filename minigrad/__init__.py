"""minigrad: a small, fast, vectorized NumPy autograd engine with PyTorch's API.

    import minigrad as torch
    from minigrad.autograd import Function

The core (Tensor, Function/ctx, backward traversal, grad mode) lives in ``_tensor`` and
``autograd``; the built-in operations, each a ``Function``, live in ``_ops``.
"""
from ._tensor import Tensor, Size, device  # noqa: I001  (Tensor must be defined before the ops)
from . import _dtype
from ._dtype import (bool, double, dtype, float, float16, float32, float64, get_default_dtype, half, int, int8,  # noqa: A004
                     int16, int32, int64, long, set_default_dtype, short, uint8)
from . import autograd
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from ._factories import (allclose, arange, as_tensor, empty, empty_like, equal, eye, from_numpy, full, full_like,
                         is_tensor, isfinite, isnan, linspace, manual_seed, normal, numel, ones, ones_like, rand,
                         rand_like, randint, randn, randn_like, randperm, seed, tensor, zeros, zeros_like)
from ._ops import (abs, add, amax, amin, argmax, argmin, broadcast_to, cat, clamp, clip, clone, concat, cos, cosh,  # noqa: A004
                   cumsum, detach, div, dot, divide, erf, erfc, exp, flatten, log, log1p, log_softmax, logsumexp, matmul, max, maximum, mean, min,
                   minimum, mm, mul, multiply, narrow, neg, norm, permute, pow, relu, reshape, select, sigmoid, sign,
                   sin, sinh, softmax, sqrt, square, squeeze, stack, std, sub, subtract, sum, t, tanh, transpose,
                   true_divide, unsqueeze, var, where)

from ._version import __version__  # said in one place: minigrad/_version.py


def _lazy(name):
    import importlib

    return importlib.import_module(f"minigrad.{name}")


def __getattr__(name):
    # nn, optim and viz load on first use: `import minigrad` needs only NumPy.
    if name in ("nn", "optim", "viz"):
        return _lazy(name)
    raise AttributeError(f"module 'minigrad' has no attribute {name!r}")
