"""``torch.nn.modules.container``."""
from ..containers import ModuleDict, ParameterDict, ParameterList  # noqa: F401
from ..layers import ModuleList, Sequential  # noqa: F401

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]
