"""What a check needs to work the same on the student's real objects (a self-check) and on the
judge's proxies of them (grading, ``_bridge``).

Why: a few checks hand the student's code whole graphs, or ask whether an object is an instance of
the student's own class. Graded, those objects live in the worker (in the sandbox) and the check
runs in the judge, outside it; these helpers ask the worker then, and do the plain thing otherwise.
Whatever the worker answers is an observation: it can at most say what a correct solution says.
"""
from __future__ import annotations

import importlib
import sys
from typing import Any


def _peer(obj: Any):
    """The bridge peer that ``obj`` is a proxy of, or None (a real object)."""
    bridge = sys.modules.get("minigrad.course._bridge")
    if bridge is None:
        return None
    if type(obj) is bridge.RemoteObject:
        return obj._peer
    if isinstance(obj, type) and "_peer" in obj.__dict__:
        return obj.__dict__["_peer"]
    return None


def is_remote(obj: Any) -> bool:
    """Whether ``obj`` is the judge's proxy of an object of the student's process."""
    return _peer(obj) is not None


def library(near: Any, name: str = "minigrad"):
    """The library module whose tensors the student's function ``near`` can walk: the worker's own
    copy when ``near`` is a proxy (its tensors then stay in the worker, as handles, graphs and all),
    else the module here."""
    peer = _peer(near)
    if peer is None:
        return importlib.import_module(name)
    from . import _bridge

    peer.lookup(_bridge.TENSOR_HANDLES)
    return peer.lookup(_bridge.MODULE + name)


def instance_of(obj: Any, cls: Any) -> bool:
    """``isinstance(obj, cls)``, asked of the worker when either is a proxy."""
    peer = _peer(cls) or _peer(obj)
    if peer is None:
        return isinstance(obj, cls)
    from . import _bridge

    got = peer.lookup(_bridge.ISINSTANCE)(obj, cls)
    return got is True
