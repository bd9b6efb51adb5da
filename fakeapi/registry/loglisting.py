"""What `fakeapi log show` and the server's `/debug/fakeapi/log` list: the events of a
recording that pass a filter, each as one entry (a dict: revision, type, time, actor, request,
resource, namespace, name, and the object or the field-level diff when asked), and the table
row of an entry.

Filters look only at an event's head (its revision, resource, namespace, name, actor and
time), so an event that is not listed is never decoded; `--kind` accepts what kubectl does
(resource id, plural, singular, kind name, short name, any case).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from fakeapi.machinery import fielddiff
from fakeapi.machinery.jsonio import loads
from fakeapi.machinery.timestamps import parse_time
from fakeapi.machinery.watchtypes import ADDED, DELETED
from fakeapi.storage.log import Event

if TYPE_CHECKING:  # the kind table is built only when --kind asks for it (log show's start)
    from fakeapi.registry.kinds import KindTable

Entry = dict[str, Any]
COLUMNS = ("REVISION", "TIME", "ACTOR", "VERB", "KIND", "NAMESPACE/NAME")
NOISE = ("metadata.resourceVersion", "metadata.managedFields")
"""Paths a diff leaves out unless every change is asked for (they change on every write)."""


class ListingError(ValueError):
    """A filter that can't be applied as given (the message says why)."""


Bound = int | dt.datetime
"""A revision or a clock time."""


def parse_bound(text: str, flag: str) -> Bound:
    """`--since`/`--until`: a revision (a whole number) or an RFC 3339 time."""
    if text.isdigit():
        return int(text)
    try:
        return parse_time(text)
    except ValueError:
        raise ListingError(f"invalid {flag} {text!r}: a revision (a whole number) or an "
                           "RFC 3339 time such as 2026-01-01T00:05:00Z") from None


def kind_names(kinds: KindTable, text: str) -> frozenset[str]:
    """The resource ids `text` names (resource id, plural, singular, kind, short name, or
    `plural.group`, case-insensitively); a name no served kind has is taken as a resource id
    or its plural (a custom resource the log holds)."""
    wanted = text.lower()
    found = {k.resource_id for k in kinds.kinds
             if wanted in {k.resource_id.lower(), k.plural, k.kind.lower(),
                           *(s.lower() for s in k.short_names)}}
    return frozenset(found or {wanted})


@dataclasses.dataclass(frozen=True, kw_only=True)
class Filter:
    """Which events to list (None: any)."""

    resources: frozenset[str] | None = None
    namespace: str | None = None
    name: str | None = None
    actor: str | None = None
    since: Bound | None = None
    until: Bound | None = None

    def first_revision(self) -> int:
        """The first revision worth reading (1 unless --since is a revision)."""
        return self.since if isinstance(self.since, int) and self.since > 0 else 1

    def past_end(self, event: Event) -> bool:
        """Whether `event` and every later one lie after --until."""
        until = self.until
        if until is None:
            return False
        if isinstance(until, int):
            return event.revision > until
        return parse_time(event.time) > until

    def wants(self, event: Event) -> bool:
        """Whether `event` is listed (--until aside)."""
        if self.resources is not None and not _resource_in(event.resource, self.resources):
            return False
        if self.namespace is not None and event.namespace != self.namespace:
            return False
        if self.name is not None and event.name != self.name:
            return False
        if self.actor is not None and event.actor != self.actor:
            return False
        since = self.since
        if since is None:
            return True
        if isinstance(since, int):
            return event.revision >= since
        return parse_time(event.time) >= since


def _resource_in(resource: str, wanted: frozenset[str]) -> bool:
    return resource in wanted or resource.split(".", 1)[0] in wanted


def check_bounds(filter: Filter, last: int) -> None:
    """ListingError unless the revisions --since and --until name are in the log (1..last)."""
    for flag, bound in (("--since", filter.since), ("--until", filter.until)):
        if isinstance(bound, int) and not 1 <= bound <= last:
            where = ("the log holds no events yet" if last == 0 else
                     f"its revisions run from 1 to {last}")
            beyond = "beyond the end of the log" if bound > last else "not in the log"
            raise ListingError(f"{flag} {bound}: revision {bound} is {beyond}: {where}")


def verb(event: Event) -> str:
    """What was asked (`create`, `patch/status`, ...) from the event's request head (the
    event type where the log predates it)."""
    q = event.request
    if not q:
        return event.type.lower()
    v = q.get("v") or "-"
    sub = q.get("sub")
    return f"{v}/{sub}" if sub else v


def diff(event: Event, prev: dict[str, Any] | None, *, everything: bool = False) -> list[str]:
    """The event's change against the object's previous version, one line per leaf
    ("created" for an ADDED event, "deleted" for a DELETED one)."""
    if event.type == ADDED:
        return ["created"]
    if event.type == DELETED:
        return ["deleted"]
    if prev is None:
        return ["(the previous version is not in the listing)"]
    skip = () if everything else NOISE
    return [c.line() for c in fielddiff.changes(prev, event.object)
            if not c.path.startswith(skip)]


def entry(event: Event, *, with_object: bool, diff_lines: list[str] | None = None) -> Entry:
    """One listed event (the object only when asked: it is the one field that is decoded)."""
    out: Entry = {"revision": event.revision, "type": event.type, "time": event.time,
                  "actor": event.actor, "request": event.request, "resource": event.resource,
                  "namespace": event.namespace, "name": event.name, "verb": verb(event)}
    if with_object:
        out["object"] = event.object
    if diff_lines is not None:
        out["diff"] = diff_lines
    return out


def row(e: Entry) -> tuple[str, ...]:
    """An entry's table row (COLUMNS)."""
    where = f"{e['namespace']}/{e['name']}" if e["namespace"] else e["name"]
    return (str(e["revision"]), e["time"], e["actor"], e["verb"], e["resource"], where)


def select(events: Iterable[Event], filter: Filter, *, with_object: bool, with_diff: bool,
           everything: bool = False, seen: Callable[[Event], None] | None = None,
           known: Iterable[Event] = ()) -> Iterator[Entry]:
    """The entries of the events `filter` lists, in order, until --until. With `with_diff`
    every event's object is remembered (its encoding) so the next version can be diffed,
    starting from the `known` versions (a compacted log's base); `seen` is told of every
    event read (a progress bar)."""
    previous: dict[tuple[str, str], bytes] = {(e.resource, e.key): e.raw for e in known}
    for event in events:
        if seen is not None:
            seen(event)
        if filter.past_end(event):
            return
        wanted = filter.wants(event)
        if with_diff:
            key = (event.resource, event.key)
            before = event.prev_raw if event.prev_raw is not None else previous.get(key)
            if event.type == DELETED:
                previous.pop(key, None)
            else:
                previous[key] = event.raw
            if wanted:
                prev = loads(before) if before is not None else None
                yield entry(event, with_object=with_object,
                            diff_lines=diff(event, prev, everything=everything))
        elif wanted:
            yield entry(event, with_object=with_object)


def filter_from(query: Callable[[str], str | None], kinds: Callable[[], KindTable]) -> Filter:
    """The filter named by options or query parameters (`query(name)`: its text or None):
    kind (resolved by the table `kinds()` gives), namespace, name, actor, since, until
    (ListingError for a bad bound)."""
    kind, since, until = query("kind"), query("since"), query("until")
    return Filter(resources=kind_names(kinds(), kind) if kind else None,
                  namespace=query("namespace"), name=query("name"), actor=query("actor"),
                  since=parse_bound(since, "--since") if since else None,
                  until=parse_bound(until, "--until") if until else None)
