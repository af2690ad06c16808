"""``torch.nn.modules.dropout``."""
from ..dropout import Dropout  # noqa: F401

__all__ = ["Dropout"]
