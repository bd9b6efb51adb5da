"""Loading a snapshot into a new cluster (`fakeapi serve --from FILE`).

Every document is first checked as the server would take it from a client, in a scratch
in-memory cluster with the same feature gates: created (or, for what every cluster has, the
default namespaces and the bootstrap roles, updated) through the registry, its status then
written through `/status`. Any refusal names the document and carries the server's Status
message, and nothing is served. Then the cluster commits the objects as they are in the file
(`ClusterConfig.restore`): the server's own writes at bootstrap, with the recorded uids,
creation times, generations, finalizers and status, each at a new revision.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from fakeapi.cluster import SYSTEM_CONTEXT, Cluster, ClusterConfig
from fakeapi.machinery.decode import json_copy
from fakeapi.machinery.errors import ApiError
from fakeapi.registry.rest import STORED, Kind
from fakeapi.replay.snapshot import FIRST, Obj, SnapshotDocument, SnapshotError, order, read

RESTORE_DROPS = ("resourceVersion", "managedFields", "selfLink")
"""Metadata a restore never takes from a file: the revision is the new log's, and the
objects' writer is the server."""


def load(path: Path, *, feature_gates: Mapping[str, bool] | None = None
         ) -> tuple[tuple[str, Obj], ...]:
    """The (resource, object) pairs `ClusterConfig.restore` takes, from a snapshot file,
    every document checked first (SnapshotError naming the first refused one)."""
    return restorable(read(path), str(path), feature_gates=feature_gates)


def restorable(documents: Sequence[SnapshotDocument], source: str, *,
               feature_gates: Mapping[str, bool] | None = None) -> tuple[tuple[str, Obj], ...]:
    """Check each document in a scratch cluster, in snapshot order (namespaces and CRDs
    first, the file's order within a resource); the objects to restore, in that order."""
    scratch = Cluster(ClusterConfig(feature_gates=dict(feature_gates or {})))
    seen: dict[tuple[str, str, str], int] = {}
    out: list[tuple[str, Obj]] = []
    for doc in sorted(documents, key=lambda d: _rank(scratch, d.object)):  # stable
        obj = doc.object
        meta = obj["metadata"]
        # a custom kind is served once its CRD, which comes first, is in the scratch cluster
        kind = scratch.kinds.by_gvk(obj["apiVersion"], obj["kind"])
        where = f"{source}: document {doc.index} ({obj['kind']} {_name(obj)})"
        if kind is None or kind.handler is not STORED:
            raise SnapshotError(f"{where}: the server stores no kind {obj['kind']} in "
                                f"{obj['apiVersion']} (with these feature gates and the "
                                "snapshot's CRDs)")
        namespace = str(meta.get("namespace") or "")
        if kind.namespaced != bool(namespace):
            raise SnapshotError(f"{where}: {kind.kind} is "
                                + ("namespaced, and it has no metadata.namespace"
                                   if kind.namespaced else "cluster-scoped, and it has a "
                                   "metadata.namespace"))
        key = (kind.resource_id, namespace, meta["name"])
        if key in seen:
            raise SnapshotError(f"{where}: the same object as document {seen[key]}")
        seen[key] = doc.index
        try:
            _check(scratch, kind, obj)
        except ApiError as e:
            raise SnapshotError(f"{where} is refused: {e.message}") from None
        out.append((kind.resource_id, _restored(obj, doc.uid)))
    return tuple(out)


def _rank(scratch: Cluster, obj: Obj) -> tuple[int, str]:
    """Snapshot order for a built-in kind; custom resources last (their CRDs come first)."""
    kind = scratch.kinds.by_gvk(str(obj["apiVersion"]), str(obj["kind"]))
    return order(kind.resource_id) if kind is not None else (len(FIRST) + 1, "")


def _name(obj: Obj) -> str:
    meta = obj["metadata"]
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]


def _restored(obj: Obj, uid: str | None) -> Obj:
    """The object as the cluster will commit it: the file's, with the recorded uid."""
    obj = json_copy(obj)
    meta = obj["metadata"]
    for field in RESTORE_DROPS:
        meta.pop(field, None)
    if uid:
        meta["uid"] = uid
    return obj


def _check(scratch: Cluster, kind: Kind, obj: Obj) -> None:
    """Write `obj` to the scratch cluster as a client would (ApiError when refused)."""
    meta = obj["metadata"]
    namespace, name = meta.get("namespace", ""), meta["name"]
    body = json_copy(obj)
    body["metadata"].pop("uid", None)
    status = body.get("status")
    current = scratch.store.get(kind.resource_id, namespace, name)
    if current is None:
        written = scratch.registry.create(kind, namespace, body, SYSTEM_CONTEXT).object
    else:
        body["metadata"]["resourceVersion"] = current.object["metadata"]["resourceVersion"]
        written = scratch.registry.update(kind, namespace, name, body, SYSTEM_CONTEXT).object
    if status is not None and kind.has_status:
        scratch.registry.update(kind, namespace, name, {**written, "status": status},
                                SYSTEM_CONTEXT, "status")
