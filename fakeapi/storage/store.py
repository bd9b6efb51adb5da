"""The materialized view of the event log: current objects, ordered per resource.

Nothing here holds state that can't be rebuilt by replaying the log. Writes go through
`commit()`, which assigns the next global revision as the object's resourceVersion,
encodes the object once, appends the event and updates the view. Reads at an older
revision (paginated lists) are answered from the view plus the `prev` versions the
retained events carry.

The view is the writers' view: it includes appended events that are not durable yet, so
that writes validate against every write ordered before them. Readers use `read()` and
`scan(visible=True)`, which answer at the log's visible (durable) revision: for each object
changed since, the version that was visible before is kept aside (`_bases`) until its
changes are published, and restored if the log discards them after a WAL failure.
"""

from __future__ import annotations

import gc
import heapq
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from sortedcontainers import SortedDict

from fakeapi.machinery.clock import Clock
from fakeapi.machinery.jsonio import dumps, may_have_run, note_stored
from fakeapi.machinery.timestamps import rfc3339
from fakeapi.machinery.watchtypes import ADDED, DELETED
from fakeapi.storage.log import Event, EventLog, replayed

Obj = dict[str, Any]
GC_FREEZE_EVERY = 1000
REPLAY_BATCH = 4096
"""Records a replay decodes and applies at once (the log trims its window once a batch)."""


def _key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def _range(namespace: str | None) -> tuple[str | None, str | None]:
    """SortedDict bounds of every key in one namespace ('0' sorts right after '/')."""
    if namespace is None:
        return None, None
    return f"{namespace}/", f"{namespace}0"


class _Base:
    """The visible version of one key while it has changes that are not durable yet."""

    __slots__ = ("event", "last")

    def __init__(self, event: Event | None, last: int) -> None:
        self.event = event  # None: the key did not exist (or was deleted) as far as readers know
        self.last = last  # revision of the key's newest pending change


