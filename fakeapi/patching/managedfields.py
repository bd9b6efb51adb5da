"""`metadata.managedFields` bookkeeping: the entries, their wire form, and what a write records.

Semantics follow kube-apiserver 1.37 (apimachinery `managedfields`): one entry per manager
identifier (manager, operation, apiVersion for updaters, subresource), each holding the set of
fields that manager owns and the time it last changed them, written in upstream's order
(Apply before Update, then by time, manager, version).

- `record_update` does the bookkeeping of a create/update/patch: fields the write added or
  changed go to the (manager, "Update", apiVersion, subresource) entry and leave every other
  entry; removed fields leave every entry. Updates to an object without managedFields stay
  untracked; a client may replace the entries (main resource only) or clear them with `[]` or
  `[{}]`; more than 10 Update entries are folded into "ancient-changes".
- `manager_from_user_agent` is the default field manager of a request.

Server-side apply (`fakeapi.patching.apply`) reads and writes the same entries. Known
approximation: managers that wrote another apiVersion are compared field-by-field in the
object's version (no conversion).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from fakeapi.machinery import fieldpath as fp
from fakeapi.machinery.fieldpath import FieldSet
from fakeapi.patching.fieldsets import created, diff
from fakeapi.patching.mergetypes import compile_type
from fakeapi.schema.schemas import Schema

#: The operations of an entry: a server-side apply, or any other write.
APPLY = "Apply"
UPDATE = "Update"
#: The only `fieldsType`.
FIELDS_V1 = "FieldsV1"
#: The manager of an untracked object's fields when it is first applied.
BEFORE_FIRST_APPLY = "before-first-apply"
#: The manager the oldest Update entries are folded into.
ANCIENT_CHANGES = "ancient-changes"
#: Upstream `DefaultMaxUpdateManagers`.
MAX_UPDATE_MANAGERS = 10
#: Upstream `FieldManagerMaxLength`.
FIELD_MANAGER_MAX_LENGTH = 128


@dataclasses.dataclass(kw_only=True)
class ManagerEntry:
    """One `managedFields` entry: a manager's identifier, the fields it owns and their time."""

    manager: str
    operation: str
    api_version: str
    subresource: str
    fields: FieldSet
    time: str | None
    stored: dict[str, Any] | None = None
    """The stored entry this one was read from: written again as it is while its fields
    are still that entry's (most writes leave the other managers' entries alone)."""

    @property
    def key(self) -> tuple[str, str, str, str]:
        """Upstream manager identifier: appliers are one entry whatever their apiVersion."""
        version = "" if self.operation == APPLY else self.api_version
        return (self.manager, self.operation, version, self.subresource)

    def identifier(self) -> str:
        """The JSON identifier upstream sorts conflicting managers by."""
        d = {"manager": self.manager, "operation": self.operation}
        if self.operation != APPLY and self.api_version:
            d["apiVersion"] = self.api_version
        if self.subresource:
            d["subresource"] = self.subresource
        return json.dumps(d, separators=(",", ":"), ensure_ascii=False)

    def printed(self) -> str:
        """How conflict messages name the manager (upstream `printManager`)."""
        s = json.dumps(self.manager, ensure_ascii=False)
        if self.subresource:
            s += f" with subresource {json.dumps(self.subresource, ensure_ascii=False)}"
        if self.operation == UPDATE:
            s += f" using {self.api_version}"
        return s

    def to_wire(self, *, canonical: bool = True) -> dict[str, Any]:
        """The `ManagedFieldsEntry` object (`canonical=False`: the fields are in wire order)."""
        stored = self.stored
        if (canonical and stored is not None and stored.get("fieldsV1") is self.fields
                and stored.get("time") == self.time):
            return stored  # stored entries are canonical already (and never mutated)
        d: dict[str, Any] = {"manager": self.manager, "operation": self.operation,
                             "apiVersion": self.api_version}
        if self.time:
            d["time"] = self.time
        d["fieldsType"] = FIELDS_V1
        d["fieldsV1"] = fp.canonical(self.fields) if canonical else self.fields
        if self.subresource:
            d["subresource"] = self.subresource
        return d


Managed = dict[tuple[str, str, str, str], ManagerEntry]
"""The entries of an object by manager identifier (`ManagerEntry.key`)."""


def decode_managed(entries: Any, *, check: bool = False) -> Managed:
    """Entries of a managedFields list by manager identifier.

    With `check` (a client-supplied list) malformed entries are dropped; stored lists were
    written here and are trusted.
    """
    out: Managed = {}
    if not isinstance(entries, list):
        return out
    for raw in entries:
        if not isinstance(raw, dict) or raw.get("fieldsType", FIELDS_V1) != FIELDS_V1:
            continue
        fields = raw.get("fieldsV1") or {}
        if not isinstance(fields, dict) or (check and not fp.is_valid(fields)):
            continue
        e = ManagerEntry(manager=str(raw.get("manager") or ""),
                         operation=str(raw.get("operation") or UPDATE),
                         api_version=str(raw.get("apiVersion") or ""),
                         subresource=str(raw.get("subresource") or ""), fields=fields,
                         time=raw.get("time"), stored=None if check else raw)
        prev = out.get(e.key)
        if prev is not None:
            e.fields = fp.union(prev.fields, e.fields)
        out[e.key] = e
    return out


