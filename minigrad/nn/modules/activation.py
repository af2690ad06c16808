"""``torch.nn.modules.activation``."""
from ..activation import (CELU, ELU, GELU, SELU, Hardtanh, LeakyReLU, LogSigmoid, Mish, ReLU6, SiLU,  # noqa: F401
                          Softplus, Softsign)
from ..layers import LogSoftmax, ReLU, Sigmoid, Softmax, Tanh  # noqa: F401

__all__ = ["CELU", "ELU", "GELU", "Hardtanh", "LeakyReLU", "LogSigmoid", "LogSoftmax", "Mish", "ReLU", "ReLU6", "SELU",
           "SiLU", "Sigmoid", "Softmax", "Softplus", "Softsign", "Tanh"]
