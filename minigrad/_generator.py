"""``torch.Generator``: a random number generator of one's own, seeded with ``manual_seed``.

minigrad's global RNG (``manual_seed``, ``randn``...) is one NumPy ``Generator``; a ``minigrad.Generator``
wraps another, used where PyTorch code passes ``generator=`` (``DataLoader(shuffle=True)``, samplers,
``random_split``). Its numbers are NumPy's, not PyTorch's (PyTorch uses a Mersenne Twister): the same seed
gives the same sequence on minigrad, not the sequence PyTorch gives.
"""
from __future__ import annotations

import numpy as np


class Generator:
    def __init__(self, device="cpu") -> None:
        from ._device import device as _device

        self.device = _device(device)
        self._seed = int(np.random.SeedSequence().entropy % (1 << 63))
        self._np = np.random.default_rng(self._seed)

    def manual_seed(self, seed: int) -> "Generator":
        self._seed = int(seed)
        self._np = np.random.default_rng(self._seed)
        return self

    def seed(self) -> int:
        """Reseed from fresh entropy; return the new seed."""
        return self.manual_seed(int(np.random.SeedSequence().entropy % (1 << 63)))._seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        return self._np.bit_generator.state

    def set_state(self, state) -> "Generator":
        self._np.bit_generator.state = state
        return self

    def __repr__(self) -> str:
        return f"<minigrad.Generator object at {hex(id(self))}>"
