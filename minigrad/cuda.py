"""``torch.cuda`` on a machine without CUDA: minigrad runs on the CPU only.

What CPU-only code asks (``is_available()``, ``device_count()``, seeding) answers as PyTorch
built without CUDA does; what needs a GPU raises PyTorch's "Torch not compiled with CUDA enabled".
"""
from __future__ import annotations

from ._device import not_compiled_with_cuda


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def manual_seed(seed: int) -> None:
    """Accepted and ignored (there is no CUDA generator), as in PyTorch without CUDA."""


def manual_seed_all(seed: int) -> None:
    """Accepted and ignored, as in PyTorch without CUDA."""


def empty_cache() -> None:
    """Nothing to free."""


def _unavailable(*args, **kwargs):
    raise not_compiled_with_cuda()


current_device = synchronize = get_device_name = get_device_properties = set_device = _unavailable
memory_allocated = max_memory_allocated = _unavailable


def __getattr__(name: str):
    from ._unsupported import missing

    raise missing(f"cuda.{name}")
