"""``torch.nn.modules.pooling``."""
from .._conv import AvgPool2d, MaxPool2d  # noqa: F401

__all__ = ["AvgPool2d", "MaxPool2d"]
