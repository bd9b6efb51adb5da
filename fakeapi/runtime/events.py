"""Events as components write them: client-go's event recorder and correlator, on the API.

A component reports what it did or failed to do about an object (`Scheduled`,
`FailedScheduling`, ...). Each report is a core/v1 Event that `kubectl describe` and
`kubectl events` show. A report identical to an earlier one (same object, type, reason,
message) bumps that Event's `count` and `lastTimestamp` instead of adding another, as
client-go's correlator does, so a retrying component doesn't flood the log.
"""

from __future__ import annotations

import collections
import datetime as dt
import logging
from typing import Any

from fakeapi.client import ApiClient
from fakeapi.machinery.clock import Clock
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.timestamps import rfc3339

Obj = dict[str, Any]
NORMAL = "Normal"
WARNING = "Warning"
EVENTS = "events"
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
REMEMBERED = 4096
"""How many distinct events the correlator remembers (client-go's LRU is 4096 too)."""

log = logging.getLogger(__name__)


def object_reference(obj: Obj, *, api_version: str = "", kind: str = "") -> Obj:
    """The involvedObject of an Event about `obj` (a wire dict)."""
    meta = obj["metadata"]
    ref: Obj = {"kind": kind or obj.get("kind", ""),
                "apiVersion": api_version or obj.get("apiVersion", ""),
                "name": meta["name"], "uid": meta.get("uid", ""),
                "resourceVersion": meta.get("resourceVersion", "")}
    if meta.get("namespace"):
        ref["namespace"] = meta["namespace"]
    return ref


class EventRecorder:
    """Writes Events as `component` (and `host`, for node agents) through its client."""

    def __init__(self, *, client: ApiClient, clock: Clock, component: str, host: str = "",
                 instance: str = "") -> None:
        self.client = client
        self.clock = clock
        self.component = component
        self.host = host
        self.instance = instance or component
        self._last_stamp = 0
        self._seen: collections.OrderedDict[tuple[str, ...], tuple[str, str, int]] = (
            collections.OrderedDict())

    async def event(self, ref: Obj, type_: str, reason: str, message: str) -> None:
        """Report one event about the object `ref` (an `object_reference`). Failures are
        logged, never raised: an event is a report, not part of the component's work."""
        key = (ref.get("uid", ""), ref.get("name", ""), ref.get("fieldPath", ""), type_, reason,
               message)
        try:
            if key not in self._seen or not await self._repeat(key):
                await self._create(key, ref, type_, reason, message)
        except ApiError as e:
            log.warning("%s: event %s about %s/%s not recorded: %s", self.component, reason,
                        ref.get("namespace", ""), ref.get("name", ""), e)

    async def _create(self, key: tuple[str, ...], ref: Obj, type_: str, reason: str,
                      message: str) -> None:
        now = self.clock.now()
        namespace = ref.get("namespace") or "default"
        source: Obj = {"component": self.component}
        if self.host:
            source["host"] = self.host
        body: Obj = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{ref['name']}.{self._stamp(now):x}",
                         "namespace": namespace},
            "involvedObject": ref, "reason": reason, "message": message, "type": type_,
            "source": source, "firstTimestamp": rfc3339(now), "lastTimestamp": rfc3339(now),
            "count": 1, "eventTime": None, "reportingComponent": self.component,
            "reportingInstance": self.instance}
        for attempt in range(8):
            try:
                created = await self.client.create(EVENTS, body, namespace, copy=False)
                break
            except ApiError as e:
                if e.code != 409 or attempt == 7:
                    raise
                body["metadata"]["name"] += "0"  # same object, same instant: a new name
        self._remember(key, (namespace, created["metadata"]["name"], 1))

    def _stamp(self, now: dt.datetime) -> int:
        """The Event name's suffix: `now` in Unix nanoseconds, as client-go names Events, but
        past the last one this recorder used (on a virtual clock many Events share an
        instant, and each must get a name of its own)."""
        ns = (now - EPOCH) // dt.timedelta(microseconds=1) * 1000
        self._last_stamp = max(ns, self._last_stamp + 1)
        return self._last_stamp

    async def _repeat(self, key: tuple[str, ...]) -> bool:
        """Count one more occurrence of a remembered event; False when it is gone."""
        namespace, name, count = self._seen[key]
        self._seen.move_to_end(key)
        try:
            await self.client.patch(EVENTS, name, {
                "count": count + 1, "lastTimestamp": rfc3339(self.clock.now())},
                namespace=namespace)
        except ApiError as e:
            if e.code != 404:
                raise
            del self._seen[key]  # deleted meanwhile (by a user): start a new one
            return False
        self._seen[key] = (namespace, name, count + 1)
        return True

    def _remember(self, key: tuple[str, ...], value: tuple[str, str, int]) -> None:
        self._seen[key] = value
        while len(self._seen) > REMEMBERED:
            self._seen.popitem(last=False)
