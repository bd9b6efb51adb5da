"""Events about objects, as client-go's EventRecorder writes them (core/v1 Events).

A controller records why it acted (or could not) on the object concerned; `kubectl describe`
shows them. Like upstream's event correlator, a repeat of the same event (same object, type,
reason and message) bumps the stored Event's `count` and `lastTimestamp` instead of adding a
new one. Recording never fails the caller: a refused write is logged, as upstream's
broadcaster does.
"""

from __future__ import annotations

import collections
import itertools
import logging
from typing import Any

from fakeapi.client import Client
from fakeapi.clock import Clock, rfc3339
from fakeapi.errors import ApiError

log = logging.getLogger(__name__)

Obj = dict[str, Any]
EVENTS = "events"
NORMAL = "Normal"
WARNING = "Warning"
MAX_REMEMBERED = 4096
"""Distinct events remembered for aggregation (upstream's LRU cache size)."""


def object_reference(obj: Obj, api_version: str, kind: str) -> Obj:
    """An ObjectReference (`involvedObject`) to a stored object."""
    meta = obj["metadata"]
    ref: Obj = {"apiVersion": api_version, "kind": kind, "name": meta["name"],
                "uid": meta.get("uid", "")}
    if meta.get("namespace"):
        ref["namespace"] = meta["namespace"]
    if meta.get("resourceVersion"):
        ref["resourceVersion"] = meta["resourceVersion"]
    return ref


class EventRecorder:
    """Writes Events through a component's client, as source `component`."""

    def __init__(self, *, client: Client, clock: Clock, component: str) -> None:
        self.client = client
        self.clock = clock
        self.component = component
        self._seen: collections.OrderedDict[tuple[str, ...], tuple[str, str, int]] = (
            collections.OrderedDict())
        self._seq = itertools.count()

    async def record(self, ref: Obj, type_: str, reason: str, message: str) -> None:
        """Record one event about the object `ref` (an ObjectReference) in its namespace
        (`default` for cluster-scoped objects, as upstream)."""
        namespace = ref.get("namespace") or "default"
        key = (ref.get("uid", ""), ref.get("kind", ""), ref["name"], namespace, type_, reason,
               message)
        now = rfc3339(self.clock.now())
        seen = self._seen.pop(key, None)
        try:
            if seen is not None:
                name, _, count = seen
                await self.client.patch(EVENTS, name, {"count": count + 1, "lastTimestamp": now},
                                        namespace=namespace)
                self._remember(key, name, namespace, count + 1)
                return
        except ApiError as e:
            if e.code != 404:
                log.warning("%s: event %s on %s not updated: %s", self.component, reason,
                            ref["name"], e)
                return
        # upstream names events <object>.<hex of the time>; a sequence keeps them unique
        stamp = int(self.clock.now().timestamp() * 1e9) + next(self._seq)
        event = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{ref['name']}.{stamp:x}", "namespace": namespace},
            "involvedObject": ref, "reason": reason, "message": message, "type": type_,
            "source": {"component": self.component}, "count": 1,
            "firstTimestamp": now, "lastTimestamp": now,
            "reportingComponent": self.component, "reportingInstance": "",
        }
        try:
            created = await self.client.create(EVENTS, event, namespace)
        except ApiError as e:
            log.warning("%s: event %s on %s not recorded: %s", self.component, reason,
                        ref["name"], e)
            return
        self._remember(key, created["metadata"]["name"], namespace, 1)

    def _remember(self, key: tuple[str, ...], name: str, namespace: str, count: int) -> None:
        self._seen[key] = (name, namespace, count)
        while len(self._seen) > MAX_REMEMBERED:
            self._seen.popitem(last=False)
