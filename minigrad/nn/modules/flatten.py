"""``torch.nn.modules.flatten``."""
from ..layers import Flatten  # noqa: F401

__all__ = ["Flatten"]
