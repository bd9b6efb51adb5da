"""The event log: append-only, one global strictly increasing revision, the single truth.

Every committed change is one `Event`. The revision of an event is the `resourceVersion`
of the object it carries. The object's JSON is encoded once at commit and shared by
GET/LIST responses, watch streams and the on-disk log. The in-memory log keeps a
window of recent events, bounded by count and by bytes (resuming a resource whose events
were compacted is 410 Expired; a quiet resource never expires for other resources' writes).

Durable before visible: with a data directory every event is appended to a `WriteAheadLog`,
and readers (GET, LIST, watches, informers) see it only once the WAL has synced it. The log
has two heads: `revision`, the newest appended event (what writers validate against, so
writes stay serialized), and `visible`, the newest durable one (what readers see). One fsync
covers every event appended while the previous one ran (group commit), and that batch
becomes visible at once, before any writer of it is answered. If the WAL fails (ENOSPC,
EIO), the events after `visible` are discarded as if never written, writes are refused with
503 until the file takes writes again, and reads go on. In memory mode both heads move
together and nothing waits.
"""

from __future__ import annotations

import asyncio
import bisect
import heapq
import itertools
import logging
from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any, Protocol

import orjson

from fakeapi.machinery.clock import Clock, RealClock
from fakeapi.machinery.errors import ApiError, Cause
from fakeapi.machinery.jsonio import loads
from fakeapi.machinery.watchtypes import ADDED, DELETED, MODIFIED
from fakeapi.storage.wal import WriteAheadLog
from fakeapi.storage.walformat import WalError

log = logging.getLogger(__name__)

DEFAULT_RETENTION = 100_000
DEFAULT_RETENTION_BYTES = 128 * 1024 * 1024
"""Default cap on the JSON bytes of the retained window (`--log-retention-bytes`)."""
WAKE_WINDOW = 0.002
"""Real seconds between a commit and waking its watchers (coalesces bursts, bounds latency):
a batching device on the event loop, not emulated time. On a deterministic clock watchers are
woken on the loop's next iteration instead, so real time orders nothing."""
ANY = ""
"""The resource `EventLog.wait` takes to wait for the next visible event of any resource."""
RESUME_INTERVAL = 1.0
"""Seconds on the log's clock between probes of a failed WAL (is it writable again?)."""


