"""Fused operations for neural networks: softmax family, linear layer and losses.

Fusing (one Function for ``x @ W.T + b``, one for softmax) keeps the graph small and lets
backward skip what nobody needs (``needs_input_grad``), e.g. the input of the first layer.

Each backward has two forms. The one written with minigrad operations is used when the
backward itself is being recorded (``create_graph=True``), so second derivatives work. In
the ordinary case (grad mode is off during backward) the same formula runs directly on the
NumPy arrays: it computes the same numbers without creating a Tensor per intermediate.
"""
from __future__ import annotations

import numpy as np

from .._functorch.batched import asarray as _asarray
from .._functorch.batched import values_of as _values_of
from .._functorch.batched import zeros_for as _zeros_for  # np.asarray, batched arrays kept (vmap)

from .._tensor import Tensor, _wrap_dim
from ..autograd.function import Function
from ..autograd.grad_mode import _GradMode

_wrap = Tensor._wrap


class Softmax(Function):
    _node_name = "SoftmaxBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        d = _wrap_dim(dim, a._data.ndim, "softmax")
        x = a._data
        if x.ndim and x.shape[d]:
            z = x - x.max(axis=d, keepdims=True)
            e = np.exp(z, out=z)
            e /= e.sum(axis=d, keepdims=True)
        else:  # a 0-d tensor (its softmax is 1) or nothing along dim (an empty result), as in PyTorch
            e = np.ones(x.shape, x.dtype)
        out = _wrap(e)
        ctx.d = d
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        if not _GradMode.enabled:
            o, gd = out._data, g._data
            r = gd * o
            s = r.sum(axis=ctx.d, keepdims=True)
            r -= o * s
            return _wrap(r), None
        return out * (g - (g * out).sum(ctx.d, keepdim=True)), None


class LogSoftmax(Function):
    _node_name = "LogSoftmaxBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        d = _wrap_dim(dim, a._data.ndim, "log_softmax")
        x = a._data
        if x.ndim and x.shape[d]:
            z = x - x.max(axis=d, keepdims=True)
            z -= np.log(np.exp(z).sum(axis=d, keepdims=True))
        else:  # a 0-d tensor (log 1 = 0) or nothing along dim (an empty result), as in PyTorch
            z = np.zeros(x.shape, x.dtype)
        out = _wrap(z)
        ctx.d = d
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        if not _GradMode.enabled:
            gd = g._data
            r = np.exp(out._data)
            r *= gd.sum(axis=ctx.d, keepdims=True)
            np.subtract(gd, r, out=r)
            return _wrap(r), None
        return g - out.exp() * g.sum(ctx.d, keepdim=True), None


class Linear(Function):
    """y = x @ W.T + b, PyTorch's layout (W is out_features x in_features)."""

    _node_name = "AddmmBackward0"

    @staticmethod
    def forward(ctx, x, w, b):
        xd, wd = x._data, w._data
        if xd.shape[-1] != wd.shape[-1] or wd.ndim != 2:
            n = xd.shape[-1] if xd.ndim else 0
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({int(np.prod(xd.shape[:-1]))}x{n} and "
                f"{wd.shape[-1]}x{wd.shape[0]})\nIn linear: the input's last dimension is {n} but the "
                f"weight expects in_features={wd.shape[-1]} (input shape {list(xd.shape)}, weight shape "
                f"{list(wd.shape)})."
            )
        need = ctx.needs_input_grad
        ctx.save_for_backward(x if need[1] else None, w if need[0] else None)
        out = xd @ wd.T
        if b is not None:
            out += b._data
        return _wrap(out)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        need_b = ctx.needs_input_grad[2]
        if not _GradMode.enabled:
            gd = g._data
            gx = gw = gb = None
            if w is not None:
                gx = _wrap(gd @ w._data)
            if x is not None:
                xd = x._data
                if gd.ndim == 2:
                    gw = _wrap(gd.T @ xd)
                else:
                    gw = _wrap(gd.reshape(-1, gd.shape[-1]).T @ xd.reshape(-1, xd.shape[-1]))
            if need_b:
                gb = _wrap(gd.sum(axis=0) if gd.ndim == 2 else gd.sum(axis=tuple(range(gd.ndim - 1))))
            return gx, gw, gb
        gx = g @ w if w is not None else None
        gw = gb = None
        if x is not None:
            g2 = g.reshape(-1, g._data.shape[-1]) if g._data.ndim != 2 else g
            x2 = x.reshape(-1, x._data.shape[-1]) if x._data.ndim != 2 else x
            gw = g2.transpose(0, 1) @ x2
        if need_b:
            gb = g.sum(tuple(range(g._data.ndim - 1))) if g._data.ndim > 1 else g
        return gx, gw, gb


def _reduce_loss(values: np.ndarray, reduction: str, where: str):
    if reduction == "mean":
        if values.dtype.kind == "f" and values.dtype.itemsize >= 4:
            # what ndarray.mean computes (pairwise sum in the array's dtype), minus its Python overhead
            return np.add.reduce(values, axis=None) / values.size
        return values.mean()
    if reduction == "sum":
        return values.sum()
    if reduction == "none":
        return values
    raise ValueError(f"{reduction} is not a valid value for reduction\n{where}: reduction must be one of 'mean', "
                     "'sum' or 'none'.")


