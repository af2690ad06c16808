"""minigrad: a small, fast, vectorized NumPy autograd engine with PyTorch's API.

    import minigrad as torch
    from minigrad.autograd import Function

The core (Tensor, Function/ctx, backward traversal, grad mode) lives in ``_tensor`` and
``autograd``; the built-in operations, each a ``Function``, live in ``_ops``.
"""
from ._tensor import Tensor, Size, device  # noqa: I001  (Tensor must be defined before the ops)
from . import _dtype
from ._dtype import (bool, double, dtype, finfo, float, float16, float32, float64, get_default_dtype, half, iinfo,  # noqa: A004
                     int, int8, int16, int32, int64, long, set_default_dtype, short, uint8)
from ._device import get_default_device, set_default_device
from . import autograd
from .autograd import enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled
from ._factories import (allclose, arange, as_tensor, empty, empty_like, equal, eye, from_numpy, full, full_like,
                         is_tensor, linspace, load, manual_seed, normal, numel, ones, ones_like, rand,
                         rand_like, randint, randn, randn_like, randperm, save, seed, tensor, zeros, zeros_like)
from ._ops import (abs, absolute, acos, acosh, add, addmm, addmv, amax, amin, aminmax, arccos, arccosh, arcsin, arcsinh,  # noqa: A004
                   arctan, arctan2, arctanh, argmax, argmin, argsort, argwhere, asin, asinh, atan, atan2, atanh,
                   atleast_1d, atleast_2d, atleast_3d, baddbmm, bernoulli, bitwise_and, bitwise_not, bitwise_or,
                   bitwise_xor, bmm, broadcast_to, cat, ceil, celu, chunk, clamp, clamp_max, clamp_min, clip, clone,
                   column_stack, concat, concatenate, cos, cosh, count_nonzero, cross, cummax, cummin, cumprod,
                   cumsum, deg2rad, det, detach, diag, diag_embed, diagonal, diff, div, divide, dot, dstack, einsum,
                   eq, erf, erfc, exp, exp2, expm1, fix, flatten, flip, fliplr, flipud, float_power, floor,
                   floor_divide, fmod, frac, gather, ge, ger, greater, greater_equal, gt, heaviside, hstack, hypot,
                   index_add, index_fill, index_select, inner, inverse, isclose, isfinite, isinf, isnan, isneginf,
                   isposinf, isreal, kron, kthvalue, le, lerp, less, less_equal, log, log10, log1p, log2,
                   log_softmax, logaddexp, logaddexp2, logcumsumexp, logical_and, logical_not, logical_or,
                   logical_xor, logsumexp, lt, masked_fill, masked_select, matmul, matrix_power, max, maximum,
                   mean, median, min, minimum, mm, moveaxis, movedim, msort, mul, multinomial, multiply, mv,
                   nan_to_num, nanmean, nansum, narrow, ne, neg, negative, nonzero, norm, not_equal, outer, permute,
                   positive, pow, prod, rad2deg, reciprocal, relu, remainder, repeat_interleave, reshape, roll,
                   row_stack, rsqrt, scatter, scatter_add, select, selu, sgn, sigmoid, sign, signbit, sin, sinh,
                   softmax, sort, split, sqrt, square, squeeze, stack, std, sub, subtract, sum, swapaxes, swapdims,
                   t, take, take_along_dim, tan, tanh, tensor_split, tensordot, tile, topk, trace, transpose, tril,
                   triu, true_divide, trunc, unbind, unflatten, unique, unique_consecutive, unsqueeze, var, vstack,
                   where, xlogy)
from ._ops.comparison import all, any  # noqa: A004
from ._ops.elementwise import round  # noqa: A004
from ._ops.matrix import solve as _solve  # noqa: F401  (minigrad.linalg.solve)
from ._generator import Generator
from ._printing import get_printoptions, set_printoptions
from .jit import compile  # noqa: A004
from ._functorch.vmap import vmap  # torch.vmap (also minigrad.func.vmap)

from ._version import __version__  # said in one place: minigrad/_version.py

from ._unsupported import install_tensor_stubs as _stubs  # noqa: E402  (last: after every method is installed)

_stubs(Tensor)

# Modules loaded on first use (`import minigrad` needs only NumPy): nn, optim and viz, and the
# stand-ins for PyTorch's device and compiler namespaces, and utils (checkpoint, data).
_LAZY = ("nn", "optim", "viz", "linalg", "cuda", "backends", "accelerator", "jit", "utils", "func")


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return importlib.import_module(f"minigrad.{name}")
    from ._unsupported import missing

    raise missing(name, [n for n in globals() if not n.startswith("_")] + list(_LAZY))


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
