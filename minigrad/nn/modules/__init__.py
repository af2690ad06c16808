"""``torch.nn.modules``: PyTorch's import paths for the module classes (``from torch.nn.modules.batchnorm
import _BatchNorm``, ``torch.nn.modules.conv.Conv2d``...). The classes are minigrad.nn's own; each submodule
re-exports those of its PyTorch namesake that minigrad has."""
from ..activation import (CELU, ELU, GELU, SELU, Hardtanh, LeakyReLU, LogSigmoid, Mish, ReLU6, SiLU,  # noqa: F401
                          Softplus, Softsign)
from ..containers import ModuleDict, ParameterDict, ParameterList  # noqa: F401
from .._conv import (AdaptiveAvgPool2d, AvgPool2d, Conv1d, Conv2d, MaxPool2d, PixelShuffle,  # noqa: F401
                     PixelUnshuffle)
from ..dropout import Dropout  # noqa: F401
from ..layers import (Flatten, Identity, Linear, LogSoftmax, ModuleList, ReLU, Sequential, Sigmoid,  # noqa: F401
                      Softmax, Tanh)
from ..loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, L1Loss, MSELoss, NLLLoss,  # noqa: F401
                    SmoothL1Loss)
from ..module import Module  # noqa: F401
from ..normalization import BatchNorm1d, LayerNorm  # noqa: F401
from ..sparse import Embedding  # noqa: F401
from . import (activation, batchnorm, container, conv, dropout, flatten, linear, loss, module,  # noqa: F401
               normalization, pixelshuffle, pooling, sparse)

__all__ = ["AdaptiveAvgPool2d", "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d", "CELU", "Conv1d", "Conv2d",
           "CrossEntropyLoss", "Dropout", "ELU", "Embedding", "Flatten", "GELU", "Hardtanh", "HuberLoss", "Identity",
           "L1Loss", "LayerNorm", "LeakyReLU", "Linear", "LogSigmoid", "LogSoftmax", "MSELoss", "MaxPool2d", "Mish",
           "Module", "ModuleDict", "ModuleList", "NLLLoss", "ParameterDict", "ParameterList", "PixelShuffle",
           "PixelUnshuffle", "ReLU", "ReLU6", "SELU", "Sequential", "SiLU", "Sigmoid", "SmoothL1Loss", "Softmax",
           "Softplus", "Softsign", "Tanh", "activation", "batchnorm", "container", "conv", "dropout", "flatten",
           "linear", "loss", "module", "normalization", "pixelshuffle", "pooling", "sparse"]