class NLLLoss(Function):
    """Negative log-likelihood of class indices given log-probabilities (N x C)."""

    _node_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, logp, target, reduction):
        lp, t = logp._data, target._data
        if lp.ndim != 2 or t.ndim != 1 or t.shape[0] != lp.shape[0]:
            raise ValueError(
                f"Expected input batch_size ({lp.shape[0] if lp.ndim else 0}) to match target batch_size "
                f"({t.shape[0] if t.ndim else 0}).\nnll_loss/cross_entropy expect input of shape [N, C] and "
                f"target of shape [N] (class indices); got {list(lp.shape)} and {list(t.shape)}."
            )
        if t.dtype.kind not in "iu":
            raise RuntimeError(
                f"expected scalar type Long but found {target.dtype}\ncross_entropy/nll_loss targets are class "
                "indices: make them with dtype=minigrad.long (int64)."
            )
        if t.size and (_values_of(t).min() < 0 or _values_of(t).max() >= lp.shape[1]):
            raise IndexError(f"Target {int(_values_of(t).max() if _values_of(t).max() >= lp.shape[1] else _values_of(t).min())} is out of bounds "
                             f"(there are {lp.shape[1]} classes, so targets must be in [0, {lp.shape[1] - 1}]).")
        rows = np.arange(lp.shape[0])
        ctx.rows, ctx.t, ctx.shape, ctx.reduction = rows, t, lp.shape, reduction
        picked = lp[rows, t]
        np.negative(picked, out=picked)
        return _wrap(_asarray(_reduce_loss(picked, reduction, "nll_loss"), dtype=lp.dtype))

    @staticmethod
    def backward(ctx, g):
        n = ctx.shape[0]
        if not _GradMode.enabled:
            gd = g._data
            out = _zeros_for(ctx.shape, gd.dtype, gd, ctx.t)
            if ctx.reduction == "none":
                out[ctx.rows, ctx.t] = -gd
            else:
                out[ctx.rows, ctx.t] = -gd / n if ctx.reduction == "mean" else -gd
            return _wrap(out), None, None
        onehot = _zeros_for(ctx.shape, g._data.dtype, g._data, ctx.t)
        onehot[ctx.rows, ctx.t] = -1.0
        if ctx.reduction == "mean":
            onehot /= n
        if ctx.reduction == "none":
            g = g.unsqueeze(1)
        return g * Tensor._wrap(onehot), None, None


class MSELoss(Function):
    _node_name = "MseLossBackward0"

    @staticmethod
    def forward(ctx, a, b, reduction):
        if a._data.shape != b._data.shape:
            import warnings

            warnings.warn(
                f"Using a target size ({b.shape!r}) that is different to the input size ({a.shape!r}). This will "
                "likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
                UserWarning, stacklevel=4)
        ctx.save_for_backward(a, b)
        ctx.reduction = reduction
        d = a._data - b._data
        d *= d
        return _wrap(_asarray(_reduce_loss(d, reduction, "mse_loss")))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        if not _GradMode.enabled:
            diff = a._data - b._data
            scale = 2.0 / diff.size if ctx.reduction == "mean" else 2.0
            diff *= g._data * scale
            return (_wrap(diff) if need[0] else None), (_wrap(-diff) if need[1] else None), None
        diff = a - b
        scale = 2.0 / diff._data.size if ctx.reduction == "mean" else 2.0
        gd = g * diff * scale
        return (gd if need[0] else None), (-gd if need[1] else None), None


class BCELoss(Function):
    """Binary cross-entropy on probabilities; logs clamped at -100 as in PyTorch."""

    _node_name = "BinaryCrossEntropyBackward0"

    @staticmethod
    def forward(ctx, p, y, reduction):
        pd, yd = p._data, y._data
        if pd.shape != yd.shape:
            raise ValueError(
                f"Using a target size ({y.shape!r}) that is different to the input size ({p.shape!r}) is "
                "deprecated. Please ensure they have the same size."
            )
        if pd.size and (_values_of(pd).min() < 0 or _values_of(pd).max() > 1):
            raise RuntimeError(
                "all elements of input should be between 0 and 1\nbinary_cross_entropy expects probabilities; "
                "apply sigmoid first (or use a loss on logits)."
            )
        ctx.save_for_backward(p, y)
        ctx.reduction = reduction
        with np.errstate(divide="ignore"):
            loss = -(yd * np.maximum(np.log(pd), -100) + (1 - yd) * np.maximum(np.log1p(-pd), -100))
        return _wrap(_asarray(_reduce_loss(loss, reduction, "binary_cross_entropy"), dtype=pd.dtype))

    @staticmethod
    def backward(ctx, g):
        p, y = ctx.saved_tensors
        eps = 1e-12
        if not _GradMode.enabled:
            pd = p._data
            gp = pd - y._data
            gp *= g._data
            gp /= np.maximum(pd * (1 - pd), eps)
            if ctx.reduction == "mean":
                gp /= pd.size
            return _wrap(gp), BCELoss._target_grad(ctx, p, g), None
        denom = (p * (1 - p)).clamp(min=eps)
        gp = g * (p - y) / denom
        if ctx.reduction == "mean":
            gp = gp / p._data.size
        return gp, BCELoss._target_grad(ctx, p, g), None

    @staticmethod
    def _target_grad(ctx, p, g):
        """d loss / d y = log(1 - p) - log(p) (PyTorch differentiates the target too; rarely needed)."""
        if not ctx.needs_input_grad[1]:
            return None
        with np.errstate(divide="ignore"):
            gy = g * ((1 - p).log() - p.log())
        return gy / p._data.size if ctx.reduction == "mean" else gy
