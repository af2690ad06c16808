"""``torch.nn.modules.dropout``."""
from ..dropout import Dropout  # noqa: F401
