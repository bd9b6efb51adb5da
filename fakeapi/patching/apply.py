"""Server-side apply, as a pure function over JSON data.

Semantics follow kube-apiserver 1.37 (apimachinery `managedfields` and structured-merge-diff),
re-implemented over plain dicts and the 1.37 JSON schemas: `apply` merges an apply
configuration into the live object (`fakeapi.patching.merge`), removes what this manager
applied last time and no longer applies (unless another manager owns it), reports conflicts
with the other managers' fields whose value would change (409 with `FieldManagerConflict`
causes), or with `force` takes them over, and records the result in `metadata.managedFields`
(`fakeapi.patching.managedfields`).

Same as upstream: a subresource write only applies its part of the object (the main resource
never `status`, `/status` only `status`); server-set metadata keeps its live values; an object
that has no managedFields when first applied gets its existing fields attributed to
"before-first-apply"; `kubectl` server-side apply may take over fields recorded in the
client-side `last-applied-configuration` annotation, and keeps that annotation current.
"""

from __future__ import annotations

import json
from typing import Any

from fakeapi.machinery import fieldpath as fp
from fakeapi.machinery.decode import json_copy, object_member
from fakeapi.machinery.errors import ApiError, Cause, bad_request
from fakeapi.machinery.fieldpath import FieldSet
from fakeapi.patching.fieldsets import STRIP, compare, diff, scope, to_set
from fakeapi.patching.managedfields import (
    APPLY,
    BEFORE_FIRST_APPLY,
    UPDATE,
    ManagerEntry,
    decode_managed,
    set_managed,
    without_managed,
)
from fakeapi.patching.merge import merge, prune_set, remove
from fakeapi.patching.mergetypes import MISSING, MergeType, TypedError, compile_type
from fakeapi.schema.schemas import Schema

#: The annotation of kubectl's client-side apply.
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
#: The manager whose applies upgrade client-side apply (upstream `lastAppliedManager`).
KUBECTL_SSA = "kubectl"
#: The cause type of each field of a 409 apply conflict.
CONFLICT_REASON = "FieldManagerConflict"

#: Metadata the server sets: an apply never takes it from the configuration.
SERVER_OWNED_META = ("uid", "resourceVersion", "creationTimestamp", "generation", "selfLink",
                     "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields")


def apply(live: dict[str, Any] | None, config: dict[str, Any], *, manager: str, force: bool,
          schema: Schema | None, now: str, subresource: str = "") -> dict[str, Any]:
    """Server-side apply of `config` by `manager` to `live` (None: the object is created).

    Returns a new object (sharing nothing with the arguments) with its managedFields updated.
    Raises 409 Conflict (causes of type FieldManagerConflict) when, without `force`, another
    manager owns a field whose value the configuration changes; 400 when the configuration
    sets managedFields; 500 when it does not fit the schema (like upstream's typed-object
    errors). Server-set metadata keeps its live values; `subresource="status"` applies only
    `status`, the main resource never applies `status`.
    """
    if not isinstance(config, dict):
        raise bad_request("apply configuration must be an object")
    cmeta = config.get("metadata")
    if isinstance(cmeta, dict) and cmeta.get("managedFields") is not None:
        raise bad_request("metadata.managedFields must be nil")
    t = compile_type(schema)
    live_obj = without_managed(live)
    managed = decode_managed(((live or {}).get("metadata") or {}).get("managedFields"))
    api_version = str(config.get("apiVersion") or live_obj.get("apiVersion") or "")
    cfg = _scoped_config(config, subresource)
    try:
        new_set = fp.difference(scope(to_set(cfg, t, ())[1], subresource), STRIP)
    except TypedError as err:
        raise ApiError(500, "InternalError", "failed to create typed patch object "
                       f"({_gvknn(config, live_obj)}): {err}") from None

    if live is not None and not managed:
        # Same as upstream: fields of an object nobody tracked belong to "before-first-apply".
        chg, _ = diff({}, live_obj, t, subresource)
        if chg:
            e = ManagerEntry(manager=BEFORE_FIRST_APPLY, operation=UPDATE,
                             api_version=api_version, subresource=subresource, fields=chg,
                             time=now)
            managed[e.key] = e

    merged = merge(live_obj, cfg, t)
    key = (manager, APPLY, "", subresource)
    last = managed.get(key)
    if last is not None and last.fields and last.fields != new_set:
        keep = fp.union(new_set, STRIP)  # identity fields are never pruned
        for k, e in managed.items():
            if k != key:
                keep = fp.union(keep, e.fields)
        gone = prune_set(last.fields, keep)
        if gone:
            merged = remove(merged, gone, t)
            if merged is MISSING:
                merged = {}
    merged = _keep_server_meta(merged, live_obj)

    chg, rem = diff(live_obj, merged, t, subresource)
    conflicts = [(e, p) for k, e in managed.items() if k != key
                 for p in fp.paths(fp.intersection(e.fields, chg))]
    if conflicts and not force:
        allowed = _csa_owned(live_obj, t) if manager == KUBECTL_SSA else None
        if allowed is not None:
            conflicts = [(e, p) for e, p in conflicts if not fp.has(allowed, p)]
        if conflicts:
            raise _conflict_error(conflicts)
    for k, e in managed.items():
        if k != key:
            e.fields = fp.difference(fp.difference(e.fields, chg), rem)
    changed = merged != live_obj
    managed[key] = ManagerEntry(
        manager=manager, operation=APPLY, api_version=api_version, subresource=subresource,
        fields=new_set, time=now if changed or last is None or not last.time else last.time)

    result = json_copy(merged, lenient=True)
    if manager == KUBECTL_SSA:
        annotations = (result.get("metadata") or {}).get("annotations")
        if isinstance(annotations, dict) and annotations.get(LAST_APPLIED):
            annotations[LAST_APPLIED] = _last_applied(config)
    set_managed(result, managed)
    return result


