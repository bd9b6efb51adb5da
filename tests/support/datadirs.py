"""Data directories with real log files for the tests of what reads them: a log of the
bootstrap state and some ConfigMaps, and a damaged record."""

from __future__ import annotations

from pathlib import Path

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.machinery.decode import json_copy
from fakeapi.registry.context import RequestContext
from fakeapi.storage import logcheck
from fakeapi.storage.wal import WriteAheadLog
from fakeapi.storage.walformat import scan_file


def make_log(data_dir: Path, configmaps: int = 5) -> int:
    """A data directory whose log holds the bootstrap state and ConfigMaps cm-0..cm-N-1
    (the missing ones are written); returns the last revision."""
    cluster = Cluster(ClusterConfig(data_dir=data_dir, seed=1))
    kind = cluster.kinds.by_id("configmaps")
    assert kind is not None
    ctx = RequestContext(user="tester", groups=("system:authenticated",),
                         field_manager="tester", verb="create")  # what the client would use
    for i in range(configmaps):
        if cluster.store.get("configmaps", "default", f"cm-{i}") is None:
            cluster.registry.create(kind, "default", {"metadata": {"name": f"cm-{i}"}}, ctx)
    cluster.log.flush_now()
    assert cluster.wal is not None
    cluster.wal.close_now()
    return cluster.log.revision


def flip_record(data_dir: Path, revision: int) -> int:
    """Invert one payload byte of the record of `revision`; return that record's offset."""
    path = logcheck.log_path(data_dir)
    scan = logcheck.verify(data_dir).scan
    offset = scan.offsets[revision - 1]
    data = bytearray(path.read_bytes())
    data[offset + 20] ^= 0xFF
    path.write_bytes(bytes(data))
    return offset


WIDGETS = "widgets.example.com"
WIDGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": WIDGETS},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "widgets", "kind": "Widget", "singular": "widget",
                       "listKind": "WidgetList"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {
                               "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
"""A namespaced custom kind with a status subresource."""


ADMIN = RequestContext(user="tester", groups=("system:masters",), field_manager="tester")


def add_history(data_dir: Path) -> int:
    """Go on with `make_log`'s log: cm-0 updated, cm-1 deleted, a ConfigMap owned by cm-0, the
    Widget CRD and a Widget with status; returns the last revision."""
    cluster = Cluster(ClusterConfig(data_dir=data_dir, seed=1))
    cms = cluster.kinds.by_id("configmaps")
    assert cms is not None
    cm0 = cluster.store.get("configmaps", "default", "cm-0")
    assert cm0 is not None
    cluster.registry.update(cms, "default", "cm-0", {**cm0.object, "data": {"k": "v2"}}, ADMIN)
    cluster.registry.delete(cms, "default", "cm-1", ADMIN)
    owner = {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm-0",
             "uid": cm0.object["metadata"]["uid"]}
    cluster.registry.create(cms, "default", {"metadata": {
        "name": "owned", "ownerReferences": [owner], "finalizers": ["example.com/keep"]},
        "data": {"multi": "line one\nline two\n"}}, ADMIN)
    return add_widgets(cluster)


def add_widgets(cluster: Cluster) -> int:
    """Write the Widget CRD and a Widget `default/w` with status, then close the cluster's log;
    returns its last revision."""
    crds = cluster.kinds.by_id("customresourcedefinitions.apiextensions.k8s.io")
    assert crds is not None
    cluster.registry.create(crds, "", json_copy(WIDGET_CRD), ADMIN)
    widgets = cluster.kinds.by_id(WIDGETS)
    assert widgets is not None
    made = cluster.registry.create(widgets, "default", {
        "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
        "spec": {"size": 3}}, ADMIN).object
    cluster.registry.update(widgets, "default", "w", {**made, "status": {"size": 3}}, ADMIN,
                            "status")
    cluster.log.flush_now()
    assert cluster.wal is not None
    cluster.wal.close_now()
    return cluster.log.revision


def write_records(data_dir: Path, records: list[bytes], *, like: Path | None = None) -> None:
    """A new data directory whose log holds `records` as they are (an edited recording),
    with the header of `like`'s log (its settings) when given."""
    data_dir.mkdir(parents=True, exist_ok=True)
    header = scan_file(logcheck.log_path(like)).header if like is not None else None
    wal, existing = WriteAheadLog.open(logcheck.log_path(data_dir),
                                       **({"header": header} if header else {}))
    assert existing == [], f"{data_dir} already holds a log"
    for record in records:
        wal.append(record)
    wal.close_now()
