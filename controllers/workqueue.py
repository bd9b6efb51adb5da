"""The controllers' work loop: keys from a queue, retried until their reconcile succeeds."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import NoReturn

RETRY_SECONDS = 0.2


async def work(queue: asyncio.Queue[str], reconcile: Callable[[str], Awaitable[bool]]) -> NoReturn:
    """Reconcile each queued key, in key order, until it returns True; keys still pending are
    retried every RETRY_SECONDS. Runs until cancelled."""
    pending: set[str] = set()
    while True:
        try:
            pending.add(await asyncio.wait_for(queue.get(), RETRY_SECONDS if pending else None))
        except TimeoutError:
            pass
        for key in sorted(pending):
            if await reconcile(key):
                pending.discard(key)
