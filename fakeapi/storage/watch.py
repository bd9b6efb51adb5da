"""Watch streams: a cursor into the event log per watcher, lines encoded once per event.

A watcher holds no buffer of its own: it reads the log from its cursor, and only up to the
log's visible (durable) revision, so it never sees an event a crash could take back. A slow
client never blocks writers and never grows memory beyond one batch (bounded by count and
bytes). If the log compacts away events of the watched resource after the cursor, the
watcher gets an ERROR event with a 410 Expired Status and ends, and the client resumes with
a fresh list (what client-go's reflector does). Timeouts and bookmarks run on the store's
clock (emulated time): a bookmark every interval and one about 2 s before the deadline, as
upstream's cacheWatcher schedules them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import orjson

from fakeapi.machinery.errors import ApiError, expired
from fakeapi.machinery.gvk import ResourceType
from fakeapi.machinery.watchtypes import ADDED, DELETED, MODIFIED
from fakeapi.storage.log import CompactedError, Event
from fakeapi.storage.store import Store

Obj = dict[str, Any]
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
MAX_BATCH = 2000
MAX_BATCH_BYTES = 1024 * 1024
"""A batch (one chunk on the wire) ends once its objects reach this many bytes."""
PRE_TIMEOUT_BOOKMARK = 2.0
"""Seconds before a watch's deadline when its last bookmark is due (upstream: 2 s)."""
Encoder = Callable[[Event, str], bytes]


@dataclasses.dataclass(frozen=True)
class WatchSpec:
    """What one watch asks for."""

    kind: ResourceType
    namespace: str | None = None
    predicate: Callable[[Obj], bool] | None = None
    resource_version: str = ""
    send_initial_events: bool | None = None
    """True/False as the client sent it; None when it did not send it."""
    allow_bookmarks: bool = False
    timeout: float = 1800.0
    bookmark_interval: float = 60.0


def default_encoder(event: Event, type: str) -> bytes:
    """The JSON watch line, shared by every watcher of the event."""
    return event.watch_line(type)


def sends_initial_state(spec: WatchSpec) -> bool:
    """Whether the watch begins with synthetic ADDED events for the current state: asked for
    (sendInitialEvents=true), or the legacy default of an unset/"0" resourceVersion when
    sendInitialEvents is not given (same as upstream's watch cache)."""
    if spec.send_initial_events is not None:
        return spec.send_initial_events
    return spec.resource_version in ("", "0")


def start_revision(store: Store, spec: WatchSpec) -> int:
    """Validate the starting revision (400 for a malformed one, 410 Expired when the kind's
    later events were compacted) and return it."""
    if spec.resource_version in ("", "0") or spec.send_initial_events:
        return store.visible_revision
    try:
        rv = int(spec.resource_version)
        if rv < 0:
            raise ValueError
    except ValueError:
        raise ApiError(400, "BadRequest",
                       f"invalid resource version: {spec.resource_version!r}") from None
    try:
        store.log.ensure_retained(spec.kind.resource_id, rv)
    except CompactedError as e:
        raise expired(str(e)) from None
    return rv


def translate(event: Event, spec: WatchSpec) -> str | None:
    """The event type this watcher sees (selector transitions become ADDED/DELETED)."""
    if spec.namespace is not None and event.namespace != spec.namespace:
        return None
    pred = spec.predicate
    if pred is None:
        return event.type
    now = pred(event.object)
    if event.type == MODIFIED:
        before = pred(event.prev) if event.prev is not None else now
        if now and before:
            return MODIFIED
        if now:
            return ADDED
        return DELETED if before else None
    if event.type == DELETED:
        return DELETED if now or (event.prev is not None and pred(event.prev)) else None
    return ADDED if now else None


Notice = tuple[str, "Event | Obj"]
"""One watch notification: (type, the committed Event) or (BOOKMARK/ERROR, its object)."""


