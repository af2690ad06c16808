"""``minigrad.nn.functional``: the stateless versions of the layers and losses (``F.relu``, ``F.cross_entropy``...).

Each is one of minigrad's built-in Functions, so the graph has the same nodes as PyTorch's:
``F.linear`` records ``AddmmBackward0``, ``F.cross_entropy`` records ``LogSoftmaxBackward0``
followed by ``NllLossBackward0``.
"""
from __future__ import annotations

import warnings

import numpy as np

from .._functorch.batched import values_of as _values_of  # checks read every sample (vmap)

from .._ops import activation, layers, loss, nn_ops, pointwise
from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled as _grad_enabled

_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(reduction: str, where: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction\n{where}: reduction must be one of "
                         "'mean', 'sum' or 'none'.")


def _legacy_reduction(size_average, reduce, reduction: str) -> str:
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return ("mean" if size_average else "sum") if reduce else "none"


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    """``input @ weight.T + bias`` in one node (``AddmmBackward0``)."""
    return nn_ops.Linear.apply(input, weight, bias)


def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    if inplace:
        return input.relu_()
    return pointwise.Relu.apply(input)


def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    return pointwise.Sigmoid.apply(input)


def tanh(input: Tensor) -> Tensor:  # noqa: A002
    return pointwise.Tanh.apply(input)


def _softmax_dim(name: str, ndim: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, dtype=None) -> Tensor:  # noqa: A002
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim)
    if dtype is not None:
        input = input.to(dtype)
    return nn_ops.Softmax.apply(input, dim)


def log_softmax(input: Tensor, dim: int | None = None, dtype=None) -> Tensor:  # noqa: A002
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim)
    if dtype is not None:
        input = input.to(dtype)
    return nn_ops.LogSoftmax.apply(input, dim)


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,  # noqa: A002
             reduction: str = "mean") -> Tensor:
    """Mean squared error: mean((input - target) ** 2) (or its sum / elementwise with ``reduction``)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "mse_loss")
    return nn_ops.MSELoss.apply(input, target, reduction)


def nll_loss(input: Tensor, target: Tensor, weight=None, size_average=None, ignore_index: int = -100,  # noqa: A002
             reduce=None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood: ``-input[i, target[i]]`` averaged over the batch (input holds log-probabilities)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "nll_loss")
    if weight is not None:
        raise NotImplementedError("nll_loss: class weights are not supported by minigrad")
    return nn_ops.NLLLoss.apply(input, target, reduction)


def cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None, ignore_index: int = -100,  # noqa: A002
                  reduce=None, reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Softmax cross-entropy of logits ``input`` (N x C) and class indices ``target`` (N).

    Same as ``nll_loss(log_softmax(input, 1), target)``; a float ``target`` of the input's
    shape is read as class probabilities.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "cross_entropy")
    if weight is not None or label_smoothing:
        raise NotImplementedError("cross_entropy: class weights and label smoothing are not supported by minigrad")
    if input.ndim == 1:  # a single sample of C logits
        input, target = input.unsqueeze(0), target.unsqueeze(0)
        out = cross_entropy(input, target, reduction=reduction)
        return out.squeeze(0) if reduction == "none" else out
    logp = nn_ops.LogSoftmax.apply(input, 1)
    if target._data.dtype.kind == "f":
        if target.shape != input.shape:
            raise RuntimeError(
                f"Expected floating point type target to have the same shape as input, got {list(target.shape)} "
                f"and {list(input.shape)}\ncross_entropy: a float target holds class probabilities (shape [N, C]); "
                "for class indices use an int64 target of shape [N]."
            )
        per_sample = -(logp * target).sum(1)
        if reduction == "mean":
            return per_sample.mean()
        return per_sample.sum() if reduction == "sum" else per_sample
    return nn_ops.NLLLoss.apply(logp, target, reduction)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,  # noqa: A002
                         reduce=None, reduction: str = "mean") -> Tensor:
    """Binary cross-entropy of probabilities ``input`` and targets in [0, 1]; logs are clamped at -100."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "binary_cross_entropy")
    if weight is None:
        return nn_ops.BCELoss.apply(input, target, reduction)
    loss = nn_ops.BCELoss.apply(input, target, "none") * weight
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                                     size_average=None, reduce=None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Binary cross-entropy of logits ``input`` (sigmoid applied inside, stably) and targets in [0, 1].

    ``weight`` rescales each element's loss (broadcast to the input's shape); ``pos_weight``
    weighs the positive term, broadcast along the last dimension (one weight per class).
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "binary_cross_entropy_with_logits")
    for name, t in (("weight", weight), ("pos_weight", pos_weight)):
        if t is not None and t.requires_grad and _grad_enabled():
            raise RuntimeError(
                f"The function 'binary_cross_entropy_with_logits' is not differentiable with respect to argument "
                f"'{name}'. This input cannot have requires_grad True.\n{name} is a constant of the loss: pass "
                f"{name}.detach()."
            )
    return loss.BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction)


