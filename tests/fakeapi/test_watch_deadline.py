"""fakeapi.http.watch: a watch whose client stopped reading ends at its deadline on the
injected clock (emulated time), while the stall bound stays real time."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import cast

from aiohttp import web

from fakeapi.http.watch import send
from fakeapi.machinery.clock import VirtualClock


class Transport:
    """A connection whose client reads nothing: what the watchdog writes and whether it
    closed it; closing fails the write that waits."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.closed = False
        self.stuck: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def is_closing(self) -> bool:
        """Whether `close()` was called."""
        return self.closed

    def write(self, data: bytes) -> None:
        """Buffer `data` (the client reads none of it)."""
        self.written.append(data)

    def close(self) -> None:
        """Close the connection: the waiting write fails."""
        if not self.closed:
            self.closed = True
            self.stuck.set_exception(ConnectionResetError("closed"))

    def abort(self) -> None:
        """Drop the connection."""
        self.close()


class Request:
    """The request of the watch: only its connection."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport


class Response:
    """A chunked response whose first write waits for ever (the socket buffers are full)."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.ended = False

    async def write(self, chunk: bytes) -> None:
        """Wait until the connection closes (then fail)."""
        await self.transport.stuck

    async def write_eof(self) -> None:
        """End the chunked body."""
        self.ended = True


async def one_chunk() -> AsyncIterator[bytes]:
    """A stream of one event."""
    yield b'{"type":"ADDED"}\n'


async def test_a_blocked_watch_ends_at_its_deadline_on_the_clock() -> None:
    clock = VirtualClock()
    transport = Transport()
    response = Response(transport)
    watch = asyncio.create_task(send(
        cast(web.Request, Request(transport)), cast(web.StreamResponse, response),
        one_chunk(), clock=clock, timeout=1800, stall=600, farewell=lambda status: b"{}\n"))
    await clock.advance(1799)
    assert not watch.done() and not transport.closed
    await clock.advance(1)  # no real time has passed: the stall bound is far away
    assert await watch == "timeout"
    assert transport.closed and transport.written == [b"0\r\n\r\n"]  # a timeout's plain end
    assert not response.ended
