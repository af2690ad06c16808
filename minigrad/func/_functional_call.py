"""torch.func.functional_call: run a module with some of its parameters and buffers swapped out.

Why: a transform differentiates with respect to a function's *arguments*; functional_call turns
a module's weights into arguments (``grad(lambda p: loss(functional_call(model, p, (x,))))``).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def _merge(parameter_and_buffer_dicts: Any) -> dict:
    if isinstance(parameter_and_buffer_dicts, dict):
        return parameter_and_buffer_dicts
    if isinstance(parameter_and_buffer_dicts, Sequence) and not isinstance(parameter_and_buffer_dicts, str):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        seen: dict = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                seen[k] = seen.get(k, 0) + 1
        repeated = [k for k, n in seen.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is "
                             "ambiguous")
        return {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                     f"{type(parameter_and_buffer_dicts)}")


def _untie(module, given: dict) -> dict:
    """Give every name of a tied tensor (one tensor under several names) the value given for one of them."""
    by_tensor: dict[int, set] = {}
    named = list(module.named_parameters(remove_duplicate=False)) + list(module.named_buffers(remove_duplicate=False))
    for name, t in named:
        by_tensor.setdefault(id(t), set()).add(name)
    tied = {n: names for names in by_tensor.values() if len(names) > 1 for n in names}
    out = dict(given)
    for name in [n for n in given if n in tied]:
        names = tied[name]
        values = {id(given[n]) for n in names if n in given}
        if len(values) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, which are tied. "
                             "Consider using tie_weights=False")
        for n in names:
            out[n] = given[name]
    return out


def _slot(module, name: str):
    """(submodule, attribute, which dict holds it or None) for a dotted name like 'layers.0.weight'."""
    *path, attr = name.split(".")
    mod = module
    for p in path:
        mod = mod._modules[p]
    for key in ("_parameters", "_buffers"):
        if attr in mod.__dict__[key]:
            return mod, attr, mod.__dict__[key]
    return mod, attr, None


def functional_call(module, parameter_and_buffer_dicts, args: Any = None, kwargs: dict | None = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the named parameters/buffers replaced by the given tensors.

    The module's own tensors are put back afterwards, even if the call raises.
    """
    given = _merge(parameter_and_buffer_dicts)
    if tie_weights:
        given = _untie(module, given)
    if strict:
        known = [n for n, _ in module.named_parameters(remove_duplicate=False)]
        known += [n for n, _ in module.named_buffers(remove_duplicate=False)]
        unexpected = [k for k in given if k not in known]
        missing = [k for k in known if k not in given]
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(msgs))
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    saved = []
    try:
        for name, value in given.items():
            mod, attr, holder = _slot(module, name)
            if holder is not None:
                saved.append((holder, attr, holder[attr]))
                holder[attr] = value
            else:
                saved.append((mod.__dict__, attr, mod.__dict__.get(attr, _ABSENT)))
                mod.__dict__[attr] = value
        return module(*args, **kwargs)
    finally:
        for holder, attr, old in reversed(saved):
            if old is _ABSENT:
                holder.pop(attr, None)
            else:
                holder[attr] = old


_ABSENT = object()
