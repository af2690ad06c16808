"""``minigrad.optim``: optimizers with PyTorch's API and update rules (``SGD``, ``Adam``)."""
from .adam import Adam
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam"]


def __getattr__(name: str):
    # A PyTorch name minigrad does not have (AdamW, lr_scheduler...): say so and what to use instead.
    from .._unsupported import missing

    raise missing(f"optim.{name}", __all__)
