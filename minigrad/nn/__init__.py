"""``minigrad.nn``: modules, parameters, layers and losses with PyTorch's API."""
from . import functional, init, utils
from .activation import (CELU, ELU, GELU, SELU, Hardtanh, LeakyReLU, LogSigmoid, Mish, ReLU6, SiLU,
                         Softplus, Softsign)
from .layers import Flatten, Identity, Linear, LogSoftmax, ModuleList, ReLU, Sequential, Sigmoid, Softmax, Tanh
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, MSELoss, NLLLoss
from .module import Module
from .parameter import Parameter

__all__ = ["Module", "Parameter", "Linear", "Identity", "ReLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax",
           "Flatten", "Sequential", "ModuleList", "MSELoss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss",
           "SiLU", "GELU", "LeakyReLU", "ELU", "CELU", "SELU", "Softplus", "Hardtanh", "ReLU6", "LogSigmoid", "Mish",
           "Softsign",
           "functional", "init", "utils"]
