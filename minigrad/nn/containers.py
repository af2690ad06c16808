"""Containers beyond Sequential / ModuleList: ``ModuleDict``, ``ParameterList``, ``ParameterDict``
(their entries are registered, so ``parameters()`` and ``state_dict()`` find them)."""
from __future__ import annotations

from typing import Iterator

from .module import Module
from .parameter import Parameter


class ModuleDict(Module):
    """Modules by name, in insertion order (``model.blocks["encoder"]``)."""

    def __init__(self, modules=None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        return self._modules.pop(key)

    def update(self, modules) -> None:
        items = modules.items() if hasattr(modules, "items") else modules
        for key, module in items:
            self[key] = module


class _ParameterContainer(Module):
    def __repr__(self) -> str:
        lines = [f"    ({k}): {_describe(p)}" for k, p in self._parameters.items()]
        return self._get_name() + "(\n" + "\n".join(lines) + "\n)" if lines else self._get_name() + "()"


class ParameterList(_ParameterContainer):
    """Parameters by position, registered as "0", "1", ..."""

    def __init__(self, values=None) -> None:
        super().__init__()
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx: int) -> Parameter:
        return list(self._parameters.values())[idx]

    def __setitem__(self, idx: int, param: Parameter) -> None:
        self.register_parameter(list(self._parameters)[idx], _as_parameter(param))

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._parameters.values())

    def append(self, value) -> "ParameterList":
        self.register_parameter(str(len(self)), _as_parameter(value))
        return self

    def extend(self, values) -> "ParameterList":
        for v in values:
            self.append(v)
        return self



class ParameterDict(_ParameterContainer):
    """Parameters by name."""

    def __init__(self, parameters=None) -> None:
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Parameter:
        return self._parameters[key]

    def __setitem__(self, key: str, param) -> None:
        self.register_parameter(key, _as_parameter(param))

    def __delitem__(self, key: str) -> None:
        del self._parameters[key]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[str]:
        return iter(self._parameters)

    def __contains__(self, key: str) -> bool:
        return key in self._parameters

    def keys(self):
        return self._parameters.keys()

    def items(self):
        return self._parameters.items()

    def values(self):
        return self._parameters.values()

    def update(self, parameters) -> None:
        items = parameters.items() if hasattr(parameters, "items") else parameters
        for key, p in items:
            self[key] = p



def _as_parameter(value) -> Parameter:
    return value if isinstance(value, Parameter) else Parameter(value)


def _describe(p: Parameter) -> str:
    size = "x".join(str(s) for s in p.shape)
    return f"Parameter containing: [{p.dtype!r} of size {size}]"


