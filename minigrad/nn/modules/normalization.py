"""``torch.nn.modules.normalization``."""
from ..normalization import LayerNorm  # noqa: F401

__all__ = ["LayerNorm"]
