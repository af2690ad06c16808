"""``minigrad.nn``: modules, parameters, layers and losses with PyTorch's API."""
from . import functional, init
from .layers import Flatten, Identity, Linear, LogSoftmax, ModuleList, ReLU, Sequential, Sigmoid, Softmax, Tanh
from .loss import BCELoss, CrossEntropyLoss, MSELoss, NLLLoss
from .module import Module
from .parameter import Parameter

__all__ = ["Module", "Parameter", "Linear", "Identity", "ReLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax",
           "Flatten", "Sequential", "ModuleList", "MSELoss", "CrossEntropyLoss", "NLLLoss", "BCELoss",
           "functional", "init"]
