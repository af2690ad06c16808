"""``torch.utils``: ``checkpoint`` (activation checkpointing) and ``data`` (Dataset, DataLoader)."""
from . import checkpoint, data

__all__ = ["checkpoint", "data"]


def __getattr__(name: str):
    from .._unsupported import missing

    raise missing(f"utils.{name}", __all__)
