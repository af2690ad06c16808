"""``Embedding``: a lookup table of vectors, one row per index (word embeddings, categorical features)."""
from __future__ import annotations

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import functional as F
from .module import Module
from .parameter import Parameter


class Embedding(Module):
    """``weight[indices]``: rows of a (num_embeddings x embedding_dim) table, initialised from N(0, 1).

    The row ``padding_idx`` starts at zero and gets no gradient.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Tensor | None = None, _freeze: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            from .._factories import _rng

            np_dtype = _dtype._default[0].np_dtype if dtype is None else _dtype.to_numpy_dtype(dtype)
            self.weight = Parameter(_rng[0].standard_normal((num_embeddings, embedding_dim)).astype(np_dtype),
                                    requires_grad=not _freeze)
            self._fill_padding_idx_with_zero()
        else:
            self.weight = Parameter(_weight._data if isinstance(_weight, Tensor) else _weight,
                                    requires_grad=not _freeze)

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0

    def reset_parameters(self) -> None:
        from .._factories import _rng

        self.weight._data[...] = _rng[0].standard_normal(self.weight._data.shape)
        self._fill_padding_idx_with_zero()

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0, **kwargs) -> "Embedding":
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, _weight=Tensor._wrap(np.array(embeddings._data)),
                   _freeze=freeze)