class Event:
    """One committed change: type, the object's identity, the full object, actor and time.

    While an event is the object's current state it holds the decoded object; once a later
    event supersedes it, only the encoded bytes stay (`supersede()`), and the decoded forms
    of it and of its predecessor (`prev`) are rebuilt on demand. That keeps the retained
    window of the log at roughly the size of its JSON. An event read from a recording
    (`from_record`) holds only the bytes until its object is first asked for: while it is
    current that decoding is kept, once superseded it is not.
    """

    __slots__ = ("revision", "type", "resource", "namespace", "name", "_object", "raw",
                 "_prev", "_prev_raw", "actor", "time", "request", "_lines", "_current")

    def __init__(self, *, revision: int, type: str, resource: str, namespace: str, name: str,
                 object: dict[str, Any] | None, raw: bytes, prev_raw: bytes | None, actor: str,
                 time: str, request: dict[str, Any] | None = None) -> None:
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
        self.request = request
        """What the recording keeps of the request behind the event (`machinery.requestinfo`;
        None in logs from before it was recorded)."""
        self._lines: dict[str, bytes] | None = None
        self._current = True

    @property
    def object(self) -> dict[str, Any]:
        """The object as committed (decoded again from `raw` once superseded; don't mutate)."""
        obj = self._object
        if obj is None:
            obj = loads(self.raw)
            if self._current:
                self._object = obj
        return obj

    def follows(self, prev_raw: bytes | None) -> None:
        """Set the encoded previous version (a replay learns it after decoding the record)."""
        self._prev_raw = prev_raw

    @property
    def prev_raw(self) -> bytes | None:
        """The encoded previous version (None when this event created it)."""
        return self._prev_raw

    @property
    def prev(self) -> dict[str, Any] | None:
        """The object's previous version (None when this event created it)."""
        if self._prev is None and self._prev_raw is not None:
            self._prev = loads(self._prev_raw)
        return self._prev

    def supersede(self) -> None:
        """A later event of the same object was committed: keep only the encoded forms."""
        self._object = None
        self._prev = None
        self._lines = None
        self._current = False

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
            if not self._current:  # superseded: a lagging watcher's read, not worth keeping
                return b'{"type":"' + t.encode() + b'","object":' + self.raw + b"}\n"
            lines = self._lines = {}
        line = lines.get(t)
        if line is None:
            line = lines[t] = b'{"type":"' + t.encode() + b'","object":' + self.raw + b"}\n"
        return line

    def record(self) -> bytes:
        """The durable form: a JSON header line, then the object's JSON."""
        h = {"r": self.revision, "t": self.type, "res": self.resource, "ns": self.namespace,
             "n": self.name, "a": self.actor, "ts": self.time}
        if self.request is not None:
            h["q"] = self.request
        head = orjson.dumps(h)
        return head + b"\n" + self.raw

    @classmethod
    def from_record(cls, data: bytes, prev_raw: bytes | None) -> Event:
        """Inverse of `record()` (ValueError, saying why, for a record it can't have made).

        Only the head is decoded; the object stays bytes until `object` is first read (its
        JSON was checked when it was committed, and the record's checksum since).
        """
        head, _, raw = data.partition(b"\n")
        try:
            event = _event(cls, _loads_head(head), raw, prev_raw)
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise ValueError(f"not an event record ({type(e).__name__}: {e})") from None
        if (type(event.revision) is not int or event.type not in _TYPES
                or raw[:1] != b"{" or raw[-1:] != b"}"):
            raise ValueError("not an event record (bad revision, type or object)")
        return event


def _event(cls: type[Event], h: dict[str, Any], raw: bytes, prev_raw: bytes | None) -> Event:
    """An event of a decoded record head and its object's bytes, its slots set directly
    (the replay's hot path); KeyError, TypeError or AttributeError for a head that is no
    event's. The caller checks the revision, type and object."""
    event = _new_event(cls)
    event.revision = h["r"]
    event.type = h["t"]
    event.resource = h["res"]
    event.namespace = h["ns"]
    event.name = h["n"]
    event.actor = h["a"]
    event.time = h["ts"]
    event.request = h.get("q")
    event.raw = raw
    event._object = event._prev = event._lines = None
    event._prev_raw = prev_raw
    event._current = True
    return event


_TYPES = frozenset((ADDED, MODIFIED, DELETED))
_loads_head = orjson.loads
_new_event = object.__new__


def replayed(payloads: Sequence[bytes], first: int) -> list[Event]:
    """The events of consecutive records holding revisions `first`, `first + 1`, ...: a
    replay's batch form of `Event.from_record` (no previous versions: the caller links
    them). ValueError when any record is not the event due, without saying which or why:
    `from_record`, one record at a time, tells that (the replay's way to report it).

    The batch form is the rebuild's hot path: the heads are split off and decoded in two
    C-level passes, then each event is made in one tight loop."""
    parts = [p.partition(b"\n") for p in payloads]
    try:
        heads = list(map(_loads_head, [head for head, _, _ in parts]))
    except orjson.JSONDecodeError:
        raise ValueError("not an event record") from None
    events: list[Event] = []
    add = events.append
    make, cls, types = _event, Event, _TYPES
    due = first
    try:
        for h, (_, _, raw) in zip(heads, parts, strict=True):
            event = make(cls, h, raw, None)
            revision = event.revision
            if (revision != due or type(revision) is not int or event.type not in types
                    or raw[0] != 123 or raw[-1] != 125):  # b"{", b"}"
                raise ValueError("not the event due")
            add(event)
            due += 1
    except (KeyError, TypeError, IndexError, AttributeError):
        raise ValueError("not an event record") from None
    return events


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


