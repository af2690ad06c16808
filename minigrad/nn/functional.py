"""``minigrad.nn.functional``: the stateless versions of the layers and losses (``F.relu``, ``F.cross_entropy``...).

Each is one of minigrad's built-in Functions, so the graph has the same nodes as PyTorch's:
``F.linear`` records ``AddmmBackward0``, ``F.cross_entropy`` records ``LogSoftmaxBackward0``
followed by ``NllLossBackward0``.
"""
from __future__ import annotations

import warnings

from .._ops import activation, loss, nn_ops, pointwise
from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled

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
        if t is not None and t.requires_grad and is_grad_enabled():
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
