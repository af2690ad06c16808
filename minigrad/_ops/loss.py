"""Losses beyond nn_ops.py's: binary cross-entropy on logits (stable), with PyTorch's
``weight`` / ``pos_weight`` / ``reduction``.

Why on logits: ``BCELoss(sigmoid(x), y)`` rounds sigmoid(x) to 0 or 1 for |x| beyond ~17
(float64) or ~9 (float32), so its log is clamped at -100 and its gradient vanishes. Working on
``x`` directly, ``log(sigmoid(x)) = -softplus(-x)`` never over- or underflows.
"""
from __future__ import annotations

import numpy as np

from .._functorch.batched import asarray as _asarray  # np.asarray, batched arrays kept (vmap)

from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import _GradMode
from .activation import Softplus, _require_float, softplus_array
from .arithmetic import _broadcast_error
from .nn_ops import _reduce_loss
from .pointwise import stable_sigmoid
from .reduction import _TORCH_TYPE

_wrap = Tensor._wrap


class BinaryCrossEntropyWithLogits(Function):
    """loss = w ((1 - y) x + l softplus(-x)), with l = 1 + (p - 1) y, p = pos_weight and w = weight (1 if None).

    softplus(-x) = -log(sigmoid(x)). Derivatives (s = sigmoid(x)): d/dx = w (l s - p y), which is
    w (s - y) without pos_weight; d/dy = w ((p - 1) softplus(-x) - x). As in PyTorch, weight and
    pos_weight are constants (they cannot require grad). The result has the target's dtype, as in PyTorch.
    """

    _node_name = "BinaryCrossEntropyWithLogitsBackward0"

    @staticmethod
    def forward(ctx, x, y, weight, pos_weight, reduction):
        xd, yd = x._data, y._data
        if xd.shape != yd.shape:
            raise ValueError(
                f"Target size ({y.shape!r}) must be the same as input size ({x.shape!r})\n"
                f"binary_cross_entropy_with_logits: the target holds one label per logit, so its shape must be "
                f"the input's {list(xd.shape)}; got {list(yd.shape)}."
            )
        _require_float(x, "log_sigmoid_cpu")
        if yd.dtype.kind != "f":
            raise RuntimeError(
                f"result type Float can't be cast to the desired output type {_TORCH_TYPE.get(y.dtype.name)}\n"
                f"binary_cross_entropy_with_logits: the target has dtype {y.dtype}; it must be floating "
                "(e.g. target.float())."
            )
        sp = softplus_array(-xd)  # -log(sigmoid(x)), stable for any x
        if pos_weight is None:
            loss = (1 - yd) * xd + sp
        else:
            pw = _fit(pos_weight._data, xd, "pos_weight")
            loss = (1 - yd) * xd + (1 + (pw - 1) * yd) * sp
        if weight is not None:
            loss = loss * _fit(weight._data, xd, "weight")
        dtype = yd.dtype  # PyTorch computes the loss in place in (1 - target): the target's dtype
        ctx.reduction, ctx.n = reduction, loss.size
        ctx.save_for_backward(x, y, weight, pos_weight)
        return _wrap(_asarray(_reduce_loss(loss, reduction, "binary_cross_entropy_with_logits"), dtype=dtype))

    @staticmethod
    def backward(ctx, g):
        x, y, w, p = ctx.saved_tensors
        need = ctx.needs_input_grad
        if ctx.reduction == "mean":
            g = g / ctx.n
        if not _GradMode.enabled:  # the ordinary backward, on the arrays
            xd, yd = x._data, y._data
            gd = g._data if w is None else g._data * w._data
            gx = gy = None
            if need[0]:
                s = stable_sigmoid(xd)
                gx = _wrap(gd * (s - yd) if p is None else gd * ((1 + (p._data - 1) * yd) * s - p._data * yd))
            if need[1]:
                gy = _wrap(-gd * xd if p is None else gd * ((p._data - 1) * softplus_array(-xd) - xd))
            return gx, gy, None, None, None
        gw = g if w is None else g * w
        gx = gy = None
        if need[0]:
            s = x.sigmoid()
            gx = gw * (s - y) if p is None else gw * ((1 + (p - 1) * y) * s - p * y)
        if need[1]:
            gy = -gw * x if p is None else gw * ((p - 1) * Softplus.apply(-x, 1.0, float("inf")) - x)
        return gx, gy, None, None, None


def _fit(w: np.ndarray, x: np.ndarray, name: str) -> np.ndarray:
    """``weight`` / ``pos_weight`` broadcast to the input's shape (never beyond it, as in PyTorch)."""
    try:
        shape = np.broadcast_shapes(w.shape, x.shape)
    except ValueError:
        raise _broadcast_error(f"binary_cross_entropy_with_logits ({name})", w, x) from None
    if shape != x.shape:
        raise RuntimeError(
            f"output with shape {list(x.shape)} doesn't match the broadcast shape {list(shape)}\n"
            f"binary_cross_entropy_with_logits: {name} (shape {list(w.shape)}) must broadcast to the input's "
            f"shape {list(x.shape)}."
        )
    return w