class LogListener(Protocol):
    """Who keeps a view over the log (the store): told when appended events become visible,
    and when unsynced ones are discarded after a WAL failure."""

    def published(self, events: Sequence[Event]) -> None:
        """`events` (in revision order) are durable and now visible to readers."""

    def discarded(self, events: Sequence[Event]) -> None:
        """`events` (in revision order) will never be durable: undo them."""


def unavailable(why: str) -> ApiError:
    """503 for writes while the log can't take them (upstream NewServiceUnavailable)."""
    return ApiError(503, "ServiceUnavailable",
                    f"the event log is not writable ({why}); writes are refused until it is "
                    "writable again", retry_after=1)


def write_failed(why: str) -> ApiError:
    """500 for a write the WAL could not make durable (upstream NewInternalError): it was
    not applied and no reader saw it."""
    message = f"writing the event log failed: {why}; the write was not applied"
    return ApiError(500, "InternalError", f"Internal error occurred: {message}",
                    causes=[Cause("", message, "")])


class EventLog:
    """In-memory window of the log, per-resource indexes, and waiters for new events.

    Its `clock` times the failed WAL's resume probe and hears when the log's pending wake-ups
    are done (`wake_pending` is a settling probe: see `Clock.probe_changed`).
    """

    def __init__(self, *, retention: int = DEFAULT_RETENTION,
                 retention_bytes: int = DEFAULT_RETENTION_BYTES,
                 wal: WriteAheadLog | None = None, clock: Clock | None = None) -> None:
        self.retention = retention
        self.retention_bytes = retention_bytes
        self.wal = wal
        self.clock: Clock = clock or RealClock()
        self.listener: LogListener | None = None
        self._events: list[Event] = []
        self._first = 1  # revision of _events[0]
        self.base = 0
        """The revision of a compacted log's base state (its records hold base+1 on; 0: none)."""
        self.revision = 0
        """Newest appended revision (the writers' head)."""
        self.visible = 0
        """Newest durable revision: what reads and watches see (== revision in memory mode)."""
        self.retained_bytes = 0
        """JSON bytes of the events in the window."""
        self.failure: str | None = None
        """Why the log refuses writes (an I/O error), or None while it is writable."""
        self._by_resource: dict[str, list[Event]] = {}
        self._compacted_change: dict[str, int] = {}  # newest compacted event per resource
        self._waiters: dict[str, list[asyncio.Future[object]]] = {}
        self._to_wake: dict[str, None] = {}  # resources to wake, in the order they changed
        self._wake_handle: asyncio.Handle | None = None
        self._flusher: asyncio.Task[None] | None = None
        self._resumer: asyncio.Task[None] | None = None
        self._resuming = False  # a resume probe of the failed WAL is under way
        self._durable_waiters: list[tuple[int, int, asyncio.Future[None]]] = []  # heap by rev
        self._tiebreak = itertools.count()

    @property
    def wake_pending(self) -> bool:
        """Watchers are due to be woken, appended events are still on their way to disk, or a
        resume probe of a failed WAL is under way (real-time work, not emulated time: a probe
        for `Clock.run_until_settled`; the log tells its clock when each is done)."""
        return self._wake_handle is not None or self.visible < self.revision or self._resuming

    @property
    def oldest_revision(self) -> int:
        """Oldest revision a watch or snapshot may resume from (exclusive lower bound)."""
        return self._first - 1

    @property
    def writable(self) -> bool:
        """Whether writes are accepted (False after a WAL I/O error, until it recovers)."""
        return self.failure is None

    def append(self, event: Event, *, durable: bool = True) -> None:
        """Add the next event (its revision must be `revision + 1`).

        In memory mode (or for replayed events, `durable=False`) it is visible at once and
        its watchers are woken; with a WAL it is buffered there and becomes visible when the
        group commit that covers it is synced. Raises 503 while the log refuses writes.
        """
        assert event.revision == self.revision + 1, (event.revision, self.revision)
        deferred = self.wal is not None and durable
        if deferred:
            assert self.wal is not None
            if self.failure is not None:
                raise unavailable(self.failure)
            try:  # first, so a log that refuses writes changes nothing
                seq = self.wal.append(event.record())
            except WalError as e:
                raise unavailable(str(e.__cause__ or e)) from None
            assert seq + self.base == event.revision, (seq, self.base, event.revision)
        self.revision = event.revision
        self._events.append(event)
        self._by_resource.setdefault(event.resource, []).append(event)
        self.retained_bytes += len(event.raw)
        if deferred:
            if self.clock.deterministic:
                self._flush_inline(event.revision)
            else:
                self._request_flush()
        else:
            self.visible = self.revision
            if event.resource in self._waiters or ANY in self._waiters:
                self._wake_soon(event.resource)
        if (len(self._events) > self.retention + self.retention // 4
                or self.retained_bytes > self.retention_bytes):
            self._trim()

    def extend_replayed(self, events: list[Event]) -> None:
        """Append replayed events (revisions `revision + 1` on, in order) at once, visible at
        once, as `append(event, durable=False)` of each would (the window trimmed once)."""
        if not events:
            return
        assert events[0].revision == self.revision + 1, (events[0].revision, self.revision)
        self._events.extend(events)
        by_resource = self._by_resource
        size = 0
        resource, same = "", None
        for event in events:  # a log's events come in runs of one resource: one lookup a run
            if event.resource != resource or same is None:
                resource = event.resource
                same = by_resource.get(resource)
                if same is None:
                    same = by_resource[resource] = []
            same.append(event)
            size += len(event.raw)
        self.retained_bytes += size
        self.revision = self.visible = events[-1].revision
        if self._waiters:
            touched = {e.resource for e in events}
            for resource in touched if ANY in self._waiters else touched & self._waiters.keys():
                self._wake_soon(resource)
        if (len(self._events) > self.retention + self.retention // 4
                or self.retained_bytes > self.retention_bytes):
            self._trim()

    # ----- durability ----------------------------------------------------------------------

    def _flush_inline(self, revision: int) -> None:
        """On a deterministic clock: sync now, so the event is durable and visible when
        `append` returns, as in memory mode (a sync thread's timing would order the run);
        a failed sync raises, and the event was never appended."""
        self.flush_now()
        if self.visible < revision:
            raise write_failed(self.failure or "the write-ahead log did not sync")

    def _request_flush(self) -> None:
        """Make sure a group commit will cover what was just appended."""
        if self._flusher is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (start-up, sync callers): flush here and now
            self.flush_now()
            return
        self._flusher = loop.create_task(self._flush(), name="event-log-flusher")

    async def _flush(self) -> None:
        """Sync the WAL while events wait to become visible; publish each synced batch."""
        wal = self.wal
        assert wal is not None
        try:
            while self.visible < self.revision and self.failure is None:
                target = self.revision
                try:
                    await wal.sync(target - self.base)
                except WalError as e:
                    self._publish(self.base + wal.durable_seq)  # what did reach the disk stays
                    self._fail(e)
                    return
                self._publish(self.base + wal.durable_seq)
        finally:
            self._flusher = None

    def flush_now(self) -> None:
        """Synchronously sync everything appended and publish it (no event loop needed)."""
        if self.wal is None or self.visible >= self.revision or self.failure is not None:
            return
        try:
            self.wal.flush_now()
        except WalError as e:
            self._publish(self.base + self.wal.durable_seq)
            self._fail(e)
            return
        self._publish(self.base + self.wal.durable_seq)

    def _publish(self, upto: int) -> None:
        """Make every event up to revision `upto` visible, then wake its readers and writers."""
        upto = min(upto, self.revision)
        if upto <= self.visible:
            return
        start = self.visible - self._first + 1
        events = self._events[start: upto - self._first + 1]
        self.visible = upto
        if self.listener is not None:
            self.listener.published(events)
        waiting, anyone = self._waiters, ANY in self._waiters
        woken = dict.fromkeys(e.resource for e in events if anyone or e.resource in waiting)
        if woken and self.clock.deterministic:  # woken as in memory mode
            for resource in woken:
                self._wake_soon(resource)
        elif woken:
            self._to_wake.update(woken)
            if self._wake_handle is not None:
                self._wake_handle.cancel()
            self._wake()
        waiters = self._durable_waiters
        while waiters and waiters[0][0] <= upto:
            fut = heapq.heappop(waiters)[2]
            if not fut.done():
                fut.set_result(None)
        self.clock.probe_changed()

    def _fail(self, error: WalError) -> None:
        """The WAL failed: discard every event after `visible`, refuse writes, start probing."""
        cause = error.__cause__ or error
        self.failure = f"{type(cause).__name__}: {cause}" if not isinstance(
            cause, OSError) else str(cause)
        cut = self.visible - self._first + 1
        dropped = self._events[cut:]
        del self._events[cut:]
        for event in dropped:
            self.retained_bytes -= len(event.raw)
        for resource in {e.resource for e in dropped}:
            events = self._by_resource[resource]
            del events[bisect.bisect_right(events, self.visible, key=_rev):]
        self.revision = self.visible
        log.error("event log: %d unsynced events discarded, writes refused: %s", len(dropped),
                  self.failure)
        if self.listener is not None and dropped:
            self.listener.discarded(dropped)
        error_for_writers = write_failed(self.failure)
        while self._durable_waiters:
            fut = heapq.heappop(self._durable_waiters)[2]
            if not fut.done():
                fut.set_exception(error_for_writers)
        self.clock.probe_changed()  # nothing is on its way to disk any more
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._resumer is None:
            self._resumer = loop.create_task(self._resume(), name="event-log-resume")

    async def _resume(self) -> None:
        """Probe the failed WAL every RESUME_INTERVAL on the clock until it takes writes
        again (each probe is pending work until it has answered)."""
        wal = self.wal
        assert wal is not None
        try:
            while self.failure is not None:
                await self.clock.sleep(RESUME_INTERVAL)
                self._resuming = True
                try:
                    if await wal.resume():
                        log.warning("event log: writable again at revision %d", self.revision)
                        self.failure = None
                finally:
                    self._resuming = False
                    self.clock.probe_changed()
        finally:
            self._resumer = None

    async def durable(self, revision: int | None = None) -> None:
        """Wait until `revision` (default: everything appended) is durable and visible.

        Raises a 500 Status if the WAL failed before it got there (the write was discarded).
        No-op in memory mode.
        """
        target = self.revision if revision is None else revision
        if target <= self.visible:
            return
        if self.failure is not None:
            raise write_failed(self.failure)
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._durable_waiters, (target, next(self._tiebreak), fut))
        await fut

    # ----- the window ----------------------------------------------------------------------

    def _trim(self) -> None:
        """Compact the oldest visible events until the window is within its count and byte
        bounds (with some headroom, so compaction runs once per many appends)."""
        keep_bytes = self.retention_bytes * 3 // 4
        cut = max(0, len(self._events) - self.retention)
        size = self.retained_bytes
        for e in self._events[:cut]:
            size -= len(e.raw)
        events = self._events
        while cut < len(events) and size > keep_bytes:
            size -= len(events[cut].raw)
            cut += 1
        self.compact(min(self._first - 1 + cut, self.visible))

    def start_at(self, base: int, last_changes: dict[str, int]) -> None:
        """Begin an empty log at revision `base`: the state there was loaded without its
        events (a compacted log's base), so resuming before it is 410 Expired for every
        resource. `last_changes`: the newest revision of each resource's base objects."""
        assert not self._events and self.revision == 0, "start_at() on a log with events"
        self.base = self.revision = self.visible = base
        self._first = base + 1
        self._compacted_change.update(last_changes)

    def compact(self, revision: int) -> None:
        """Drop events at or below `revision` from memory; resuming below it is 410 Expired."""
        revision = min(revision, self.visible)
        cut = revision - self._first + 1
        if cut <= 0:
            return
        dropped, self._events = self._events[:cut], self._events[cut:]
        self._first = revision + 1
        freed = 0
        for e in dropped:  # forget_prev() of each, inline: a replay trims per batch
            e._prev = e._prev_raw = None
            freed += len(e.raw)
        self.retained_bytes -= freed
        for resource, events in self._by_resource.items():
            if not events or events[0].revision > revision:
                continue
            i = bisect.bisect_right(events, revision, key=_rev)
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
        if self._compacted_change.get(resource, 0) > revision or revision < self.base:
            raise CompactedError(revision, self.oldest_revision)

    def resource_since(self, resource: str, revision: int) -> list[Event]:
        """Events of one resource after `revision`, visible or not (raises CompactedError if
        not retained)."""
        self.ensure_retained(resource, revision)
        events = self._by_resource.get(resource)
        if not events or events[-1].revision <= revision:
            return []
        i = bisect.bisect_right(events, revision, key=_rev)
        return events[i:]

    def visible_since(self, resource: str, revision: int) -> list[Event]:
        """The durable events of one resource after `revision`: what a watcher may be sent."""
        events = self.resource_since(resource, revision)
        if events and events[-1].revision > self.visible:
            events = events[:bisect.bisect_right(events, self.visible, key=_rev)]
        return events

    def last_change(self, resource: str) -> int:
        """Revision of the newest event of a resource, retained or compacted (0 if none)."""
        events = self._by_resource.get(resource)
        if events:
            return events[-1].revision
        return self._compacted_change.get(resource, 0)

    def pending(self, resource: str) -> bool:
        """Whether `resource` has appended events that are not visible yet."""
        return self.last_change(resource) > self.visible

    # ----- waiting for events --------------------------------------------------------------

    def _wake_soon(self, resource: str) -> None:
        """Wake a resource's watchers once per short window, not once per event: under a
        burst every watcher then drains many events per wake-up and writes them at once."""
        self._to_wake[resource] = None
        if self._wake_handle is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop (replay, sync callers): nobody can be waiting
                self._wake()
                return
            # the loop's own timer, not the clock's: the window batches real work, and
            # settling sees it through `wake_pending` (told when it has run)
            self._wake_handle = (loop.call_soon(self._wake) if self.clock.deterministic
                                 else loop.call_later(WAKE_WINDOW, self._wake))

    def _wake(self) -> None:
        self._wake_handle = None
        resources, self._to_wake = self._to_wake, {}
        if resources:
            resources[ANY] = None
        for resource in resources:
            for fut in self._waiters.pop(resource, ()):
                if not fut.done():
                    fut.set_result(None)
        self.clock.probe_changed()

    async def wait(self, resource: str, timeout: float | None, *, clock: Clock) -> None:
        """Wait for the next visible event of `resource` (`ANY`: of any resource), or
        `timeout` seconds on `clock`.

        A plain `await` on the future, not `asyncio.wait_for`: on Python 3.11 `wait_for`
        swallows a cancellation that arrives together with the wake-up (as at shutdown, when
        `wake_all` and `Task.cancel` land in the same loop iteration), and the watch lives on.
        """
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[object] = loop.create_future()
        self._waiters.setdefault(resource, []).append(fut)
        clock.probe_changed()  # a reader (an informer) has caught up: it may be idle now
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
        self._to_wake.update(dict.fromkeys(self._waiters))
        self._wake()

    async def close(self) -> None:
        """Publish what is pending, stop probing a failed WAL, and close it."""
        self.wake_all()
        if self._resumer is not None:
            self._resumer.cancel()
        if self.wal is None:
            return
        if self.failure is None and self.visible < self.revision:
            try:
                await self.durable()
            except ApiError:
                pass  # already reported; what was durable stays
        await self.wal.close()

    def __iter__(self) -> Iterator[Event]:
        return iter(self._events)
