"""Watch streams: a cursor into the event log per watcher, lines encoded once per event.

A watcher holds no buffer of its own: it reads the log from its cursor, so a slow
client never blocks writers and never grows memory. If the log compacts away events of
the watched resource after the cursor, the watcher gets an ERROR event with a 410 Expired
Status and ends, and the client resumes with a fresh list (what client-go's reflector
does). Timeouts and periodic bookmarks run on the store's clock (emulated time).
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson

from fakeapi.errors import ApiError, expired
from fakeapi.kinds import Kind
from fakeapi.log import ADDED, DELETED, MODIFIED, CompactedError, Event
from fakeapi.store import Store

Obj = dict[str, Any]
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
MAX_BATCH = 2000
Encoder = Callable[[Event, str], bytes]


@dataclasses.dataclass(frozen=True)
class WatchSpec:
    """What one watch asks for."""

    kind: Kind
    namespace: str | None = None
    predicate: Callable[[Obj], bool] | None = None
    resource_version: str = ""
    send_initial_events: bool = False
    allow_bookmarks: bool = False
    timeout: float = 1800.0
    bookmark_interval: float = 60.0


def default_encoder(event: Event, type: str) -> bytes:
    """The JSON watch line, shared by every watcher of the event."""
    return event.watch_line(type)


def start_revision(store: Store, spec: WatchSpec) -> int:
    """Validate the starting revision (410 Expired when the kind's later events were
    compacted) and return it."""
    if spec.resource_version in ("", "0") or spec.send_initial_events:
        return store.revision
    try:
        rv = int(spec.resource_version)
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


def _bookmark(kind: Kind, revision: int, *, initial_end: bool = False) -> Notice:
    """A BOOKMARK carrying only the revision (and the initial-events-end marker)."""
    meta: Obj = {"resourceVersion": str(revision)}
    if initial_end:
        meta["annotations"] = {INITIAL_EVENTS_END: "true"}
    return "BOOKMARK", {"kind": kind.kind, "apiVersion": kind.api_version, "metadata": meta}


def _error(error: ApiError) -> Notice:
    return "ERROR", error.to_status()


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
    if spec.resource_version in ("", "0") or spec.send_initial_events:
        batch: list[Notice] = []
        for item in store.scan(resource, spec.namespace):
            assert isinstance(item, Event)
            if spec.predicate is None or spec.predicate(item.object):
                batch.append((ADDED, item))
                if len(batch) >= MAX_BATCH:
                    yield batch
                    batch = []
        if spec.send_initial_events and spec.allow_bookmarks:
            batch.append(_bookmark(spec.kind, cursor, initial_end=True))
        if batch:
            yield batch
    next_bookmark = clock.monotonic() + spec.bookmark_interval
    while True:
        try:
            events = store.log.resource_since(resource, cursor)
        except CompactedError as e:
            yield [_error(expired(str(e)))]
            return
        if events:
            events = events[:MAX_BATCH]
            seen: list[Notice] = [(t, event) for event in events
                                  if (t := translate(event, spec)) is not None]
            cursor = events[-1].revision
            if seen:
                yield seen
            continue
        now = clock.monotonic()
        if now >= deadline:
            return
        if spec.allow_bookmarks and now >= next_bookmark:
            yield [_bookmark(spec.kind, store.revision)]
            next_bookmark = now + spec.bookmark_interval
            continue
        wait_until = min(deadline, next_bookmark) if spec.allow_bookmarks else deadline
        await store.log.wait(resource, wait_until - now, clock=clock)


async def stream(store: Store, spec: WatchSpec, encode: Encoder = default_encoder
                 ) -> AsyncIterator[bytes]:
    """The watch as chunks of newline-delimited JSON events (one chunk per batch)."""
    async for batch in notices(store, spec):
        yield b"".join(
            encode(item, t) if isinstance(item, Event)
            else orjson.dumps({"type": t, "object": item}) + b"\n"
            for t, item in batch)
