"""The bridge's wire format: strict, size-limited JSON messages between the judge and the worker.

The judge (the grader, trusted) and the worker (the sandbox, running the student's code) exchange
*requests* (``{"op": ..., "id": n, ...}``) and *replies* (``{"re": n, ...}``). Both directions
use the same schema, because the worker may call back into the judge while it serves a request
(a function of the check handed to the student's code). Every message is checked here, field by
field, before anything acts on it: an unknown field, an unknown kind of value, a value over a
limit or a reply that answers another request is a :class:`ProtocolError`. Nothing received is
ever evaluated, executed or unpickled: values are built from JSON scalars, and arrays from raw
bytes of a whitelisted numeric dtype.

Framing over file descriptors: ASCII decimal length, newline, that many bytes of UTF-8 JSON
(:class:`FrameIO`); :class:`PipeTransport` sends a request and serves the other side's requests
until the reply arrives; :func:`local_pair` links two peers of one process for tests.
"""
from __future__ import annotations

import base64
import json
import math
import os
import select
import time
from typing import Any, Callable

import numpy as np

MAX_FRAME = 64 * 2**20        # bytes of one message
MAX_ARRAY_BYTES = 32 * 2**20  # raw bytes of one array
MAX_VMAP_LEVELS = 8           # nested vmaps around one call
MAX_DEPTH = 24                # nesting of values (lists in lists ...)
MAX_ITEMS = 65_536            # entries of one list, tuple or dict
MAX_STR = 65_536              # characters of one string
MAX_NAME = 200                # characters of an attribute, type or file name
MAX_FRAMES = 12               # traceback entries of one remote exception
MAX_WARNINGS = 32             # warnings reported with one reply
MAX_INT = 2**63               # |int| that crosses
DTYPES = frozenset({"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"})
HANDLE_KINDS = frozenset({"function_class", "class", "callable", "node", "object"})


class ProtocolError(Exception):
    """A message that does not follow the schema (or a peer that stopped answering)."""


# ------------------------------------------------------------------------------ field checks
def _need(cond: bool, why: str) -> None:
    if not cond:
        raise ProtocolError(why)


def _keys(d: Any, required: set, optional: set = frozenset(), what: str = "message") -> None:
    _need(type(d) is dict, f"{what}: expected an object")
    keys = set(d)
    missing, unknown = required - keys, keys - required - optional
    _need(not missing, f"{what}: missing field(s) {sorted(missing)}")
    _need(not unknown, f"{what}: unknown field(s) {sorted(unknown)[:5]}")


def _int(x: Any, what: str, lo: int = -MAX_INT, hi: int = MAX_INT) -> int:
    _need(type(x) is int and lo <= x <= hi, f"{what}: expected an integer in [{lo}, {hi}]")
    return x


def _str(x: Any, what: str, limit: int = MAX_STR) -> str:
    _need(type(x) is str and len(x) <= limit, f"{what}: expected a string of at most {limit} characters")
    return x


def _bool(x: Any, what: str) -> bool:
    _need(type(x) is bool, f"{what}: expected true or false")
    return x


def _list(x: Any, what: str, limit: int = MAX_ITEMS) -> list:
    _need(type(x) is list and len(x) <= limit, f"{what}: expected a list of at most {limit} entries")
    return x


# ------------------------------------------------------------------------------ values
# A value is an object {"k": kind, ...}; the fields of each kind:
_VALUE_FIELDS: dict[str, tuple[set, set]] = {
    "none": (set(), set()),
    "bool": ({"v"}, set()),
    "int": ({"v"}, set()),
    "float": ({"v"}, set()),
    "str": ({"v"}, set()),
    "list": ({"items"}, set()),
    "tuple": ({"items"}, set()),
    "dict": ({"items"}, set()),
    "array": ({"dtype", "shape", "b64"}, set()),
    "scalar": ({"dtype", "b64"}, set()),
    # rg: requires_grad; leaf: in a request, the index among the call's graph inputs;
    # out: in a reply, the index among the call's graph outputs (the tensor is bridged)
    # grad: the tensor's .grad (a tensor value without grad of its own)
    # tangent: its forward-mode tangent at the sender's dual level (a plain tensor of its shape)
    "tensor": ({"dtype", "shape", "b64", "rg"}, {"leaf", "out", "grad", "tangent"}),
    "handle": ({"id", "kind", "name"}, set()),   # an object of the sender's table
    "ref": ({"id"}, set()),                       # an object of the receiver's own table
}


