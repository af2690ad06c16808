"""Nested tuples, lists and dicts of tensors ("pytrees"), flattened to a list of leaves and rebuilt.

Why: torch.func's transforms accept and return any nesting of these containers; each transform
works on the flat list of tensors and rebuilds the caller's structure around its results.
A leaf is anything that is not a tuple, list or dict (a namedtuple keeps its class).
"""
from __future__ import annotations

from typing import Any, Callable


class TreeSpec:
    """The shape of a pytree without its leaves: a container kind, its keys and the children's specs."""

    __slots__ = ("kind", "context", "children", "num_leaves")

    def __init__(self, kind: Any, context: Any, children: tuple) -> None:
        self.kind = kind          # None for a leaf; else tuple, list, dict or a namedtuple class
        self.context = context    # dict keys, in order
        self.children = children
        self.num_leaves = 1 if kind is None else sum(c.num_leaves for c in children)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TreeSpec) and self.kind is other.kind and self.context == other.context
                and self.children == other.children)

    def __hash__(self) -> int:
        return hash((self.kind, self.context, self.children))

    def __repr__(self) -> str:
        if self.kind is None:
            return "*"
        inner = ", ".join(repr(c) for c in self.children)
        if self.kind is tuple:
            return f"({inner}{',' if len(self.children) == 1 else ''})"
        if self.kind is list:
            return f"[{inner}]"
        if self.kind is dict:
            return "{" + ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.context, self.children)) + "}"
        return f"{self.kind.__name__}({inner})"


LEAF = TreeSpec(None, None, ())


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def tree_flatten(tree: Any) -> tuple[list, TreeSpec]:
    """The leaves of ``tree`` in order, and its spec (for ``tree_unflatten``)."""
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree: Any, leaves: list) -> TreeSpec:
    if isinstance(tree, (tuple, list)):
        kind = type(tree) if _is_namedtuple(tree) else (tuple if isinstance(tree, tuple) else list)
        return TreeSpec(kind, None, tuple(_flatten(c, leaves) for c in tree))
    if isinstance(tree, dict):
        keys = tuple(tree)
        return TreeSpec(dict, keys, tuple(_flatten(tree[k], leaves) for k in keys))
    leaves.append(tree)
    return LEAF


def tree_unflatten(leaves, spec: TreeSpec) -> Any:
    """Rebuild the structure ``spec`` describes around ``leaves`` (one per leaf, in order)."""
    it = iter(leaves)
    out = _unflatten(it, spec)
    return out


def _unflatten(it, spec: TreeSpec) -> Any:
    if spec.kind is None:
        return next(it)
    children = [_unflatten(it, c) for c in spec.children]
    if spec.kind is dict:
        return dict(zip(spec.context, children))
    if spec.kind is tuple:
        return tuple(children)
    if spec.kind is list:
        return children
    return spec.kind(*children)  # a namedtuple


def tree_map(fn: Callable, tree: Any) -> Any:
    """``tree`` with every leaf replaced by ``fn(leaf)``."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)
