"""``torch.nn.modules.module``."""
from ..module import Module  # noqa: F401

__all__ = ["Module"]
