"""``torch.nn.modules.normalization``."""
from ..normalization import LayerNorm  # noqa: F401