def _scoped_config(config: dict[str, Any], subresource: str) -> dict[str, Any]:
    """The part of a configuration a write through `subresource` applies (with `/status`,
    its `apiVersion`, `kind` and `status`)."""
    if subresource == "status":
        return {k: v for k, v in config.items() if k in ("apiVersion", "kind", "status")}
    if "status" in config:
        return {k: v for k, v in config.items() if k != "status"}
    return config


def _keep_server_meta(merged: dict[str, Any], live: dict[str, Any]) -> dict[str, Any]:
    """Same as upstream: apply never sets uid, resourceVersion, timestamps, generation."""
    meta = merged.get("metadata")
    if not isinstance(meta, dict):
        return merged
    live_meta = object_member(live, "metadata")
    if all(meta.get(f, MISSING) is live_meta.get(f, MISSING) for f in SERVER_OWNED_META):
        return merged
    meta = dict(meta)
    for f in SERVER_OWNED_META:
        if f in live_meta and f != "managedFields":
            meta[f] = live_meta[f]
        else:
            meta.pop(f, None)
    out = dict(merged)
    out["metadata"] = meta
    return out


def _gvknn(config: dict[str, Any], live: dict[str, Any]) -> str:
    """`namespace/name; group/version, Kind=kind`, as upstream's typed-object errors say."""
    meta = object_member(config, "metadata")
    api_version = str(config.get("apiVersion") or live.get("apiVersion") or "")
    group, _, version = api_version.rpartition("/")
    kind = config.get("kind") or live.get("kind") or ""
    return (f"{meta.get('namespace', '')}/{meta.get('name', '')}; "
            f"{group}/{version}, Kind={kind}")


def _conflict_error(conflicts: list[tuple[ManagerEntry, tuple[str, ...]]]) -> ApiError:
    """409 with upstream's message and one FieldManagerConflict cause per conflicting field."""
    by_manager: dict[str, tuple[ManagerEntry, list[tuple[str, ...]]]] = {}
    for e, p in conflicts:
        by_manager.setdefault(e.identifier(), (e, []))[1].append(p)
    ordered = [by_manager[k] for k in sorted(by_manager)]
    causes = [Cause(field=fp.path_string(p), message=f"conflict with {e.printed()}",
                    reason=CONFLICT_REASON) for e, ps in ordered for p in ps]
    if len(conflicts) == 1:
        e, p = conflicts[0]
        message = (f"Apply failed with 1 conflict: conflict with {e.printed()}: "
                   f"{fp.path_string(p)}")
    else:
        lines = []
        for e, ps in ordered:
            lines.append(f"conflicts with {e.printed()}:")
            lines.extend(f"- {fp.path_string(p)}" for p in ps)
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return ApiError(409, "Conflict", message, causes=causes)


def _csa_owned(live: dict[str, Any], t: MergeType) -> FieldSet | None:
    """Fields of the client-side `last-applied-configuration` whose values are still live:
    upstream lets `kubectl` server-side apply take these over without a conflict."""
    annotations = (live.get("metadata") or {}).get("annotations") or {}
    raw = annotations.get(LAST_APPLIED) if isinstance(annotations, dict) else None
    if not raw or not isinstance(raw, str):
        return None
    try:
        last = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(last, dict) or last.get("apiVersion") != live.get("apiVersion"):
        return None
    owned = to_set(last, t)[1]
    c, r = compare(last, live, t)
    return fp.difference(fp.difference(owned, fp.children(c) if c else {}),
                         fp.children(r) if r else {})


def _last_applied(config: dict[str, Any]) -> str:
    """The annotation value upstream writes: the configuration without the annotation."""
    cfg = json_copy(config, lenient=True)
    annotations = (cfg.get("metadata") or {}).get("annotations")
    if isinstance(annotations, dict):
        annotations.pop(LAST_APPLIED, None)
    return fp.go_json(cfg) + "\n"
