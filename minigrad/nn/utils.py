"""``minigrad.nn.utils``: clipping gradients after backward, as PyTorch's ``torch.nn.utils``.

Both functions change ``p.grad`` in place, after ``backward()`` and before ``optimizer.step()``;
they record nothing in the graph.
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from .._tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_"]


def _grads(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _writable(g: Tensor) -> None:
    if not g._data.flags.writeable:  # e.g. a .grad that create_graph=True left as a read-only view
        g._data = g._data.copy()


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Scale all gradients together so that their joint norm is at most ``max_norm``.

    The norm is taken over all gradients as if they were one vector; every gradient is multiplied
    by ``min(1, max_norm / (total_norm + 1e-6))``, so their directions do not change. Returns the
    total norm before clipping.
    """
    grads = _grads(parameters)
    if not grads:
        return Tensor._wrap(np.array(0.0, dtype=np.float32))
    p = float(norm_type)
    dtype = grads[0]._data.dtype
    if math.isinf(p):
        norms = [np.abs(g._data).max() if g._data.size else 0.0 for g in grads]
        total = np.max(norms)
    else:
        norms = [np.sum(np.abs(g._data) ** p) ** (1.0 / p) for g in grads]
        total = np.sum(np.asarray(norms, dtype=dtype) ** p) ** (1.0 / p)
    total = np.asarray(total, dtype=dtype)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {p} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`"
        )
    coef = np.minimum(float(max_norm) / (total + 1e-6), 1.0).astype(dtype)
    for g in grads:
        _writable(g)
        g._data *= coef
        g._bump_version()
    return Tensor._wrap(total)


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient entry into ``[-clip_value, clip_value]``, in place."""
    c = float(clip_value)
    for g in _grads(parameters):
        _writable(g)
        np.clip(g._data, -c, c, out=g._data)
        g._bump_version()
