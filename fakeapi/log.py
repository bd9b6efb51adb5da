"""The event log: append-only, one global strictly increasing revision, the single truth.

Every committed change is one `Event`. The revision of an event is the `resourceVersion`
of the object it carries. The object's JSON is encoded once at commit and shared by
GET/LIST responses, watch streams and the on-disk log. The in-memory log keeps a
window of recent events (resuming a resource whose events were compacted is 410 Expired;
a quiet resource never expires for other resources' writes); with a data directory
every event is also appended to a `WriteAheadLog` file and replay rebuilds the state.
"""

from __future__ import annotations

import asyncio
import bisect
from collections.abc import Iterator
from functools import partial
from typing import Any

import orjson

from fakeapi.clock import Clock

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"

DEFAULT_RETENTION = 100_000
WAKE_WINDOW = 0.002
"""Seconds between a commit and waking its watchers (coalesces bursts, bounds latency)."""


class Event:
    """One committed change: type, the object's identity, the full object, actor and time.

    While an event is the object's current state it holds the decoded object; once a later
    event supersedes it, only the encoded bytes stay (`supersede()`), and the decoded forms
    of it and of its predecessor (`prev`) are rebuilt on demand. That keeps the retained
    window of the log at roughly the size of its JSON.
    """

    __slots__ = ("revision", "type", "resource", "namespace", "name", "_object", "raw",
                 "_prev", "_prev_raw", "actor", "time", "_lines")

    def __init__(self, *, revision: int, type: str, resource: str, namespace: str, name: str,
                 object: dict[str, Any] | None, raw: bytes, prev_raw: bytes | None, actor: str,
                 time: str) -> None:
        self.revision = revision
        self.type = type
        self.resource = resource
        self.namespace = namespace
        self.name = name
        self._object = object
        self.raw = raw
        self._prev: dict[str, Any] | None = None
        self._prev_raw = prev_raw
        self.actor = actor
        self.time = time
        self._lines: dict[str, bytes] | None = None

    @property
    def object(self) -> dict[str, Any]:
        """The object as committed (decoded again from `raw` once superseded; don't mutate)."""
        obj = self._object
        return obj if obj is not None else orjson.loads(self.raw)

    @property
    def prev(self) -> dict[str, Any] | None:
        """The object's previous version (None when this event created it)."""
        if self._prev is None and self._prev_raw is not None:
            self._prev = orjson.loads(self._prev_raw)
        return self._prev

    def supersede(self) -> None:
        """A later event of the same object was committed: keep only the encoded forms."""
        self._object = None
        self._prev = None
        self._lines = None

    def forget_prev(self) -> None:
        """Compacted out of the window: snapshots before it are Expired, old versions may go."""
        self._prev = None
        self._prev_raw = None

    @property
    def key(self) -> str:
        """`namespace/name` (namespace empty for cluster-scoped objects)."""
        return f"{self.namespace}/{self.name}"

    def watch_line(self, type: str | None = None) -> bytes:
        """The watch stream line for this event, encoded once and shared by every watcher."""
        t = type or self.type
        lines = self._lines
        if lines is None:
            lines = self._lines = {}
        line = lines.get(t)
        if line is None:
            line = lines[t] = b'{"type":"' + t.encode() + b'","object":' + self.raw + b"}\n"
        return line

    def record(self) -> bytes:
        """The durable form: a JSON header line, then the object's JSON."""
        head = orjson.dumps({"r": self.revision, "t": self.type, "res": self.resource,
                             "ns": self.namespace, "n": self.name, "a": self.actor,
                             "ts": self.time})
        return head + b"\n" + self.raw

    @classmethod
    def from_record(cls, data: bytes, prev_raw: bytes | None) -> Event:
        """Inverse of `record()`."""
        head, _, raw = data.partition(b"\n")
        h = orjson.loads(head)
        return cls(revision=h["r"], type=h["t"], resource=h["res"], namespace=h["ns"],
                   name=h["n"], object=orjson.loads(raw), raw=raw, prev_raw=prev_raw,
                   actor=h["a"], time=h["ts"])


def _rev(e: Event) -> int:
    return e.revision


_TIMED_OUT = object()


def _expire(fut: asyncio.Future[object]) -> None:
    if not fut.done():
        fut.set_result(_TIMED_OUT)


class CompactedError(Exception):
    """Events after a requested revision are no longer retained (upstream: 410 Expired)."""

    def __init__(self, requested: int, oldest: int) -> None:
        super().__init__(f"too old resource version: {requested} ({oldest})")
        self.requested = requested
        self.oldest = oldest


