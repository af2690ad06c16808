"""Never wait minutes for a kernel message that has already arrived.

Seen in the book build (ipykernel 6.31, pyzmq 27.3, jupyter_client 8.10, nbclient 0.11): a
notebook's kernel sits idle, its reply already queued on the client's socket, while nbclient
waits, until the cell timeout (300 s), when pyzmq's asyncio poller looks at the socket once more
and finds it (the FD's wake-up was missed: ZeroMQ signals edges, not levels). The build then
goes on as if nothing happened, five minutes late; a longer wait would fail it.

The async channel's ``get_msg`` is replaced by one that polls in slices of at most a second, so
a missed wake-up costs at most that. Same messages, same timeouts, same errors: only the waiting
is cut into pieces. Used as a Sphinx extension (the book build's kernels) and called by
scripts/refresh_notebooks.py.
"""
from __future__ import annotations

import time
from queue import Empty

SLICE_S = 1.0


def patch() -> None:
    """Install the sliced ``get_msg`` on jupyter_client's async channel (idempotent)."""
    from jupyter_client.channels import AsyncZMQSocketChannel

    if getattr(AsyncZMQSocketChannel.get_msg, "_sliced", False):
        return

    async def get_msg(self, timeout: float | None = None):
        assert self.socket is not None
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = SLICE_S if deadline is None else min(SLICE_S, max(0.0, deadline - time.monotonic()))
            if await self.socket.poll(int(left * 1000)):
                return await self._recv()
            if deadline is not None and time.monotonic() >= deadline:
                raise Empty

    get_msg._sliced = True
    AsyncZMQSocketChannel.get_msg = get_msg


def setup(app):
    patch()
    return {"parallel_read_safe": True, "parallel_write_safe": True}
