"""``torch.nn.modules.batchnorm``. minigrad has one batch norm, ``BatchNorm1d``; PyTorch's bases
``_NormBase`` and ``_BatchNorm`` name it here, so ``isinstance(m, _BatchNorm)`` (how real code finds its
batch-norm layers) is true exactly for minigrad's batch-norm layers."""
from ..normalization import BatchNorm1d  # noqa: F401

_BatchNorm = BatchNorm1d
_NormBase = BatchNorm1d

__all__ = ["BatchNorm1d", "_BatchNorm", "_NormBase"]
