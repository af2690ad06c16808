"""``Optimizer``: the base class that holds parameter groups and per-parameter state.

Updates are written directly into each parameter's NumPy array (no graph is recorded,
exactly like PyTorch's ``step`` under ``no_grad``) and bump the parameter's version
counter, so a graph that saved the old values notices the change.
"""
from __future__ import annotations

from collections import defaultdict
from copy import deepcopy
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad


class _RequiredParameter:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    """Base class: ``param_groups`` (a list of dicts with ``"params"`` and hyper-parameters) and ``state``."""

    def __init__(self, params, defaults: dict) -> None:
        self.defaults = defaults
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, but got "
                f"{params.type()}\nPass model.parameters() or a list of tensors, e.g. SGD([w, b], lr=0.1)."
            )
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list\nDid the model register any nn.Parameter? "
                             "(a generator such as model.parameters() can only be consumed once)")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own hyper-parameters (defaults fill in the rest)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if p.grad_fn is not None:
                raise ValueError("can't optimize a non-leaf Tensor\nOptimizers update leaf tensors (model "
                                 "parameters, or tensors created with requires_grad=True), not results of operations.")
        group = dict(param_group)
        group["params"] = params
        for key, default in self.defaults.items():
            if default is required and key not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {key}")
            group.setdefault(key, default)
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in existing for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized tensors (to None by default, as in PyTorch 2)."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    g.grad_fn = None
                    g._rg = False
                    g._data.fill(0)

    def step(self, closure=None):
        raise NotImplementedError

    def _closure(self, closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    @staticmethod
    def _gradients(group: dict):
        """``(param, its array, its gradient array)`` for each parameter of ``group`` that has a
        gradient; the gradient is already negated for ``maximize`` and has the weight decay
        (``weight_decay * param``) added, as every PyTorch optimizer here starts."""
        wd = group["weight_decay"]
        maximize = group["maximize"]
        for p in group["params"]:
            grad = p._grad
            if grad is None:
                continue
            d = p._data
            g = grad._data
            if maximize:
                g = -g
            if wd != 0:
                g = g + wd * d
            yield p, d, g

    # --- saving and restoring -------------------------------------------------------
    def state_dict(self) -> dict:
        """``{"state": {index: {...}}, "param_groups": [...]}`` with parameters replaced by indices."""
        index: dict[int, int] = {}
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in g["params"]]
            groups.append(packed)
        state = {index[id(p)]: {k: (Tensor._wrap(v._data.copy()) if isinstance(v, Tensor) else deepcopy(v))
                                for k, v in s.items()}
                 for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(a["params"]) != len(b["params"]) for a, b in zip(self.param_groups, groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        by_index = {}
        for own, saved in zip(self.param_groups, groups):
            for p, i in zip(own["params"], saved["params"]):
                by_index[i] = p
            for k, v in saved.items():
                if k != "params":
                    own[k] = v
        self.state = defaultdict(dict)
        for i, s in state_dict["state"].items():
            p = by_index[i]
            self.state[p] = {k: (Tensor._wrap(np.array(v._data, dtype=p._data.dtype if v._data.ndim else v._data.dtype))
                                 if isinstance(v, Tensor) else deepcopy(v)) for k, v in s.items()}

    def __repr__(self) -> str:
        s = type(self).__name__ + " ("
        for i, g in enumerate(self.param_groups):
            s += f"\nParameter Group {i}"
            for k in sorted(k for k in g if k != "params"):
                s += f"\n    {k}: {g[k]}"
        return s + "\n)"

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}
