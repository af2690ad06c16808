"""The worker's side of the grading bridge: ``python -m minigrad.course._worker`` in the sandbox.

Why a separate process: the student's code must run where nothing of the judgement is. The
worker holds the real student objects (loaded the way ``_checker`` loads them: the vetted
``def``/``class`` statements, then the kernel's values) and answers the judge's requests about
them (``_bridge.Peer`` does the answering); it never sees a check, a hidden test or a reference
solution, only the inputs the judge chooses. Whatever the student's code writes to any file
descriptor can at most break the framing, which the judge reports as a ProtocolError (never a pass).

Process protocol: the worker first writes ``{"ready": true}`` (it has started; no student code has
run yet, so a worker that dies before it is the grader's failure, not the student's). The first
frame on ``read_fd`` is then the set-up ``{"load": [...], "values": {...}}``
(``load`` as ``_extract.plan`` makes it, ``values`` encoded by ``_values``); then requests, one
reply each, until the judge closes its end.
"""
from __future__ import annotations

import os
import sys
from typing import Any

from . import _bridge_wire as wire
from ._bridge import PipeTransport, Peer

LOAD_ERROR = "__load_error__"  # the name under which the judge can read why loading failed (or None)


READY = {"ready": True}         # the worker's first frame: started, and no student code run yet
TAMPER = "__tamper__"          # the name under which the judge reads what the guard saw (a list of strings)


class Worker(Peer):
    """The worker's peer: any object crosses as a handle; every request op is answered."""

    def __init__(self, namespace: dict, load_error: str | None = None, before: dict | None = None):
        super().__init__(None, exports="all")
        self.remote_serves = frozenset({"call", "vjp"})  # the judge answers callbacks only
        self.namespace = dict(namespace)
        self.namespace[LOAD_ERROR] = load_error
        self.before = before  # the checker's integrity snapshot, taken before the student's code loaded

    def _op_lookup(self, msg: dict) -> dict:
        from . import _bridge

        name = msg["name"]
        if name == _bridge.SUBCLASS:
            return {"value": self.encode(_make_subclass)}
        if name == _bridge.ISINSTANCE:
            return {"value": self.encode(isinstance)}
        if name == _bridge.TENSOR_HANDLES:
            self.tensor_handles = True
            return {"value": self.encode(None)}
        if name.startswith(_bridge.MODULE):
            module = name[len(_bridge.MODULE):]
            if module.split(".")[0] not in ("minigrad", "numpy") or module.startswith("minigrad.course"):
                raise NameError(f"name {name!r} is not defined")
            import importlib

            return {"value": self.encode(importlib.import_module(module))}
        if name != TAMPER:
            return super()._op_lookup(msg)
        from . import _checker

        found = list(dict.fromkeys(_checker._FINDINGS))
        if self.before is not None:
            # (the warnings module is the bridge's own: it records the student's warnings while serving)
            found += [f"{name} was replaced" for name in _checker._changes(self.before)
                      if not name.startswith("warnings.")]
        return {"value": self.encode(found[:20])}


def _make_subclass(name: str, base: type, methods: dict) -> type:
    """A subclass of one of the worker's classes whose methods are the judge's functions (called
    back across the bridge): a hidden test's ``class FirstOnly(EngineFunction)`` in chapter 9."""
    if not isinstance(base, type) or type(name) is not str or not name.isidentifier():
        raise TypeError("a subclass needs a class and a name")
    return type(base)(name, (base,), {"__module__": "__main__",
                                      **{k: staticmethod(fn) for k, fn in methods.items() if type(k) is str}})


