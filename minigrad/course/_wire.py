"""How the grading processes talk: length-prefixed JSON messages one way, JSON lines the other.

The grader writes one message to the runner's stdin (the spec, then the student's files); the
runner writes messages to each checker. Replies are JSON lines on a private copy of stdout (file
descriptors 1 and 2 point at /dev/null, so nothing the student's code prints can look like a reply).
"""
from __future__ import annotations

import json
import os

MAX_MESSAGE = 512 * 2**20


def write_message(stream, obj, payload: bytes = b"") -> None:
    """``obj`` as JSON, framed by its length, then ``payload`` (raw bytes, length given in ``obj``)."""
    data = json.dumps(obj).encode()
    stream.write(b"%d\n" % len(data))
    stream.write(data)
    if payload:
        stream.write(payload)
    stream.flush()


def read_message(stream):
    """The next framed JSON message (None at end of input)."""
    head = stream.readline(32)
    if not head:
        return None
    n = int(head.strip())
    if not 0 <= n <= MAX_MESSAGE:
        raise ValueError("message too large")
    data = stream.read(n)
    if len(data) != n:
        raise ValueError("truncated message")
    return json.loads(data)


def private_stdout() -> int:
    """A private duplicate of stdout for replies; fds 1 and 2 then point at /dev/null."""
    fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    if not os.environ.get("MINIGRAD_COURSE_DEBUG"):  # debugging the grader: keep error messages
        os.dup2(devnull, 2)
    os.close(devnull)
    return fd


def reply(fd: int, obj) -> None:
    data = (json.dumps(obj) + "\n").encode()
    while data:
        n = os.write(fd, data)
        data = data[n:]
