"""``torch.nn.modules.linear``."""
from ..layers import Identity, Linear  # noqa: F401

__all__ = ["Identity", "Linear"]