# --- activations ----------------------------------------------------------------------------
def silu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x * sigmoid(x)."""
    return _activate(input, inplace, "silu", activation.Silu)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002
    """x * Phi(x) (Phi: the standard normal CDF); ``approximate='tanh'`` for the tanh formula."""
    return activation.Gelu.apply(input, approximate)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:  # noqa: A002
    return _activate(input, inplace, "leaky_relu", activation.LeakyRelu, negative_slope)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    return _activate(input, inplace, "elu", activation.Elu, alpha, 1.0, 1.0)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    if alpha == 0:
        return activation.celu(input, alpha)  # raises
    return _activate(input, inplace, "celu", activation.Celu, alpha, 1.0, 1.0 / alpha)


def selu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    return _activate(input, inplace, "selu", activation.Elu, activation._SELU_ALPHA, activation._SELU_SCALE, 1.0)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: A002
    """log(1 + exp(beta x)) / beta (linear where beta x > threshold)."""
    return activation.Softplus.apply(input, beta, threshold)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    if min_val > max_val:
        return activation.hardtanh(input, min_val, max_val)  # raises
    return _activate(input, inplace, "hardtanh", activation.Hardtanh, min_val, max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    return hardtanh(input, 0.0, 6.0, inplace)


def logsigmoid(input: Tensor) -> Tensor:  # noqa: A002
    return activation.LogSigmoid.apply(input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    return _activate(input, inplace, "mish", activation.Mish)


def softsign(input: Tensor) -> Tensor:  # noqa: A002
    return activation.softsign(input)


def _activate(input: Tensor, inplace: bool, name: str, cls, *args) -> Tensor:  # noqa: A002
    """``cls.apply(input, *args)``; with ``inplace=True`` the result is written into ``input`` and recorded as
    an in-place operation (version counter, leaf checks), as ``F.relu(x, inplace=True)`` is."""
    if not inplace:
        return cls.apply(input, *args)
    from .._ops import _run_inplace

    return _run_inplace(input, cls, args, f"{name}_()")


# --- losses --------------------------------------------------------------------------------------------------
def _reduce(values: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return values.mean()
    return values.sum() if reduction == "sum" else values


def _warn_size(input: Tensor, target: Tensor) -> None:  # noqa: A002
    if input.shape != target.shape:
        warnings.warn(f"Using a target size ({target.shape!r}) that is different to the input size ({input.shape!r}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", UserWarning, stacklevel=3)


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,  # noqa: A002
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean absolute error: mean(|input - target|)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "l1_loss")
    _warn_size(input, target)
    d = (input - target).abs()
    return _reduce(d * weight if weight is not None else d, reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,  # noqa: A002
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (d = input - target)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "smooth_l1_loss")
    _warn_size(input, target)
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction)
    return _reduce(pointwise.where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta), reduction)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,  # noqa: A002
               weight: Tensor | None = None) -> Tensor:
    """0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere."""
    _check_reduction(reduction, "huber_loss")
    _warn_size(input, target)
    d = (input - target).abs()
    values = pointwise.where(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta)
    return _reduce(values * weight if weight is not None else values, reduction)


# --- layers as functions --------------------------------------------------------------------------------------
def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero each element with probability p and scale the others by 1 / (1 - p) (in training only)."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    from .._factories import _rng

    x = input._data
    if p == 1:
        mask = np.zeros(x.shape, x.dtype)
    else:
        mask = (_rng[0].random(x.shape) >= p).astype(x.dtype) * np.asarray(1.0 / (1.0 - p), x.dtype)
    m = Tensor._wrap(mask)
    return input.mul_(m) if inplace else input * m


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, bias: Tensor | None = None,  # noqa: A002
               eps: float = 1e-5) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` dims, then ``* weight + bias``."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if input.shape[input.ndim - k:] != shape or k == 0:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*, "
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    for p in (weight, bias):
        if p is not None and p.dtype != input.dtype:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.\nlayer_norm: the input has "
                               f"dtype {input.dtype} and weight / bias {p.dtype}; convert one of them.")
    axes = tuple(range(input.ndim - k, input.ndim))
    param_shape = (1,) * (input.ndim - k) + shape
    return layers.LayerNorm.apply(input, weight, bias, axes, eps, param_shape)


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,  # noqa: A002
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each feature (dim 1) with the batch's statistics (``training``), updating the running ones,
    or with the running statistics."""
    c = input.shape[1] if input.ndim > 1 else 1
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    for t in (running_mean, running_var, weight, bias):
        if t is not None and t.dtype != input.dtype:
            names = {"float32": "Float", "float64": "Double", "float16": "Half"}
            raise RuntimeError(f"mixed dtype (CPU): expect parameter to have scalar type of "
                               f"{names.get(input.dtype.name, input.dtype.name)}\nbatch_norm: the input has dtype "
                               f"{input.dtype} and a running statistic / weight / bias has {t.dtype}.")
    axes = (0,) + tuple(range(2, input.ndim))
    param_shape = tuple(c if k == 1 else 1 for k in range(input.ndim))
    if training:
        x = input._data
        n = int(np.prod([x.shape[a] for a in axes]))
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape!r}")
        if running_mean is not None or running_var is not None:
            mean = x.mean(axis=axes)
            var = x.var(axis=axes) * (n / (n - 1))  # the running variance is unbiased, as in PyTorch
            for buf, stat in ((running_mean, mean), (running_var, var)):
                if buf is not None:
                    buf._data[...] = (1 - momentum) * buf._data + momentum * stat
                    buf._bump_version()
        return layers.BatchNorm.apply(input, weight, bias, axes, eps, param_shape)
    if running_mean is None or running_var is None:
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    scale = Tensor._wrap((1.0 / np.sqrt(running_var._data + eps)).reshape(param_shape).astype(input._data.dtype))
    out = (input - running_mean.reshape(param_shape)) * scale
    if weight is not None:
        out = out * weight.reshape(param_shape)
    if bias is not None:
        out = out + bias.reshape(param_shape)
    return out


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,  # noqa: A002
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` at the indices ``input`` (the row ``padding_idx`` gets no gradient)."""
    if padding_idx is not None:
        padding_idx %= weight.shape[0]
    if max_norm is not None:  # renormalise the rows used, in place (not recorded, as in PyTorch)
        rows = np.unique(input._data)
        w = weight._data
        norms = np.linalg.norm(w[rows], ord=norm_type, axis=1, keepdims=True)
        w[rows] *= np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(w.dtype)
    return layers.Embedding.apply(input, weight, padding_idx)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Class indices -> rows of 0/1 (int64), one column per class."""
    t = tensor._data
    if t.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.\none_hot: the classes have "
                           f"dtype {tensor.dtype}; use .long().")
    if t.size and _values_of(t).min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    n = int(t.max()) + 1 if num_classes == -1 and t.size else num_classes
    if num_classes == -1 and not t.size:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    if t.size and _values_of(t).max() >= n:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return Tensor._wrap((t[..., None] == np.arange(n)).astype(np.int64))


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:  # noqa: A002
    """Pad with ``value`` (constant mode): ``pad`` lists (before, after) pairs from the last dim backwards."""
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.ndim}")
    if mode != "constant":
        raise NotImplementedError(f"minigrad implements pad(mode='constant') only; got mode={mode!r}.\nFor "
                                  "'reflect' / 'replicate', build the border with flip / index and cat.")
    pairs = [(0, 0)] * input.ndim
    for k in range(len(pad) // 2):
        pairs[input.ndim - 1 - k] = (int(pad[2 * k]), int(pad[2 * k + 1]))
    return layers.ConstantPad.apply(input, tuple(pairs), 0 if value is None else value)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None) -> Tensor:  # noqa: A002
    """input / max(||input||_p along dim, eps)."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """<x1, x2> / max(||x1|| ||x2||, eps) along dim."""
    dot = (x1 * x2).sum(dim)
    return dot / (x1.norm(dim=dim) * x2.norm(dim=dim)).clamp_min(eps)


from ._conv import (adaptive_avg_pool2d, avg_pool2d, conv1d, conv2d, max_pool2d, pixel_shuffle,  # noqa: E402
                    pixel_unshuffle)  # (_conv.py imports nothing from here)


def __getattr__(name: str):
    # A PyTorch name minigrad does not have: say so (and what to use instead), not just "no attribute".
    from .._unsupported import missing

    raise missing(f"nn.functional.{name}", [n for n in globals() if not n.startswith("_")])
