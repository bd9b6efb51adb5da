"""A rate-limited work queue with per-key backoff: client-go's workqueue, on the injected clock.

A key is queued at most once however often it is added; a key being processed is not handed
to a second worker, and if it is added meanwhile it is processed again once `done()`. Failed
keys come back after an exponential per-key delay (5 ms doubling up to 1000 s, client-go's
defaults) that `forget()` resets. Delays are timers on the injected `Clock`, so a virtual
clock drives them; the queue tells the clock when it has gone idle (`busy()` is a settling
probe). Each queue counts its adds, retries and reconciles (`/metrics` reports them per
component, with its depth).
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from fakeapi.machinery.clock import Clock, Timer
from fakeapi.machinery.errors import ApiError

K = TypeVar("K")
BASE_DELAY = 0.005
MAX_DELAY = 1000.0

log = logging.getLogger(__name__)


class Retry(Exception):
    """Raised by a reconcile to have its key looked at again: after `after` seconds, or after
    the key's backoff when None. Not an error: nothing is logged."""

    def __init__(self, after: float | None = None, reason: str = "") -> None:
        super().__init__(reason or "retry")
        self.after = after


class RateLimiter(Generic[K]):
    """Per-key exponential backoff: the n-th failure in a row waits base * 2**n (capped)."""

    def __init__(self, *, base: float = BASE_DELAY, cap: float = MAX_DELAY) -> None:
        self.base = base
        self.cap = cap
        self._failures: dict[K, int] = {}

    def when(self, key: K) -> float:
        """The delay before retrying `key`, counting one more failure."""
        n = self._failures.get(key, 0)
        self._failures[key] = n + 1
        return min(self.base * 2 ** min(n, 64), self.cap)

    def retries(self, key: K) -> int:
        """Failures in a row of `key`."""
        return self._failures.get(key, 0)

    def forget(self, key: K) -> None:
        """`key` succeeded: its next failure starts from the base delay again."""
        self._failures.pop(key, None)


class WorkQueue(Generic[K]):
    """Keys to reconcile, deduplicated, in arrival order, with delayed and rate-limited adds."""

    def __init__(self, *, clock: Clock, name: str = "",
                 limiter: RateLimiter[K] | None = None) -> None:
        self.clock = clock
        self.name = name
        self.limiter: RateLimiter[K] = limiter or RateLimiter()
        self._queue: collections.deque[K] = collections.deque()
        self._dirty: set[K] = set()
        self._processing: dict[K, None] = {}  # in the order taken (requeued in that order)
        self._timers: dict[K, tuple[float, Timer]] = {}
        self._ready = asyncio.Event()
        self.adds = 0
        """Keys queued (an add of a key already waiting is not counted, as client-go's)."""
        self.retries = 0
        """Reconciles that failed or asked to be retried (each brings its key back)."""
        self.reconciles = 0
        """Keys its workers reconciled, successfully or not."""

    def add(self, key: K) -> None:
        """Queue `key` now (a no-op when it is already waiting)."""
        waiting = self._timers.pop(key, None)
        if waiting is not None:
            waiting[1].cancel()
        if key in self._dirty:
            return
        self._dirty.add(key)
        self.adds += 1
        if key not in self._processing:
            self._queue.append(key)
            self._ready.set()

    def add_after(self, key: K, delay: float) -> None:
        """Queue `key` after `delay` seconds on the clock (an earlier pending add wins)."""
        if delay <= 0:
            self.add(key)
            return
        due = self.clock.monotonic() + delay
        pending = self._timers.get(key)
        if pending is not None:
            if pending[0] <= due:
                return
            pending[1].cancel()
        self._timers[key] = (due, self.clock.call_later(delay, lambda: self._fire(key)))

    def _fire(self, key: K) -> None:
        self._timers.pop(key, None)
        self.add(key)

    def add_rate_limited(self, key: K) -> None:
        """Queue `key` after its backoff delay (one more failure counted)."""
        self.add_after(key, self.limiter.when(key))

    def forget(self, key: K) -> None:
        """Reset the backoff of `key`."""
        self.limiter.forget(key)

    async def get(self) -> K:
        """The next key to process; it stays out of the queue until `done(key)`."""
        while not self._queue:
            self._ready.clear()
            await self._ready.wait()
        key = self._queue.popleft()
        self._dirty.discard(key)
        self._processing[key] = None
        return key

    def done(self, key: K) -> None:
        """Processing of `key` ended; requeue it if it was added meanwhile."""
        self._processing.pop(key, None)
        if key in self._dirty:
            self._queue.append(key)
            self._ready.set()
        elif not self._processing and not self._queue:
            self.clock.probe_changed()

    def requeue_processing(self) -> None:
        """Put keys whose processing was interrupted (a crashed worker) back in the queue."""
        for key in list(self._processing):
            del self._processing[key]
            self._dirty.discard(key)
            self.add(key)

    def busy(self) -> bool:
        """Whether keys are queued or being processed (delayed keys are timers, not work)."""
        return bool(self._queue) or bool(self._processing)

    def __len__(self) -> int:
        return len(self._queue)

    def waiting(self) -> int:
        """Keys waiting for a delay to pass."""
        return len(self._timers)


async def process(queue: WorkQueue[K], reconcile: Callable[[K], Awaitable[None]], *,
                  name: str) -> None:
    """One worker: take keys and reconcile them until cancelled.

    A key whose reconcile raises comes back after its backoff: `Retry` and 409 Conflict
    quietly (an optimistic-concurrency loss is normal), any other error logged with its
    traceback. A key that reconciles cleanly has its backoff reset.
    """
    while True:
        key = await queue.get()
        try:
            await reconcile(key)
        except Retry as r:
            queue.retries += 1
            if r.after is None:
                queue.add_rate_limited(key)
            else:
                queue.add_after(key, r.after)
        except ApiError as e:
            queue.retries += 1
            if e.code == 409:
                log.debug("%s: %r: conflict, retrying: %s", name, key, e)
            else:
                log.warning("%s: %r: %s (retry %d)", name, key, e, queue.limiter.retries(key))
            queue.add_rate_limited(key)
        except Exception:
            queue.retries += 1
            log.exception("%s: reconciling %r failed (retry %d)", name, key,
                          queue.limiter.retries(key))
            queue.add_rate_limited(key)
        else:
            queue.forget(key)
        finally:
            queue.reconciles += 1
            queue.done(key)
