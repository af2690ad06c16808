"""Normalisation layers: ``LayerNorm`` (per sample, over the last dims) and ``BatchNorm1d`` (per feature,
over the batch; running statistics for evaluation)."""
from __future__ import annotations

import numbers

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from . import functional as F
from .module import Module
from .parameter import Parameter


class LayerNorm(Module):
    """(x - mean) / sqrt(var + eps) * weight + bias, the statistics over the last ``len(normalized_shape)`` dims."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(s) for s in normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        np_dtype = _dtype._default[0].np_dtype if dtype is None else _dtype.to_numpy_dtype(dtype)
        if elementwise_affine:
            self.weight = Parameter(np.ones(self.normalized_shape, np_dtype))
            if bias:
                self.bias = Parameter(np.zeros(self.normalized_shape, np_dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        if self.weight is not None:
            self.weight._data[...] = 1
        if self.bias is not None:
            self.bias._data[...] = 0

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class BatchNorm1d(Module):
    """Normalise each feature (dim 1) over the batch (and length) dims.

    In training mode it uses the batch's statistics and updates ``running_mean`` / ``running_var``
    (``momentum``: weight of the new batch; None: a cumulative average); in eval mode it uses them.
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        np_dtype = _dtype._default[0].np_dtype if dtype is None else _dtype.to_numpy_dtype(dtype)
        if affine:
            self.weight = Parameter(np.ones(num_features, np_dtype))
            self.bias = Parameter(np.zeros(num_features, np_dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", Tensor._wrap(np.zeros(num_features, np_dtype)))
            self.register_buffer("running_var", Tensor._wrap(np.ones(num_features, np_dtype)))
            self.register_buffer("num_batches_tracked", Tensor._wrap(np.zeros((), np.int64)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean._data[...] = 0
            self.running_var._data[...] = 1
            self.num_batches_tracked._data[...] = 0

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        self._check_input_dim(input)
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked._data += 1
            self.num_batches_tracked._bump_version()
            if self.momentum is None:
                momentum = 1.0 / float(self.num_batches_tracked._data)
        use_batch = self.training or self.running_mean is None
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None, self.running_var if track else None,
                            self.weight, self.bias, use_batch, momentum, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")
