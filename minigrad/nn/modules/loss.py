"""``torch.nn.modules.loss``."""
from ..loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, L1Loss, MSELoss, NLLLoss,  # noqa: F401
                    SmoothL1Loss, _Loss)

__all__ = ["BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "HuberLoss", "L1Loss", "MSELoss", "NLLLoss",
           "SmoothL1Loss", "_Loss"]
