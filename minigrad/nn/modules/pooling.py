"""``torch.nn.modules.pooling``."""
from .._conv import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d  # noqa: F401

__all__ = ["AdaptiveAvgPool2d", "AvgPool2d", "MaxPool2d"]