class EventLog:
    """In-memory window of the log, per-resource indexes, and waiters for new events."""

    def __init__(self, *, retention: int = DEFAULT_RETENTION, wal: Any = None) -> None:
        self.retention = retention
        self.wal = wal
        self._events: list[Event] = []
        self._first = 1  # revision of _events[0]
        self.revision = 0
        self._by_resource: dict[str, list[Event]] = {}
        self._compacted_change: dict[str, int] = {}  # newest compacted event per resource
        self._waiters: dict[str, list[asyncio.Future[object]]] = {}
        self._to_wake: set[str] = set()
        self._wake_handle: asyncio.TimerHandle | None = None
        self._wal_seq = 0

    @property
    def wake_pending(self) -> bool:
        """Watchers are due to be woken (a real-time window, not emulated time: a probe for
        `Clock.run_until_settled`)."""
        return self._wake_handle is not None

    @property
    def oldest_revision(self) -> int:
        """Oldest revision a watch or snapshot may resume from (exclusive lower bound)."""
        return self._first - 1

    def append(self, event: Event, *, durable: bool = True) -> None:
        """Add the next event (its revision must be `revision + 1`) and wake its watchers."""
        assert event.revision == self.revision + 1, (event.revision, self.revision)
        if self.wal is not None and durable:
            # first, so a log that refuses writes (after an I/O error) changes nothing
            self._wal_seq = self.wal.append(event.record())
        self.revision = event.revision
        self._events.append(event)
        self._by_resource.setdefault(event.resource, []).append(event)
        if event.resource in self._waiters:
            self._wake_soon(event.resource)
        if len(self._events) > self.retention + self.retention // 4:
            self.compact(self.revision - self.retention)

    def _wake_soon(self, resource: str) -> None:
        """Wake a resource's watchers once per short window, not once per event: under a
        burst every watcher then drains many events per wake-up and writes them at once."""
        self._to_wake.add(resource)
        if self._wake_handle is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop (replay, sync callers): nobody can be waiting
                self._wake()
                return
            self._wake_handle = loop.call_later(WAKE_WINDOW, self._wake)

    def _wake(self) -> None:
        self._wake_handle = None
        resources, self._to_wake = self._to_wake, set()
        for resource in resources:
            for fut in self._waiters.pop(resource, ()):
                if not fut.done():
                    fut.set_result(None)

    async def durable(self) -> None:
        """Wait until every appended event is on disk (no-op in memory mode)."""
        if self.wal is not None and self._wal_seq:
            await self.wal.sync(self._wal_seq)

    def compact(self, revision: int) -> None:
        """Drop events at or below `revision` from memory; resuming below it is 410 Expired."""
        cut = revision - self._first + 1
        if cut <= 0:
            return
        dropped, self._events = self._events[:cut], self._events[cut:]
        self._first = revision + 1
        for e in dropped:
            e.forget_prev()
        for resource, events in self._by_resource.items():
            i = bisect.bisect_right(events, revision, key=_rev)
            if i:
                self._compacted_change[resource] = events[i - 1].revision
                del events[:i]

    def since(self, revision: int) -> list[Event]:
        """All events after `revision` (raises CompactedError if that is not retained)."""
        if revision < self.oldest_revision:
            raise CompactedError(revision, self.oldest_revision)
        return self._events[revision - self._first + 1:]

    def ensure_retained(self, resource: str, revision: int) -> None:
        """Raise CompactedError if an event of `resource` after `revision` was compacted.

        Only the resource's own events count: a watcher or a paginated list of a quiet kind
        missed nothing when other kinds' writes filled the window, so it is not expired.
        """
        if self._compacted_change.get(resource, 0) > revision:
            raise CompactedError(revision, self.oldest_revision)

    def resource_since(self, resource: str, revision: int) -> list[Event]:
        """Events of one resource after `revision` (raises CompactedError if not retained)."""
        self.ensure_retained(resource, revision)
        events = self._by_resource.get(resource)
        if not events or events[-1].revision <= revision:
            return []
        i = bisect.bisect_right(events, revision, key=_rev)
        return events[i:]

    def last_change(self, resource: str) -> int:
        """Revision of the newest event of a resource, retained or compacted (0 if none)."""
        events = self._by_resource.get(resource)
        if events:
            return events[-1].revision
        return self._compacted_change.get(resource, 0)

    async def wait(self, resource: str, timeout: float | None, *, clock: Clock) -> None:
        """Wait for the next event of `resource` (or `timeout` seconds on `clock`).

        A plain `await` on the future, not `asyncio.wait_for`: on Python 3.11 `wait_for`
        swallows a cancellation that arrives together with the wake-up (as at shutdown, when
        `wake_all` and `Task.cancel` land in the same loop iteration), and the watch lives on.
        """
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[object] = loop.create_future()
        self._waiters.setdefault(resource, []).append(fut)
        timer = clock.call_later(timeout, partial(_expire, fut)) if timeout is not None else None
        try:
            await fut
        finally:
            if timer is not None:
                timer.cancel()
            if fut.cancelled() or fut.result() is _TIMED_OUT:  # still listed: unlist it
                waiters = self._waiters.get(resource)
                if waiters and fut in waiters:
                    waiters.remove(fut)

    def wake_all(self) -> None:
        """Wake every waiter now (used at shutdown so watch streams end promptly)."""
        if self._wake_handle is not None:
            self._wake_handle.cancel()
        self._to_wake.update(self._waiters)
        self._wake()

    def __iter__(self) -> Iterator[Event]:
        return iter(self._events)
