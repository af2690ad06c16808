"""``torch.nn.modules.sparse``."""
from ..sparse import Embedding  # noqa: F401

__all__ = ["Embedding"]