def _encode(managed: Managed) -> list[dict[str, Any]]:
    """Wire list in upstream order: Apply before Update, then by time, manager, version."""
    entries = sorted((e for e in managed.values() if e.fields),
                     key=lambda e: (e.operation, e.time or "", e.manager, e.api_version,
                                    e.subresource))
    return [e.to_wire() for e in entries]


def _is_reset(entries: Any) -> bool:
    """Upstream `isResetManagedFields`: `[]` or `[{}]` clears managedFields."""
    return isinstance(entries, list) and (not entries or entries == [{}])


def _cap_updaters(managed: Managed) -> None:
    """Upstream `capManagersManager`: fold the oldest Update entries into 'ancient-changes'."""
    updaters = [e for e in managed.values() if e.operation != APPLY]
    count = len(updaters)
    if count <= MAX_UPDATE_MANAGERS:
        return
    updaters.sort(key=lambda e: (e.time or "", e.identifier()))
    first: dict[str, ManagerEntry] = {}
    for e in updaters:
        if count <= MAX_UPDATE_MANAGERS:
            break
        version = e.api_version
        head = first.get(version)
        if head is None:
            first[version] = e
            continue
        bucket_key = (ANCIENT_CHANGES, UPDATE, version, "")
        bucket = managed.get(bucket_key)
        if bucket is None:
            del managed[head.key]
            bucket = ManagerEntry(manager=ANCIENT_CHANGES, operation=UPDATE, api_version=version,
                                  subresource="", fields=head.fields, time=head.time)
            managed[bucket_key] = bucket
        bucket.fields = fp.union(bucket.fields, e.fields)
        bucket.time = e.time
        del managed[e.key]
        count -= 1


def without_managed(obj: dict[str, Any] | None) -> dict[str, Any]:
    """A shallow view of `obj` without `metadata.managedFields` ({} for None)."""
    if not obj:
        return {}
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or "managedFields" not in meta:
        return obj
    out = dict(obj)
    out["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    return out


def set_managed(obj: dict[str, Any], managed: Managed) -> list[dict[str, Any]]:
    """Write the entries that own anything to `obj`'s metadata (none: no managedFields) and
    return that list."""
    encoded = _encode(managed)
    meta = obj.setdefault("metadata", {})
    if encoded:
        meta["managedFields"] = encoded
    else:
        meta.pop("managedFields", None)
    return encoded


def manager_from_user_agent(user_agent: str) -> str:
    """Upstream default field manager: the user agent up to its first `/`, printable
    characters only, at most 128 bytes (`kubectl/v1.37.0 (linux/amd64) ...` → `kubectl`)."""
    out: list[str] = []
    size = 0
    for ch in user_agent.split("/", 1)[0]:
        if not ch.isprintable():
            continue
        n = len(ch.encode())
        if size + n > FIELD_MANAGER_MAX_LENGTH:
            break
        out.append(ch)
        size += n
    return "".join(out)


def record_update(old: dict[str, Any] | None, new: dict[str, Any], *, manager: str,
                  schema: Schema | None, now: str, subresource: str = "") -> list[dict[str, Any]]:
    """managedFields bookkeeping for a create (`old` None), update or non-apply patch.

    Sets `new["metadata"]["managedFields"]` in place (removes it when nothing is tracked) and
    returns the new list. `new` may carry managedFields: a non-empty list replaces the tracked
    ones (main resource only), `[]` or `[{}]` clears them; otherwise `old`'s are kept.
    """
    meta = new.get("metadata")
    if not isinstance(meta, dict):
        return []
    requested = meta.get("managedFields")
    old_entries = (old or {}).get("metadata", {}).get("managedFields")
    if subresource or (old_entries and requested == old_entries):  # (sent back unchanged)
        managed = decode_managed(old_entries)
    elif _is_reset(requested):
        managed = {}
    else:
        managed = decode_managed(requested, check=True) or decode_managed(old_entries)
    if not managed and old is not None:
        # Same as upstream: an update of an untracked object stays untracked.
        meta.pop("managedFields", None)
        return []
    api_version = str(new.get("apiVersion") or (old or {}).get("apiVersion") or "")
    if old is None and not managed:
        # A create: one walk of `new` gives the only entry, already in wire order.
        chg = created(without_managed(new), compile_type(schema), subresource)
        if not chg:
            meta.pop("managedFields", None)
            return []
        entry = ManagerEntry(manager=manager, operation=UPDATE, api_version=api_version,
                             subresource=subresource, fields=chg, time=now)
        encoded = [entry.to_wire(canonical=False)]
        meta["managedFields"] = encoded
        return encoded
    chg, rem = diff(without_managed(old), without_managed(new), compile_type(schema),
                    subresource)
    for e in managed.values():
        e.fields = fp.difference(fp.difference(e.fields, chg), rem)
    if chg:
        e = ManagerEntry(manager=manager, operation=UPDATE, api_version=api_version,
                         subresource=subresource, fields=chg, time=now)
        prev = managed.get(e.key)
        if prev is not None:
            e.fields = fp.union(prev.fields, chg)
        managed[e.key] = e
    for k in [k for k, e in managed.items() if not e.fields]:
        del managed[k]
    _cap_updaters(managed)
    return set_managed(new, managed)
