"""``torch.nn.modules.activation``."""
from ..activation import (CELU, ELU, GELU, SELU, Hardtanh, LeakyReLU, LogSigmoid, Mish, ReLU6, SiLU,  # noqa: F401
                          Softplus, Softsign)
from ..layers import LogSoftmax, ReLU, Sigmoid, Softmax, Tanh  # noqa: F401
