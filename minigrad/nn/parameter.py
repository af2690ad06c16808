"""``Parameter``: a tensor that a ``Module`` registers as one of its learnable weights."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor that requires grad by default and is registered when assigned to a Module.

    ``Parameter(data)`` shares memory with ``data`` (as in PyTorch); its repr starts with
    ``Parameter containing:``.
    """

    __slots__ = ()

    def __init__(self, data: Tensor | np.ndarray | None = None, requires_grad: bool = True) -> None:
        if data is None:
            arr = np.empty((0,), dtype=np.float32)
        elif isinstance(data, Tensor):
            arr = data._data
        elif isinstance(data, np.ndarray):
            arr = data
        else:
            raise TypeError(
                f"Parameter(data): expected a Tensor, got {type(data).__name__}\n"
                "Wrap the values first, e.g. nn.Parameter(minigrad.tensor([1., 2.]))."
            )
        self._init_leaf(arr, requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def _grad_accumulator(self):
        # A plain leaf holds its AccumulateGrad node weakly, so a new node is built for every
        # graph. A parameter lives as long as its model: it keeps its node (one object less per
        # parameter per training step; the node <-> parameter cycle dies with the model).
        extra = self._extra
        node = extra.get("acc_node") if extra is not None else None
        if node is None:
            node = Tensor._grad_accumulator(self)
            self._set_extra("acc_node", node)
        return node

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self._data, self._rg))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        p = Parameter(self._data.copy(), self._rg)
        memo[id(self)] = p
        return p


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)
