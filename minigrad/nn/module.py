"""``Module``: the base class of layers and models, with PyTorch's bookkeeping.

Assigning a ``Parameter`` or another ``Module`` to an attribute registers it, so that
``parameters()`` / ``named_parameters()`` / ``state_dict()`` find every weight of a
nested model under a dotted name such as ``"0.weight"`` or ``"encoder.fc.bias"``.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Iterator, NamedTuple

import numpy as np

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .parameter import Parameter


class _IncompatibleKeys(NamedTuple):
    missing_keys: list
    unexpected_keys: list

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self.missing_keys}, unexpected_keys={self.unexpected_keys})"


def _addindent(s: str, spaces: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


class Module:
    """Base class for all neural-network modules: subclass it and write ``forward``."""

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())

    # --- registration ---------------------------------------------------------------
    def _check_init(self, name: str) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                f"cannot assign {name!r} before Module.__init__() call\n"
                f"{type(self).__name__}.__init__ must call super().__init__() before assigning parameters "
                "or submodules."
            )

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if isinstance(value, Parameter):
            self._check_init(name)
            self._remove_from(name, keep="_parameters")
            d["_parameters"][name] = value
        elif isinstance(value, Module):
            self._check_init(name)
            self._remove_from(name, keep="_modules")
            d["_modules"][name] = value
        elif "_parameters" in d and name in d["_parameters"]:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' (torch.nn.Parameter or None "
                    "expected)\nWrap it: module.{0} = nn.Parameter(tensor), or update it in place under "
                    "no_grad.".format(name)
                )
            d["_parameters"][name] = None
        elif "_modules" in d and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            d["_modules"][name] = None
        elif "_buffers" in d and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def _remove_from(self, name: str, keep: str) -> None:
        d = self.__dict__
        d.pop(name, None)
        for key in ("_parameters", "_buffers", "_modules"):
            if key != keep:
                d[key].pop(name, None)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: look in the registries.
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            reg = d.get(key)
            if reg is not None and name in reg:
                return reg[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for key in ("_parameters", "_buffers", "_modules"):
            reg = self.__dict__.get(key)
            if reg is not None and name in reg:
                del reg[name]
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` under ``name`` (None registers an absent parameter, like a missing bias)."""
        self._check_init(name)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        self._remove_from(name, keep="_parameters")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register a tensor that is state but not a parameter (saved in state_dict)."""
        self._check_init(name)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._remove_from(name, keep="_buffers")
        self._buffers[name] = tensor
        if not persistent:
            self.__dict__.setdefault("_non_persistent", set()).add(name)

    def add_module(self, name: str, module: "Module | None") -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_init(name)
        self._remove_from(name, keep="_modules")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> "Module":
        mod = self
        if target == "":
            return mod
        for item in target.split("."):
            if item not in mod._modules:
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = mod._modules[item]
        return mod

    # --- iteration over parameters and submodules ---------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True):
        """Yield ``(dotted_name, module)`` for this module and every module inside it."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self) -> Iterator["Module"]:
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self) -> Iterator["Module"]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, registry: str, prefix: str, recurse: bool, remove_duplicate: bool = True):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mod_prefix, module in modules:
            for name, value in getattr(module, registry).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield mod_prefix + ("." if mod_prefix else "") + name, value

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """Yield ``(name, parameter)`` with dotted names for nested modules, e.g. ``"0.weight"``."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every learnable parameter of the module and its submodules (each once)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # --- modes and gradients ----------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        """Set training mode (affects layers such as dropout); returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> "Module":
        """Set evaluation mode: same as ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to None by default, as in PyTorch 2)."""
        for p in self.parameters():
            if p._grad is None:
                continue
            if set_to_none:
                p._grad = None
            else:
                p._grad.grad_fn = None
                p._grad._rg = False
                p._grad._data.fill(0)

    # --- calling --------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function\n'
            f"Define forward(self, ...) in {type(self).__name__}; calling the module runs it."
        )

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # --- conversion -----------------------------------------------------------------
    def _apply_to_tensors(self, fn) -> "Module":
        """Replace every parameter's data (and grad) and every buffer by ``fn(array)``."""
        with no_grad():
            for m in self.modules():
                for p in m._parameters.values():
                    if p is not None:
                        p._data = fn(p._data)
                        if p._grad is not None:
                            p._grad._data = fn(p._grad._data)
                for name, b in m._buffers.items():
                    if b is not None:
                        b._data = fn(b._data)
        return self

    def apply(self, fn) -> "Module":
        """Call ``fn(module)`` on every submodule (children first) and on self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs) -> "Module":
        from .. import _dtype
        from .._tensor import _check_device

        dtype = kwargs.pop("dtype", None)
        _check_device(kwargs.pop("device", None))
        for a in args:
            if isinstance(a, _dtype.dtype):
                dtype = a
            else:
                _check_device(a)
        if dtype is None:
            return self
        np_dtype = dtype.np_dtype
        return self._apply_to_tensors(lambda a: a.astype(np_dtype) if a.dtype.kind == "f" else a)

    def float(self) -> "Module":
        return self._apply_to_tensors(lambda a: a.astype(np.float32) if a.dtype.kind == "f" else a)

    def double(self) -> "Module":
        return self._apply_to_tensors(lambda a: a.astype(np.float64) if a.dtype.kind == "f" else a)

    def cpu(self) -> "Module":
        return self

    def cuda(self, device=None) -> "Module":
        from .._device import not_compiled_with_cuda

        raise not_compiled_with_cuda()

    # --- state_dict -----------------------------------------------------------------
    def state_dict(self, *args, destination: OrderedDict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> OrderedDict:
        """An OrderedDict ``name -> tensor`` of every parameter and persistent buffer.

        The tensors are detached and share memory with the module (as in PyTorch); copy
        them (``{k: v.clone() ...}``) to keep a snapshot while training goes on.
        """
        if args:  # the old positional form state_dict(destination, prefix, keep_vars)
            destination = args[0]
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        skip = self.__dict__.get("_non_persistent", ())
        for name, b in self._buffers.items():
            if b is not None and name not in skip:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False) -> _IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict`` into this module (in place).

        With ``strict=True`` the keys must match exactly; shapes must always match.
        """
        if not hasattr(state_dict, "keys"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        hints = []
        to_copy = []
        for key, target in own.items():
            if key not in state_dict:
                continue
            src = state_dict[key]
            arr = src._data if isinstance(src, Tensor) else np.asarray(src)
            if arr.shape != target._data.shape:
                errors.append(
                    f"size mismatch for {key}: copying a param with shape {_size(arr.shape)} from checkpoint, the "
                    f"shape in current model is {_size(target._data.shape)}."
                )
                hints.append(f"{key} is {list(target._data.shape)} in this model but {list(arr.shape)} in the "
                             "state_dict (were the layer sizes changed?)")
                continue
            to_copy.append((target, arr))
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected)))
                hints.insert(0, f"the state_dict has entries this {type(self).__name__} does not: {unexpected}")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
                hints.insert(0, f"this {type(self).__name__} expects entries the state_dict lacks: {missing}")
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors)
                + "\nload_state_dict: " + "; ".join(hints)
                + ". Load it into a model built with the same layers, or pass strict=False to skip key mismatches."
            )
        with no_grad():
            for target, arr in to_copy:
                if assign:
                    target._data = arr
                else:
                    np.copyto(target._data, arr, casting="unsafe")
                target._bump_version()
        return _IncompatibleKeys(missing, unexpected)

    # --- printing -------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The text inside the parentheses of this module's repr (override to describe settings)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + _addindent(repr(m), 2) for name, m in self._modules.items()]
        lines = extra_lines + child_lines
        s = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                s += extra_lines[0]
            else:
                s += "\n  " + "\n  ".join(lines) + "\n"
        return s + ")"


def _size(shape) -> str:
    return f"torch.Size({list(shape)})"
