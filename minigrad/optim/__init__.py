"""``minigrad.optim``: optimizers with PyTorch's API and update rules (``SGD``, ``Adam``)."""
from .adam import Adam
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam"]
