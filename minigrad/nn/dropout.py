"""``Dropout``: zero each element with probability p during training (and scale the rest by 1/(1-p))."""
from __future__ import annotations

from .._tensor import Tensor
from . import functional as F
from .module import Module


class Dropout(Module):
    """Random zeroing in ``train()`` mode; the identity in ``eval()`` mode."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
