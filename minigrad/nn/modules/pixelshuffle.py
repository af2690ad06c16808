"""``torch.nn.modules.pixelshuffle``."""
from .._conv import PixelShuffle, PixelUnshuffle  # noqa: F401

__all__ = ["PixelShuffle", "PixelUnshuffle"]
