"""``minigrad.nn``: modules, parameters, layers and losses with PyTorch's API."""
from . import functional, init, utils
from .activation import (CELU, ELU, GELU, SELU, Hardtanh, LeakyReLU, LogSigmoid, Mish, ReLU6, SiLU,
                         Softplus, Softsign)
from .containers import ModuleDict, ParameterDict, ParameterList
from ._conv import AdaptiveAvgPool2d, AvgPool2d, Conv1d, Conv2d, MaxPool2d, PixelShuffle, PixelUnshuffle
from .dropout import Dropout
from .layers import Flatten, Identity, Linear, LogSoftmax, ModuleList, ReLU, Sequential, Sigmoid, Softmax, Tanh
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, L1Loss, MSELoss, NLLLoss, SmoothL1Loss
from .module import Module
from .normalization import BatchNorm1d, LayerNorm
from .parameter import Parameter
from .sparse import Embedding

__all__ = ["Module", "Parameter", "Linear", "Identity", "ReLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax",
           "Flatten", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "MSELoss",
           "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "L1Loss", "SmoothL1Loss", "HuberLoss",
           "SiLU", "GELU", "LeakyReLU", "ELU", "CELU", "SELU", "Softplus", "Hardtanh", "ReLU6", "LogSigmoid", "Mish",
           "Softsign", "Dropout", "Embedding", "LayerNorm", "BatchNorm1d", "Conv1d", "Conv2d", "MaxPool2d", "AvgPool2d",
           "PixelShuffle", "PixelUnshuffle", "AdaptiveAvgPool2d",
           "functional", "init", "utils", "modules"]

from . import modules  # noqa: E402  (PyTorch's import paths: torch.nn.modules.batchnorm._BatchNorm...)


def __getattr__(name: str):
    # A PyTorch name minigrad does not have: say so (and what to use instead), not just "no attribute".
    from .._unsupported import missing

    raise missing(f"nn.{name}", __all__)
