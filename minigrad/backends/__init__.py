"""``torch.backends``: the flags CPU-only code reads or sets (``mps.is_available()``, ``cudnn.deterministic``)."""
from __future__ import annotations

from . import cudnn, mps

__all__ = ["cudnn", "mps"]
