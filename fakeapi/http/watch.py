"""Serving one watch over HTTP: chunked writes that keep the deadline, and stalled clients.

A watch stream is written chunk by chunk; a client that stops reading makes a write wait
(the socket and transport buffers are full). A watchdog per stream closes such a watch
once its write has waited longer than the stall bound, or past the watch's deadline
(`timeoutSeconds`), so a client that never reads neither keeps a connection nor memory.
A stalled watch ends with an ERROR event carrying 410 Expired (what upstream sends a watcher
it can no longer serve), so the client lists again and watches from there; a watch that
merely timed out ends as a timeout does. If the client still doesn't read, the connection
is dropped after a grace period.

Two kinds of time: the deadline is emulated time, on the injected clock (a virtual clock ends
a blocked watch at its emulated deadline, as the stream itself ends there), while the stall
bound, the watchdog's looks and the grace period measure a real client's socket, so they are
the event loop's real time.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from aiohttp import web

from fakeapi.machinery.clock import Clock, Timer
from fakeapi.machinery.errors import expired

MIN_GRACE = 1.0
"""Least time a closed watch's last bytes may wait for the client before the connection drops
(twice the stall bound when that is longer)."""
WATCHDOG_PERIOD = 1.0
"""Longest interval between two looks of the watchdog at a stream."""

Farewell = Callable[[dict], bytes]
"""Encodes the ERROR event (a Status object) that ends a stalled watch, as one line."""


class _Watchdog:
    """Closes one stream whose write waits longer than `stall` (real seconds) or past its
    deadline, `timeout` seconds from now on `clock`."""

    def __init__(self, request: web.Request, *, clock: Clock, timeout: float, stall: float,
                 farewell: Farewell) -> None:
        self.loop = asyncio.get_running_loop()
        self.clock = clock
        self.transport = request.transport
        self.deadline = clock.monotonic() + timeout
        self.stall = stall
        self.farewell = farewell
        self.blocked_since: float | None = None
        """The loop's time when the pending write began (None while none waits)."""
        self.closed_for = ""
        self.period = max(0.01, min(stall / 4, WATCHDOG_PERIOD))
        self._handle: asyncio.TimerHandle | None = self.loop.call_later(self.period, self._look)
        self._deadline: Timer | None = clock.call_later(timeout, self._at_deadline)

    def _look(self) -> None:
        """The periodic real-time look at a blocked write."""
        if not self._judge():
            self._handle = self.loop.call_later(self.period, self._look)

    def _at_deadline(self) -> None:
        """The deadline passed on the clock: a write still waiting ends the stream now."""
        self._deadline = None
        self._judge()

    def _judge(self) -> bool:
        """Close the stream if its write waits too long or past the deadline (True then)."""
        since = self.blocked_since
        if since is None:
            return False
        now = self.loop.time()
        if now - since > self.stall:
            self._close(f"the client read nothing for {now - since:.0f} s")
            return True
        if self.clock.monotonic() >= self.deadline:
            self._close("")
            return True
        return False

    def _close(self, why: str) -> None:
        """End the stream in the transport's buffer (the handler is stuck in a write), close
        the connection, and drop it if the client still doesn't read."""
        self.stop()
        self.closed_for = why or "timeout"
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        tail = b"0\r\n\r\n"
        if why:
            status = expired(f"watch closed: {why}; list again, then watch from the list's "
                             "resourceVersion").to_status()
            line = self.farewell(status)
            tail = f"{len(line):x}\r\n".encode() + line + b"\r\n" + tail
        transport.write(tail)
        transport.close()
        self.loop.call_later(max(MIN_GRACE, 2 * self.stall), transport.abort)

    def stop(self) -> None:
        """No more looks (the stream ended by itself, or is closed)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None


async def send(request: web.Request, response: web.StreamResponse,
               chunks: AsyncIterator[bytes], *, clock: Clock, timeout: float, stall: float,
               farewell: Farewell) -> str:
    """Write every chunk to a prepared chunked `response`, until `timeout` seconds on `clock`
    have passed; return why the watchdog closed the stream ("" when the stream ended, or the
    client went away, by itself)."""
    loop = asyncio.get_running_loop()
    dog = _Watchdog(request, clock=clock, timeout=timeout, stall=stall, farewell=farewell)
    try:
        async for chunk in chunks:
            dog.blocked_since = loop.time()
            await response.write(chunk)
            dog.blocked_since = None
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        dog.stop()
    if not dog.closed_for:
        try:
            await response.write_eof()
        except (ConnectionError, RuntimeError):
            pass
    return dog.closed_for