def _bookmark(kind: ResourceType, revision: int, *, initial_end: bool = False) -> Notice:
    """A BOOKMARK carrying only the revision (and the initial-events-end marker)."""
    meta: Obj = {"resourceVersion": str(revision)}
    if initial_end:
        meta["annotations"] = {INITIAL_EVENTS_END: "true"}
    return "BOOKMARK", {"kind": kind.kind, "apiVersion": kind.api_version, "metadata": meta}


def _error(error: ApiError) -> Notice:
    return "ERROR", error.to_status()


def _next_bookmark(now: float, deadline: float, interval: float) -> float | None:
    """When the next periodic bookmark is due: after `interval`, but no later than 2 s before
    the deadline; None when that moment is not in the future (upstream nextBookmarkTime)."""
    due = min(now + interval, deadline - PRE_TIMEOUT_BOOKMARK)
    return due if due > now else None


def _batches(items: list[tuple[str, Event]]) -> Iterator[list[Notice]]:
    """`items` cut into batches bounded by MAX_BATCH events and MAX_BATCH_BYTES."""
    batch: list[Notice] = []
    size = 0
    for t, event in items:
        batch.append((t, event))
        size += len(event.raw)
        if len(batch) >= MAX_BATCH or size >= MAX_BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


async def notices(store: Store, spec: WatchSpec) -> AsyncIterator[list[Notice]]:
    """Batches of what one watcher sees, until timeout, expiry or cancel.

    The log is read from the watcher's cursor: no per-watcher buffer, so a slow consumer
    never blocks writers; one whose unread events of its kind were compacted gets ERROR 410.
    """
    clock = store.clock
    deadline = clock.monotonic() + spec.timeout
    try:
        cursor = start_revision(store, spec)
    except ApiError as e:
        yield [_error(e)]
        return
    resource = spec.kind.resource_id
    if sends_initial_state(spec):
        # the state at the cursor, taken at once (writes may land while batches are sent)
        state = [(ADDED, item) for item in store.scan(resource, spec.namespace, visible=True)
                 if isinstance(item, Event)
                 and (spec.predicate is None or spec.predicate(item.object))]
        last: list[Notice] = []
        for batch in _batches(state):
            if last:
                yield last
            last = batch
        if spec.send_initial_events and spec.allow_bookmarks:
            last.append(_bookmark(spec.kind, cursor, initial_end=True))
        if last:
            yield last
    next_bookmark = _next_bookmark(clock.monotonic(), deadline, spec.bookmark_interval)
    while True:
        try:
            events = store.log.visible_since(resource, cursor)
        except CompactedError as e:
            yield [_error(expired(str(e)))]
            return
        if events:
            events = events[:MAX_BATCH]
            cursor = events[-1].revision
            seen = [(t, event) for event in events if (t := translate(event, spec)) is not None]
            for batch in _batches(seen):
                yield batch
            continue
        now = clock.monotonic()
        if now >= deadline:
            return
        if spec.allow_bookmarks and next_bookmark is not None and now >= next_bookmark:
            yield [_bookmark(spec.kind, store.visible_revision)]
            next_bookmark = _next_bookmark(now, deadline, spec.bookmark_interval)
            continue
        wait_until = deadline
        if spec.allow_bookmarks and next_bookmark is not None:
            wait_until = min(deadline, next_bookmark)
        await store.log.wait(resource, wait_until - now, clock=clock)


NoticeEncoder = Callable[[str, Obj], bytes]
"""Encodes a BOOKMARK or ERROR notice (type, object) as one watch line."""


def default_notice_encoder(type: str, obj: Obj) -> bytes:
    """The JSON watch line of a BOOKMARK or ERROR notice."""
    return orjson.dumps({"type": type, "object": obj}) + b"\n"


async def stream(store: Store, spec: WatchSpec, encode: Encoder = default_encoder,
                 encode_notice: NoticeEncoder = default_notice_encoder
                 ) -> AsyncIterator[bytes]:
    """The watch as chunks of newline-delimited JSON events (one chunk per batch)."""
    async for batch in notices(store, spec):
        yield b"".join(
            encode(item, t) if isinstance(item, Event) else encode_notice(t, item)
            for t, item in batch)