def check_value(v: Any, depth: int = 0) -> None:
    """Raise ProtocolError unless ``v`` is a well-formed value (recursively)."""
    _need(depth <= MAX_DEPTH, f"value nested deeper than {MAX_DEPTH}")
    _need(type(v) is dict and type(v.get("k")) is str, "value: expected an object with a kind 'k'")
    kind = v["k"]
    _need(kind in _VALUE_FIELDS, f"value: unknown kind {kind[:40]!r}")
    req, opt = _VALUE_FIELDS[kind]
    _keys(v, req | {"k"}, opt, f"{kind} value")
    if kind == "bool":
        _bool(v["v"], "bool value")
    elif kind == "int":
        _int(v["v"], "int value")
    elif kind == "float":
        x = v["v"]
        _need(type(x) in (int, float) or x in ("nan", "inf", "-inf"), "float value: expected a number")
    elif kind == "str":
        _str(v["v"], "str value")
    elif kind in ("list", "tuple"):
        for item in _list(v["items"], f"{kind} value"):
            check_value(item, depth + 1)
    elif kind == "dict":
        for pair in _list(v["items"], "dict value"):
            _need(type(pair) is list and len(pair) == 2, "dict value: expected [key, value] pairs")
            _str(pair[0], "dict key", MAX_NAME)
            check_value(pair[1], depth + 1)
    elif kind in ("array", "scalar", "tensor"):
        _need(v["dtype"] in DTYPES, f"{kind} value: dtype not allowed")
        _str(v["b64"], f"{kind} value", 4 * MAX_ARRAY_BYTES // 3 + 8)
        if kind != "scalar":
            shape = _list(v["shape"], f"{kind} shape", 32)
            for s in shape:
                _int(s, f"{kind} shape", 0, MAX_ARRAY_BYTES)
        if kind == "tensor":
            _bool(v["rg"], "tensor requires_grad")
            for f in ("leaf", "out"):
                if f in v:
                    _int(v[f], f"tensor {f}", 0, MAX_ITEMS)
            for f in ("grad", "tangent"):
                if f in v:
                    g = v[f]
                    check_value(g, depth + 1)
                    _need(g["k"] == "tensor" and not ({"grad", "leaf", "out", "tangent"} & set(g)) and not g["rg"],
                          f"tensor {f}: expected a plain tensor")
                    _need(g["shape"] == v["shape"], f"tensor {f}: expected the tensor's shape")
    elif kind == "handle":
        _int(v["id"], "handle id", 1)
        _need(v["kind"] in HANDLE_KINDS, "handle: unknown kind")
        _str(v["name"], "handle name", MAX_NAME)
    elif kind == "ref":
        _int(v["id"], "ref id", 1)


def array_to_wire(arr: np.ndarray) -> dict:
    """dtype, shape and base64 of the raw little-endian bytes (dtype from the whitelist)."""
    name = arr.dtype.name
    if name not in DTYPES:
        raise TypeError(f"an array of dtype {arr.dtype} does not cross the bridge")
    arr = np.asarray(arr, dtype=arr.dtype.newbyteorder("<"))
    if arr.nbytes > MAX_ARRAY_BYTES:
        raise ValueError(f"an array of {arr.nbytes} bytes is over the bridge's limit ({MAX_ARRAY_BYTES})")
    data = arr.tobytes(order="C")
    return {"dtype": name, "shape": list(arr.shape), "b64": base64.b64encode(data).decode("ascii")}


def array_from_wire(v: dict, shape=None) -> np.ndarray:
    """A fresh, writable array from a checked value (the byte count must match dtype and shape)."""
    dtype = np.dtype(v["dtype"]).newbyteorder("<")
    shape = tuple(v["shape"]) if shape is None else shape
    try:
        raw = base64.b64decode(v["b64"], validate=True)
    except ValueError:
        raise ProtocolError("array: invalid base64") from None
    n = math.prod(shape)
    _need(len(raw) == n * dtype.itemsize, "array: the byte count does not match dtype and shape")
    return np.frombuffer(raw, dtype=dtype).astype(dtype.newbyteorder("="), copy=True).reshape(shape)


def float_to_wire(x: float):
    return x if math.isfinite(x) else ("nan" if math.isnan(x) else ("inf" if x > 0 else "-inf"))


def float_from_wire(x) -> float:
    return float(x)


# ------------------------------------------------------------------------------ messages
# op -> (required fields, optional fields); every request also has "op" and "id"
REQUESTS: dict[str, tuple[set, set]] = {
    "lookup": ({"name"}, set()),
    "getattr": ({"obj", "name"}, set()),
    "repr": ({"obj"}, set()),
    # vmap: the call runs under nested vmaps, outermost first: [in_dims (0 or None per argument), randomness]
    "call": ({"obj", "args", "kwargs", "graph", "grad"}, {"vmap"}),
    "vjp": ({"graph", "grads", "create_graph"}, set()),
}
ERROR_FIELDS = {"type", "builtin", "args", "frames"}


def check_request(msg: Any) -> dict:
    """The request, checked; raises ProtocolError."""
    _need(type(msg) is dict and msg.get("op") in REQUESTS, "request: unknown or missing op")
    req, opt = REQUESTS[msg["op"]]
    # release: graphs of the receiver that the sender no longer needs (it dropped their outputs);
    # free: graphs whose saved tensors a backward without retain_graph freed on the sender's side
    _keys(msg, req | {"op", "id"}, opt | {"release", "free"}, f"{msg['op']} request")
    _int(msg["id"], "request id", 1)
    for field in ("release", "free"):
        for g in _list(msg.get(field, []), field, MAX_ITEMS):
            _int(g, f"{field} graph", 1)
    if "name" in msg:
        _str(msg["name"], "name", MAX_NAME)
    if "obj" in msg:
        _int(msg["obj"], "object id", 1)
    if msg["op"] == "call":
        for a in _list(msg["args"], "call args", 256):
            check_value(a, 1)
        for pair in _list(msg["kwargs"], "call kwargs", 256):
            _need(type(pair) is list and len(pair) == 2, "call kwargs: expected [name, value] pairs")
            _str(pair[0], "keyword", MAX_NAME)
            check_value(pair[1], 1)
        _bool(msg["graph"], "call graph")
        _bool(msg["grad"], "call grad")
        for level in _list(msg.get("vmap", []), "call vmap", MAX_VMAP_LEVELS):
            _need(type(level) is list and len(level) == 2, "call vmap: expected [in_dims, randomness] per level")
            dims = _list(level[0], "call vmap in_dims", 256)
            _need(len(dims) == len(msg["args"]) and all(d is None or (type(d) is int and d == 0) for d in dims)
                  and any(d == 0 for d in dims), "call vmap: in_dims must give 0 or None for each argument")
            _need(level[1] in ("error", "different", "same"), "call vmap: unknown randomness")
    if msg["op"] == "vjp":
        _int(msg["graph"], "graph id", 1)
        for g in _list(msg["grads"], "vjp grads", 4096):
            check_value(g, 1)
        _bool(msg["create_graph"], "vjp create_graph")
    return msg


def check_reply(msg: Any, request_id: int) -> dict:
    """The reply to request ``request_id``, checked; raises ProtocolError."""
    _need(type(msg) is dict and "re" in msg, "reply: expected an object with 're'")
    # warnings: [category, message] of the warnings raised while the request was served
    for w in _list(msg.get("warnings", []), "reply warnings", MAX_WARNINGS):
        _need(type(w) is list and len(w) == 2, "reply warning: expected [category, message]")
        _str(w[0], "warning category", MAX_NAME)
        _str(w[1], "warning message", 2000)
    if "error" in msg:
        _keys(msg, {"re", "error"}, {"warnings"}, "error reply")
        err = msg["error"]
        _keys(err, ERROR_FIELDS, {"base"}, "error")  # base: the nearest builtin class of a non-builtin type
        _str(err["type"], "error type", MAX_NAME)
        if "base" in err:
            _str(err["base"], "error base", MAX_NAME)
        _bool(err["builtin"], "error builtin")
        for a in _list(err["args"], "error args", 16):
            check_value(a, 1)
        for fr in _list(err["frames"], "error frames", MAX_FRAMES):
            _need(type(fr) is list and len(fr) == 3, "error frame: expected [file, line, name]")
            _str(fr[0], "error frame file", 1000)
            _int(fr[1], "error frame line", 0, 10**6)
            _str(fr[2], "error frame name", MAX_NAME)
    else:
        _keys(msg, {"re", "value"}, {"graph", "node", "effects", "warnings"}, "reply")
        check_value(msg["value"])
        if msg.get("graph") is not None:
            _int(msg["graph"], "reply graph", 1)
        if msg.get("node") is not None:
            check_value(msg["node"])
            _need(msg["node"]["k"] == "handle", "reply node: expected a handle")
        for eff in _list(msg.get("effects", []), "reply effects", 4096):
            _keys(eff, {"i"}, {"data", "grad"}, "effect")
            _int(eff["i"], "effect index", 0, MAX_ITEMS)
            for f in ("data", "grad"):
                if f in eff:
                    check_value(eff[f], 1)
                    _need(eff[f]["k"] in ("tensor", "none"), f"effect {f}: expected a tensor or none")
    _need(type(msg["re"]) is int and msg["re"] == request_id,
          f"reply answers request {str(msg['re'])[:20]}, expected {request_id}")
    return msg


def is_request(msg: Any) -> bool:
    return type(msg) is dict and "op" in msg


# ------------------------------------------------------------------------------ framing
def dumps(obj: dict) -> bytes:
    data = json.dumps(obj, allow_nan=False, separators=(",", ":")).encode()
    if len(data) > MAX_FRAME:
        raise ValueError(f"a message of {len(data)} bytes is over the bridge's limit ({MAX_FRAME})")
    return data


def _no_constants(name: str):
    raise ProtocolError(f"JSON constant {name} is not allowed")


def loads(data: bytes) -> Any:
    try:
        return json.loads(data, parse_constant=_no_constants)
    except (ValueError, RecursionError) as e:
        raise ProtocolError(f"not JSON: {str(e)[:80]}") from None


class FrameIO:
    """Length-prefixed JSON frames over a pair of file descriptors, with a read timeout."""

    def __init__(self, read_fd: int, write_fd: int, timeout: float | None = None):
        self.read_fd, self.write_fd, self.timeout = read_fd, write_fd, timeout
        self._buf = b""

    def buffered(self) -> bool:
        """True when a frame has begun arriving (read() need not wait for select)."""
        return b"\n" in self._buf[:24]

    def write(self, obj: dict) -> None:
        data = dumps(obj)
        out = b"%d\n" % len(data) + data
        while out:
            n = os.write(self.write_fd, out)
            out = out[n:]

    def _fill(self, deadline: float | None) -> bool:
        while True:  # select first: the fd may have been made non-blocking by the student's code
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise ProtocolError(f"the peer did not answer within {self.timeout:g} s")
            if not select.select([self.read_fd], [], [], left)[0]:
                continue
            try:
                chunk = os.read(self.read_fd, 1 << 16)
            except BlockingIOError:  # someone else read it first
                continue
            break
        if not chunk:
            return False
        self._buf += chunk
        return True

    def read(self) -> Any:
        """The next message (None at end of input); raises ProtocolError on a malformed frame."""
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        while b"\n" not in self._buf[:24]:
            _need(len(self._buf) < 24, "frame: no length header")
            if not self._fill(deadline):
                _need(not self._buf, "frame: truncated header")
                return None
        head, _, rest = self._buf.partition(b"\n")
        _need(head.isdigit() and len(head) <= 10, "frame: the length header is not a number")
        n = int(head)
        _need(n <= MAX_FRAME, "frame: over the size limit")
        self._buf = rest
        while len(self._buf) < n:
            _need(self._fill(deadline), "frame: truncated message")
        data, self._buf = self._buf[:n], self._buf[n:]
        return loads(data)


# ------------------------------------------------------------------------------ transports (the peers'
# ``send``: a request out, its reply back, the other side's requests answered meanwhile)
class PipeTransport:
    """Requests and replies as frames on two file descriptors; nested requests are served while waiting.

    ``send(request) -> reply`` writes the request, then reads frames: a request from the peer (a
    callback) is answered with ``on_request``; the first reply is returned (``Peer`` checks that
    it answers this request).
    """

    def __init__(self, read_fd: int, write_fd: int, timeout: float | None = 60.0):
        self.io = FrameIO(read_fd, write_fd, timeout)
        self.on_request: Callable[[dict], dict] | None = None
        self.deadline: float | None = None  # time.monotonic() after which every send fails (a check's budget)

    def send(self, request: dict) -> dict:
        self._in_time()
        self.io.write(request)
        while True:
            msg = self.io.read()
            self._in_time()
            if msg is None:
                raise ProtocolError("the peer closed the connection")
            if not is_request(msg):
                return msg
            if self.on_request is None:
                raise ProtocolError("a request arrived, and this side serves none")
            self.io.write(self.on_request(msg))

    def _in_time(self) -> None:
        # callbacks can keep the judge busy without ever being late for one read: a total budget
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise ProtocolError("the check's time budget is spent")

    def serve_forever(self) -> None:
        """Answer requests until the peer closes its end (the worker's main loop)."""
        while True:
            msg = self.io.read()
            if msg is None:
                return
            self.io.write(self.on_request(msg))


def local_pair(judge, worker) -> None:
    """Connect two ``_bridge.Peer`` objects of this process by direct calls (tests; no framing)."""

    def via_json(handler):  # a round trip through JSON, so that the in-process link sends what a pipe would
        return lambda msg: loads(dumps(handler(json.loads(json.dumps(msg)))))

    judge.send = via_json(worker.handle)
    worker.send = via_json(judge.handle)
