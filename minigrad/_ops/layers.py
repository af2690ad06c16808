"""Fused operations behind nn layers: layer / batch normalisation, embedding lookup, constant padding.

Normalisation: y = (x - mean) / sqrt(var + eps) * w + b, the statistics taken over ``axes``
(the last dims for LayerNorm; the batch and length dims for BatchNorm in training), var biased.
With xhat the normalised input, g' = g * w and m(.) the mean over ``axes``, the input's gradient is
rstd * (g' - m(g') - xhat * m(g' * xhat)). The ordinary backward computes it on the arrays; the
recorded one (create_graph=True) recomputes the statistics with minigrad operations, so it is
differentiable again.
"""
from __future__ import annotations

import numpy as np

from .._functorch.batched import values_of as _values_of  # checks read every sample (vmap)
from .._functorch.batched import take_rows as _take_rows
from .._functorch.batched import zeros_for as _zeros_for

from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import _GradMode

_wrap = Tensor._wrap


class _Normalize(Function):
    """Normalise over ``axes``, then scale and shift by ``w`` and ``b`` (None: no affine part)."""

    @staticmethod
    def forward(ctx, x, w, b, axes, eps, param_shape):
        xd = x._data
        mean = xd.mean(axis=axes, keepdims=True)
        centered = xd - mean
        var = (centered * centered).mean(axis=axes, keepdims=True)
        rstd = 1.0 / np.sqrt(var + eps)
        xhat = centered * rstd
        out = xhat
        if w is not None:
            out = out * w._data.reshape(param_shape)
        if b is not None:
            out = out + b._data.reshape(param_shape)
        ctx.axes, ctx.eps, ctx.param_shape = axes, eps, param_shape
        ctx.xhat, ctx.rstd = xhat, rstd
        ctx.b_shape = b._data.shape if b is not None else None
        ctx.save_for_backward(x, w)
        return _wrap(out.astype(xd.dtype, copy=False))

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        axes, shape = ctx.axes, ctx.param_shape
        need = ctx.needs_input_grad
        param_axes = tuple(k for k, s in enumerate(shape) if s == 1)  # the dims w and b are broadcast along
        if not _GradMode.enabled:
            gd, xhat, rstd = g._data, ctx.xhat, ctx.rstd
            gw = gd * w._data.reshape(shape) if w is not None else gd
            gx = g_w = g_b = None
            if need[0]:
                gx = _wrap(rstd * (gw - gw.mean(axis=axes, keepdims=True)
                                   - xhat * (gw * xhat).mean(axis=axes, keepdims=True)))
            if need[1]:
                g_w = _wrap((gd * xhat).sum(axis=param_axes).reshape(w._data.shape))
            if need[2]:
                g_b = _wrap(gd.sum(axis=param_axes).reshape(w._data.shape if w is not None else ctx.b_shape))
            return gx, g_w, g_b, None, None, None
        mean = x.mean(axes, keepdim=True)
        centered = x - mean
        rstd = ((centered * centered).mean(axes, keepdim=True) + ctx.eps).rsqrt()
        xhat = centered * rstd
        gw = g * w.reshape(shape) if w is not None else g
        gx = g_w = g_b = None
        if need[0]:
            gx = rstd * (gw - gw.mean(axes, keepdim=True) - xhat * (gw * xhat).mean(axes, keepdim=True))
        if need[1]:
            g_w = (g * xhat).sum(param_axes).reshape(w._data.shape)
        if need[2]:
            g_b = g.sum(param_axes).reshape(w._data.shape if w is not None else ctx.b_shape)
        return gx, g_w, g_b, None, None, None


class LayerNorm(_Normalize):
    _node_name = "NativeLayerNormBackward0"


class BatchNorm(_Normalize):
    _node_name = "NativeBatchNormBackward0"


class Embedding(Function):
    """Rows of ``weight`` at ``indices``; the gradient adds each row's gradients (0 for ``padding_idx``)."""

    _node_name = "EmbeddingBackward0"

    @staticmethod
    def forward(ctx, indices, weight, padding_idx):
        i = indices._data
        if i.dtype not in (np.int64, np.int32):
            kind = {"float32": "FloatTensor", "float64": "DoubleTensor", "bool": "BoolTensor"}.get(
                indices.dtype.name, indices.dtype.name)
            raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                               f"Long, Int; but got torch.{kind} instead (while checking arguments for embedding)")
        n = weight._data.shape[0]
        iv = _values_of(i)  # every sample's indices, under vmap
        if i.size and (iv.max() >= n or iv.min() < -n):
            raise IndexError(f"index out of range in self\nembedding: indices must be in [0, {n - 1}] (the table has "
                             f"{n} rows); got {int(iv.max() if iv.max() >= n else iv.min())}.")
        ctx.indices, ctx.n, ctx.padding_idx = i, n, padding_idx
        return _wrap(_take_rows(weight._data, i))

    @staticmethod
    def backward(ctx, g):
        i, n = ctx.indices, ctx.n
        d = g._data.shape[-1]
        if not _GradMode.enabled:
            out = _zeros_for((n, d), g._data.dtype, g._data, i)
            np.add.at(out, i.reshape(-1), g._data.reshape(-1, d))
            if ctx.padding_idx is not None:
                out[ctx.padding_idx] = 0
            return None, _wrap(out), None
        from .indexing import IndexAdd

        flat = i.reshape(-1)
        gg = g.reshape(-1, d)
        if ctx.padding_idx is not None:
            keep = (flat % n) != (ctx.padding_idx % n)
            gg = gg * _wrap(keep[:, None].astype(g._data.dtype))
        zeros = _wrap(np.zeros_like(g._data, shape=(n, d)))
        return None, IndexAdd.apply(zeros, 0, _wrap(flat.astype(np.int64)), gg, 1), None


class ConstantPad(Function):
    """Pad (or, with negative widths, crop) each dim with ``value``; ``pads`` = ((before, after) per dim)."""

    _node_name = "ConstantPadNdBackward0"

    @staticmethod
    def forward(ctx, a, pads, value):
        x = a._data
        new_shape = tuple(s + lo + hi for s, (lo, hi) in zip(x.shape, pads))
        if any(s < 0 for s in new_shape):
            raise RuntimeError(f"The input size {x.shape[[s < 0 for s in new_shape].index(True)]}, plus negative "
                               f"padding {pads} resulted in a negative output size, which is invalid. Check "
                               "dimension of your input.")
        out = np.full_like(x, value, shape=new_shape)  # (like x: batched under vmap)
        src = tuple(slice(max(-lo, 0), s - max(-hi, 0)) for s, (lo, hi) in zip(x.shape, pads))
        dst = tuple(slice(max(lo, 0), n - max(hi, 0)) for n, (lo, hi) in zip(new_shape, pads))
        out[dst] = x[src]
        ctx.pads = pads
        return _wrap(out)

    @staticmethod
    def backward(ctx, g):
        # padding by the opposite widths takes the gradient of the copied region, 0 where x was cropped
        return ConstantPad.apply(g, tuple((-lo, -hi) for lo, hi in ctx.pads), 0), None, None