def load_namespace(load: list, values: dict, *, guard: bool = False) -> tuple[dict, str | None]:
    """The student's namespace as the checker builds it: the vetted definitions, then the values.

    Returns (namespace, error text or None). ``load`` items: ``source``, ``filename``, ``stmts``
    (indices of top-level statements), ``label``; ``values``: already decoded. ``guard``: arm the
    checker's audit hook first, as the checker does, and keep it armed (no threads, processes,
    frames, ``open`` ... for the student's code). Only in a worker process: the hook refuses
    starting processes and threads to anyone, so a test process must not arm it.
    """
    import builtins

    from . import _checker

    ns: dict = {"__builtins__": builtins, "__name__": "__main__"}
    ns.update(values)
    if guard:
        _checker._GUARD["armed"] = True
    error = _checker._load_definitions(ns, load)
    ns.update(values)  # the kernel's values win over earlier definitions of the same name
    return {k: v for k, v in ns.items() if not k.startswith("__")}, error


def make_worker(load: list, values: dict, *, guard: bool = False) -> Worker:
    before = None
    if guard:  # what the student's code may replace, seen before it loads (the guard is not armed yet)
        from . import _checker

        before = _checker._snapshot()
    ns, error = load_namespace(load, values, guard=guard)
    return Worker(ns, error, before)


def serve(read_fd: int, write_fd: int, load: list, values: dict, timeout: float | None = None,
          transport: PipeTransport | None = None, guard: bool = True) -> None:
    """Load the student's definitions, then answer requests on ``read_fd`` until it closes.

    ``transport``: one that already read from ``read_fd`` (its buffer may hold the first request).
    ``guard``: the checker's audit hook and no new processes or threads (``RLIMIT_NPROC``), as in
    ``_checker.main``: student code that runs there today runs here, and no thread of the
    student's can take over the worker's file descriptors while the main loop waits.
    """
    if guard:
        import resource

        import numpy  # noqa: F401  (its threads start before the limit)

        try:
            resource.setrlimit(resource.RLIMIT_NPROC, (1, 1))
        except (ValueError, OSError):
            pass
    worker = make_worker(load, values, guard=guard)
    transport = transport or PipeTransport(read_fd, write_fd, timeout)
    worker.send = transport.send
    transport.on_request = worker.handle
    transport.serve_forever()


def _setup(msg: Any) -> tuple[list, dict]:
    """The set-up frame, checked: the statements to load and the kernel's values."""
    from . import _values

    if type(msg) is not dict or set(msg) != {"load", "values"}:
        raise wire.ProtocolError("set-up: expected {'load': [...], 'values': {...}}")
    load = msg["load"]
    if type(load) is not list or not all(type(i) is dict and set(i) == {"source", "filename", "stmts", "label"}
                                         for i in load):
        raise wire.ProtocolError("set-up: malformed 'load'")
    if type(msg["values"]) is not dict:
        raise wire.ProtocolError("set-up: malformed 'values'")
    values = {}
    for name, enc in msg["values"].items():
        try:
            values[name] = _values.decode(enc)
        except (ValueError, TypeError, KeyError):
            pass
    return load, values


def main(argv: list[str] | None = None) -> None:
    """``python -m minigrad.course._worker [READ_FD WRITE_FD]`` (default: stdin and a private stdout)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        read_fd, write_fd = int(argv[0]), int(argv[1])
    else:
        read_fd = 0
        write_fd = os.dup(1)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)  # what the student prints is not a frame
        if not os.environ.get("MINIGRAD_COURSE_DEBUG"):
            os.dup2(devnull, 2)
        os.close(devnull)
    sys.stdout = open(os.devnull, "w")
    import minigrad  # noqa: F401  (before the student's code)

    import numpy  # noqa: F401  (the worker's start, before the ready frame: a failure here is the grader's)

    run(read_fd, write_fd)


def run(read_fd: int, write_fd: int) -> None:
    """The worker's life once its imports are done: the ready frame, the set-up, then requests
    (also how a child of ``_zygote`` starts, with the imports already made)."""
    sys.stdout = open(os.devnull, "w")
    transport = PipeTransport(read_fd, write_fd, None)  # the judge keeps the time, the worker waits
    transport.io.write(READY)  # no student code has run: a death before this frame is not the student's
    msg = transport.io.read()
    if msg is None:
        os._exit(0)
    load, values = _setup(msg)
    serve(read_fd, write_fd, load, values, transport=transport)
    os._exit(0)


if __name__ == "__main__":
    main()
