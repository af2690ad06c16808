"""``torch.nn.modules.conv``."""
from .._conv import Conv1d, Conv2d, _ConvNd  # noqa: F401

__all__ = ["Conv1d", "Conv2d", "_ConvNd"]
