"""The materialized view of the event log: current objects, ordered per resource.

Nothing here holds state that can't be rebuilt by replaying the log. Writes go through
`commit()`, which assigns the next global revision as the object's resourceVersion,
encodes the object once, appends the event and updates the view. Reads at an older
revision (paginated lists) are answered from the view plus the `prev` versions the
retained events carry.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import orjson
from sortedcontainers import SortedDict

from fakeapi.clock import Clock, rfc3339
from fakeapi.log import ADDED, DELETED, Event, EventLog

Obj = dict[str, Any]
GC_FREEZE_EVERY = 1000


def _key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def _range(namespace: str | None) -> tuple[str | None, str | None]:
    """SortedDict bounds of every key in one namespace ('0' sorts right after '/')."""
    if namespace is None:
        return None, None
    return f"{namespace}/", f"{namespace}0"


class Store:
    """Current state per resource (SortedDict of `ns/name` → latest Event) over an EventLog."""

    def __init__(self, *, log: EventLog, clock: Clock) -> None:
        self.log = log
        self.clock = clock
        self._view: dict[str, SortedDict] = {}
        self._commits = 0

    @property
    def revision(self) -> int:
        """The newest committed revision."""
        return self.log.revision

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
             at_revision: int | None = None) -> Iterator[Event | Obj]:
        """Objects in key order, optionally after key `after`, as they were at `at_revision`.

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
        if at_revision is None or at_revision >= self.log.last_change(resource):
            for k in table.irange(lo, hi, inclusive=(lo_incl, False)):
                yield table[k]
            return
        overrides: dict[str, Obj | None] = {}
        for e in self.log.resource_since(resource, at_revision):
            overrides.setdefault(e.key, e.prev)
        keys = set(table.irange(lo, hi, inclusive=(lo_incl, False)))
        for k in overrides:
            if (lo is None or k > lo or (lo_incl and k == lo)) and (hi is None or k < hi):
                keys.add(k)
        for k in sorted(keys):
            if k in overrides:
                old = overrides[k]
                if old is not None:
                    yield old
            else:
                yield table[k]

    def commit(self, type: str, resource: str, obj: Obj, *, actor: str) -> Event:
        """Append one event for `obj` at the next revision and update the view.

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
                      name=name, object=obj, raw=orjson.dumps(obj),
                      prev_raw=old.raw if old is not None else None, actor=actor,
                      time=rfc3339(self.clock.now()))
        self.log.append(event)
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

    def replay(self, records: list[bytes]) -> None:
        """Rebuild log and view from durable records (startup with a data directory)."""
        gc.disable()  # nothing here makes cycles; a full collection per batch would dominate
        try:
            self._replay(records)
        finally:
            gc.enable()
            gc.freeze()

    def _replay(self, records: list[bytes]) -> None:
        for data in records:
            head_resource, key = _peek(data)
            table = self._table(head_resource)
            old = table.get(key)
            event = Event.from_record(data, old.raw if old is not None else None)
            self.log.append(event, durable=False)
            self._apply(table, key, event)

    def resources(self) -> list[str]:
        """Resource ids with at least one live object."""
        return [r for r, t in self._view.items() if t]


def _peek(data: bytes) -> tuple[str, str]:
    head = orjson.loads(data.partition(b"\n")[0])
    return head["res"], _key(head["ns"], head["n"])


__all__ = ["ADDED", "DELETED", "Store", "Obj"]
