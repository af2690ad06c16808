"""_ext/kernel_wakeup.py: the async channel's get_msg polls in slices, with the same results.

A fake socket stands for ZeroMQ's: its first polls say "nothing" (a missed wake-up), a later one
finds the message; a socket that never has one must still raise Empty at the timeout.
"""
from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from queue import Empty

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "_ext"))
import kernel_wakeup  # noqa: E402

pytest.importorskip("jupyter_client")
from jupyter_client.channels import AsyncZMQSocketChannel  # noqa: E402


class FakeSocket:
    def __init__(self, ready_after: int | None):
        self.polls: list = []
        self.ready_after = ready_after

    async def poll(self, timeout_ms):
        self.polls.append(timeout_ms)
        await asyncio.sleep(timeout_ms / 1000 if self.ready_after is None else 0)
        return self.ready_after is not None and len(self.polls) > self.ready_after


class Channel:
    def __init__(self, socket):
        self.socket = socket

    async def _recv(self):
        return {"msg_type": "execute_reply"}


@pytest.fixture(autouse=True)
def sliced():
    kernel_wakeup.patch()
    kernel_wakeup.patch()  # idempotent
    yield


def test_a_message_missed_by_the_first_polls_is_read_by_a_later_slice():
    sock = FakeSocket(ready_after=2)
    msg = asyncio.run(AsyncZMQSocketChannel.get_msg(Channel(sock), timeout=300))
    assert msg == {"msg_type": "execute_reply"}
    assert len(sock.polls) == 3 and max(sock.polls) <= 1000, sock.polls


def test_no_message_still_raises_empty_at_the_timeout():
    sock = FakeSocket(ready_after=None)
    t0 = time.monotonic()
    with pytest.raises(Empty):
        asyncio.run(AsyncZMQSocketChannel.get_msg(Channel(sock), timeout=0.3))
    assert 0.25 <= time.monotonic() - t0 < 5
    assert all(p <= 1000 for p in sock.polls)


def test_the_book_build_loads_it():
    config = (Path(__file__).resolve().parent.parent / "_config.yml").read_text()
    assert "kernel_wakeup: _ext/" in config
