"""``torch.accelerator``: no accelerator, as PyTorch on a CPU-only machine reports."""
from __future__ import annotations


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def current_accelerator():
    return None
