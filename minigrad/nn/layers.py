"""Layers: ``Linear``, activations and containers (``Sequential``, ``ModuleList``)."""
from __future__ import annotations

import math
from collections import OrderedDict
from typing import Iterator

import numpy as np

from .. import _dtype
from .._ops import nn_ops, pointwise
from .._tensor import Tensor, _check_device
from . import init
from .module import Module
from .parameter import Parameter


class Identity(Module):
    """Returns its input unchanged (a placeholder layer)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input


class Linear(Module):
    """``y = x @ weight.T + bias`` with weight of shape (out_features, in_features).

    Initialised as PyTorch does: weight by ``kaiming_uniform_(a=sqrt(5))``, which is
    U(-1/sqrt(in_features), 1/sqrt(in_features)), and bias from the same range.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        _check_device(device)
        np_dtype = _dtype._default[0].np_dtype if dtype is None else _dtype.to_numpy_dtype(dtype)
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(np.empty((out_features, in_features), dtype=np_dtype))
        if bias:
            self.bias = Parameter(np.empty((out_features,), dtype=np_dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        params = self._parameters  # same as self.weight / self.bias, minus two __getattr__ calls
        return nn_ops.Linear.apply(input, params["weight"], params["bias"])

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class ReLU(Module):
    """max(x, 0), elementwise."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input.relu_() if self.inplace else pointwise.Relu.apply(input)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    """1 / (1 + exp(-x)), elementwise."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return pointwise.Sigmoid.apply(input)


class Tanh(Module):
    """tanh(x), elementwise."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return pointwise.Tanh.apply(input)


class Softmax(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        from .functional import softmax

        return softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        from .functional import log_softmax

        return log_softmax(input, self.dim)


class Flatten(Module):
    """Flatten dimensions ``start_dim..end_dim`` (by default all but the batch dimension)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Sequential(Module):
    """Modules applied one after the other; ``Sequential(a, b)`` or ``Sequential(OrderedDict(...))``.

    Submodules are named ``"0"``, ``"1"``, ... (or by the dict's keys); supports ``len``,
    iteration, ``model[i]`` and slicing.
    """

    def __init__(self, *args: Module) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def _index(self, idx: int) -> int:
        n = len(self._modules)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return idx % n

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[self._index(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules.keys())[self._index(idx)]
        self.add_module(key, module)

    def __delitem__(self, idx) -> None:
        keys = list(self._modules.keys())
        for key in (keys[idx] if isinstance(idx, slice) else [keys[self._index(idx)]]):
            del self._modules[key]
        # keep the names 0..n-1, as PyTorch does
        items = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> "Sequential":
        self.add_module(str(len(self)), module)
        return self

    def forward(self, input):  # noqa: A002
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules whose parameters are registered (not applied automatically)."""

    def __init__(self, modules=None) -> None:
        super().__init__()
        if modules is not None:
            for m in modules:
                self.append(m)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        return list(self._modules.values())[idx]

    def __setitem__(self, idx: int, module: Module) -> None:
        self.add_module(list(self._modules.keys())[idx], module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> "ModuleList":
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules) -> "ModuleList":
        for m in modules:
            self.append(m)
        return self
