"""External inputs take turns on a deterministic clock.

For a recording to replay exactly, inputs from outside (clients' writes over HTTP) and the
components' reactions must interleave the same way every run. On a deterministic (virtual)
clock each external write therefore waits until the clock's probes have settled (queues
empty, informers caught up, no timer due) and writes commit one at a time in arrival order:
a recording is "input, settle, input, settle, ...". On a real clock a turn costs nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from fakeapi.machinery.clock import Clock, SettleTimeout

log = logging.getLogger(__name__)


class InputTurns:
    """The turns of external writes: `async with turns.turn(): commit(...)`."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._lock = asyncio.Lock()
        self.taken = 0
        """Turns taken so far (settled inputs)."""

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """On a deterministic clock: wait for the writes before this one, then for the
        control plane to settle, and hold the turn while the write commits."""
        if not self.clock.deterministic:
            yield
            return
        async with self._lock:
            try:
                await self.clock.run_until_settled()
            except SettleTimeout as e:  # a probe that never idles must not stop every write
                log.warning("an input went ahead without settling: %s", e)
            self.taken += 1
            yield