class Store:
    """Current state per resource (SortedDict of `ns/name` → latest Event) over an EventLog."""

    def __init__(self, *, log: EventLog, clock: Clock) -> None:
        self.log = log
        self.clock = clock
        self._view: dict[str, SortedDict] = {}
        self._bases: dict[str, dict[str, _Base]] = {}  # resource → key → visible version
        self._commits = 0
        log.listener = self

    @property
    def revision(self) -> int:
        """The newest committed revision (the writers' head, durable or not)."""
        return self.log.revision

    @property
    def visible_revision(self) -> int:
        """The newest durable revision: what readers see."""
        return self.log.visible

    def read(self, resource: str, namespace: str, name: str) -> Event | None:
        """The latest durable event of a live object (what a GET answers), or None."""
        key = _key(namespace, name)
        bases = self._bases.get(resource)
        if bases:
            base = bases.get(key)
            if base is not None:
                return base.event
        table = self._view.get(resource)
        return table.get(key) if table is not None else None

    # ----- the log's listener ------------------------------------------------------------

    def published(self, events: Sequence[Event]) -> None:
        """Events became visible: forget the kept-aside versions they supersede."""
        all_bases = self._bases
        if not all_bases:
            return
        for e in events:
            bases = all_bases.get(e.resource)
            if not bases:
                continue
            base = bases.get(e.key)
            if base is None:
                continue
            if base.last <= e.revision:
                del bases[e.key]
                if not bases:
                    del all_bases[e.resource]
            else:
                base.event = None if e.type == DELETED else e

    def discarded(self, events: Sequence[Event]) -> None:
        """Events will never be durable (WAL failure): put every touched key back as readers
        saw it."""
        touched = {e.resource for e in events}
        for resource in touched:
            bases = self._bases.pop(resource, {})
            table = self._table(resource)
            for key, base in bases.items():
                if base.event is None:
                    table.pop(key, None)
                else:
                    table[key] = base.event

    def _table(self, resource: str) -> SortedDict:
        table = self._view.get(resource)
        if table is None:
            table = self._view[resource] = SortedDict()
        return table

    def get(self, resource: str, namespace: str, name: str) -> Event | None:
        """The latest event (object + its encoding) of a live object, or None."""
        table = self._view.get(resource)
        return table.get(_key(namespace, name)) if table is not None else None

    def count(self, resource: str, namespace: str | None = None) -> int:
        """Number of live objects of a resource (optionally in one namespace)."""
        table = self._view.get(resource)
        if table is None:
            return 0
        if namespace is None:
            return len(table)
        lo, hi = _range(namespace)
        return sum(1 for _ in table.irange(lo, hi, inclusive=(True, False)))

    def scan(self, resource: str, namespace: str | None = None, *, after: str | None = None,
             at_revision: int | None = None, visible: bool = False) -> Iterator[Event | Obj]:
        """Objects in key order, optionally after key `after`, as they were at `at_revision`
        (or, with `visible`, at the durable revision readers see).

        At the current revision this yields Events (which carry the encoded object); at an
        older revision it yields Events for unchanged keys and plain dicts for old versions.
        Raises CompactedError when changes of `resource` after `at_revision` were compacted.
        """
        table = self._view.get(resource) or SortedDict()
        lo, hi = _range(namespace)
        if after is not None and (lo is None or after >= lo):
            lo, lo_incl = after, False
        else:
            lo_incl = True
        overrides: dict[str, Event | Obj | None]
        if at_revision is not None and at_revision < self.log.last_change(resource):
            overrides = {}
            for e in self.log.resource_since(resource, at_revision):
                overrides.setdefault(e.key, e.prev)
        elif visible and self._bases.get(resource):
            overrides = {k: b.event for k, b in self._bases[resource].items()}
        else:
            for k in table.irange(lo, hi, inclusive=(lo_incl, False)):
                yield table[k]
            return
        wanted = sorted(k for k in overrides
                        if (lo is None or k > lo or (lo_incl and k == lo))
                        and (hi is None or k < hi))
        last = None
        for k in heapq.merge(table.irange(lo, hi, inclusive=(lo_incl, False)), wanted):
            if k == last:  # a key in both streams comes twice, side by side
                continue
            last = k
            if k in overrides:
                old = overrides[k]
                if old is not None:
                    yield old
            else:
                yield table[k]

    def commit(self, type: str, resource: str, obj: Obj, *, actor: str,
               request: dict[str, Any] | None = None) -> Event:
        """Append one event for `obj` at the next revision and update the view (`request`:
        what the recording keeps of the request behind it, see `machinery.requestinfo`).

        `obj` becomes owned by the store: its metadata.resourceVersion is set here and it
        must not be mutated afterwards.
        """
        meta = obj["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        revision = self.log.revision + 1
        meta["resourceVersion"] = str(revision)
        table = self._table(resource)
        key = _key(namespace, name)
        old = table.get(key)
        event = Event(revision=revision, type=type, resource=resource, namespace=namespace,
                      name=name, object=obj, raw=dumps(obj),
                      prev_raw=old.raw if old is not None else None, actor=actor,
                      time=rfc3339(self.clock.now()), request=request)
        self.log.append(event)
        note_stored(event.raw)
        if self.log.visible < revision:  # not durable yet: keep what readers still see
            bases = self._bases.setdefault(resource, {})
            base = bases.get(key)
            if base is None:
                bases[key] = _Base(old, revision)
            else:
                base.last = revision
        self._apply(table, key, event)
        return event

    def _apply(self, table: SortedDict, key: str, event: Event) -> None:
        old = table.pop(key, None) if event.type == DELETED else table.get(key)
        if event.type != DELETED:
            table[key] = event
        if old is not None:
            old.supersede()
        self._commits += 1
        if self._commits % GC_FREEZE_EVERY == 0:
            # The view is many long-lived JSON dicts without cycles: keep them out of the
            # cyclic collector's full scans (those pauses grow with the store: ~0.2 s at 20k
            # claims). Acyclic garbage is still freed by reference counting.
            gc.freeze()

    def replay(self, records: Iterable[bytes]) -> None:
        """Rebuild log and view from durable records (startup with a data directory)."""
        gc.disable()  # nothing here makes cycles; a full collection per batch would dominate
        try:
            self._replay(records)
        finally:
            gc.enable()
            gc.freeze()

    def load_base(self, base: int, records: Iterable[bytes]) -> None:
        """Load a compacted log's base: the objects alive at revision `base`, one event
        record each (their own revisions, ascending, none above `base`), without their
        history; the log then starts at `base` (see `EventLog.start_at`)."""
        last: dict[str, int] = {}
        previous = 0
        for i, data in enumerate(records, 1):
            try:
                event = Event.from_record(data, None)
            except ValueError as e:
                raise ReplayError(i, f"base record: {e}") from None
            if not previous < event.revision <= base or event.type == DELETED:
                raise ReplayError(i, f"base record of revision {event.revision} in the base "
                                  f"at {base} after revision {previous}")
            previous = event.revision
            self._table(event.resource)[_key(event.namespace, event.name)] = event
            last[event.resource] = event.revision
        self.log.start_at(base, last)

    def _replay(self, records: Iterable[bytes]) -> None:
        """The replay's loop: the records in batches of REPLAY_BATCH, each decoded at once
        (`log.replayed`: heads only, objects stay bytes), applied to the view and appended to
        the log (which trims its window per batch, so a long log's memory stays bounded). A
        batch with a bad record is replayed again record by record, which keeps the good
        ones before it and reports it."""
        payloads = records if isinstance(records, list) else list(records)
        for start in range(0, len(payloads), REPLAY_BATCH):
            chunk = payloads[start:start + REPLAY_BATCH]
            try:
                events = replayed(chunk, self.log.revision + 1)
            except ValueError:
                self._replay_each(chunk, start)
                continue
            if may_have_run(chunk):  # rare: then look at the objects themselves
                for event in events:
                    note_stored(event.raw)
            self._apply_replayed(events)
            self.log.extend_replayed(events)
            self._commits += len(events)

    def _apply_replayed(self, events: list[Event]) -> None:
        """Put replayed events into the view. A key the view has is replaced in place; new
        keys are gathered in plain dicts and added to each resource's SortedDict once, at
        the end (its sorted key list is then built in one go, not key by key)."""
        tables = self._view
        fresh_keys: dict[str, dict[str, Event]] = {}
        replace: Any = dict.__setitem__  # an existing key keeps its sorted place
        resource, table = "", None
        for event in events:
            if event.resource != resource or table is None:  # one lookup a run of a resource
                resource = event.resource
                table = tables.get(resource)
                if table is None:
                    table = self._table(resource)
            key = f"{event.namespace}/{event.name}"
            if event.type != DELETED:
                old = table.get(key)
                if old is not None:
                    replace(table, key, event)
                else:
                    fresh = fresh_keys.get(resource)
                    if fresh is None:
                        fresh = fresh_keys[resource] = {}
                    old = fresh.get(key)
                    fresh[key] = event
            else:
                fresh = fresh_keys.get(resource)
                old = fresh.pop(key, None) if fresh else None
                if old is None:
                    old = table.pop(key, None)
            if old is not None:
                event.follows(old.raw)
                old.supersede()
        for resource, fresh in fresh_keys.items():
            if fresh:
                tables[resource].update(fresh)

    def _replay_each(self, records: list[bytes], before: int) -> None:
        """Replay `records` one at a time (ReplayError at the first that is not the event
        due, numbered after `before` records; the good ones before it stay)."""
        from_record = Event.from_record
        batch: list[Event] = []
        due = self.log.revision + 1
        try:
            for i, data in enumerate(records, before + 1):
                try:
                    event = from_record(data, None)
                except ValueError as e:
                    raise ReplayError(i, str(e)) from None
                if event.revision != due:
                    raise ReplayError(i, f"it holds revision {event.revision} where {due} "
                                      "was due")
                due += 1
                table = self._table(event.resource)
                key = event.key
                if event.type == DELETED:
                    old = table.pop(key, None)
                else:
                    old = table.get(key)
                    table[key] = event
                if old is not None:
                    event.follows(old.raw)
                    old.supersede()
                note_stored(event.raw)
                batch.append(event)
        finally:
            self.log.extend_replayed(batch)  # what was good before a bad record stays
            self._commits += len(batch)

    def resources(self) -> list[str]:
        """Resource ids with at least one live object."""
        return [r for r, t in self._view.items() if t]


class ReplayError(Exception):
    """A durable record that is intact on disk but is not the event the log expects next."""

    def __init__(self, record: int, why: str) -> None:
        super().__init__(f"record {record}: {why}")
        self.record = record
        self.why = why


__all__ = ["ADDED", "DELETED", "Obj", "ReplayError", "Store"]
