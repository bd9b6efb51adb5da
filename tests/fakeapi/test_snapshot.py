"""The state of a log at a revision, snapshots of it, and restoring one into a new cluster, in
process on real log files: the state is the log folded up to the revision; a snapshot keeps
each object but what the target assigns, and its uid; a restored cluster holds the same
objects; bad logs, revisions and snapshot files are clear errors that load nothing."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from fakeapi.cli import main as cli
from fakeapi.cluster import Cluster, ClusterConfig, RestoreRefused
from fakeapi.registry.kinds import CLOCKS
from fakeapi.replay import history, restore, snapshot
from fakeapi.storage import logcheck
from fakeapi.storage.log import Event
from fakeapi.storage.store import Store
from fakeapi.storage.walformat import encode_record, scan_file
from tests.support.datadirs import WIDGETS, add_history, flip_record, make_log

Obj = dict[str, Any]
Key = tuple[str, str, str]


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, int]:
    """A data directory with creates, an update, a delete, owner references, a finalizer, a
    CRD and a custom resource with status; and its last revision."""
    make_log(tmp_path, configmaps=3)
    return tmp_path, add_history(tmp_path)


def folded(data_dir: Path, revision: int) -> dict[Key, bytes]:
    """The objects at `revision`, by folding the log's records (not through the store)."""
    state: dict[Key, bytes] = {}
    for record in scan_file(logcheck.log_path(data_dir)).records[:revision]:
        head, _, raw = record.partition(b"\n")
        h = orjson.loads(head)
        key = (h["res"], h["ns"], h["n"])
        if h["t"] == "DELETED":
            state.pop(key, None)
        else:
            state[key] = raw
    return state


def stored(store: Store, *, clock: bool = False) -> dict[Key, Obj]:
    """The objects of the store a snapshot keeps (with `clock`, the Clock it leaves out too)."""
    objs = list(snapshot.items(store))
    if clock:
        objs += [(CLOCKS.resource_id, item.object if isinstance(item, Event) else item)
                 for item in store.scan(CLOCKS.resource_id)]
    return {(resource, obj["metadata"].get("namespace", ""), obj["metadata"]["name"]): obj
            for resource, obj in objs}


@pytest.mark.parametrize("back", [None, 0, 1, 4, 6, 20, -1])
def test_the_state_at_a_revision_is_the_log_folded_up_to_it(recorded: tuple[Path, int],
                                                            back: int | None) -> None:
    """At the end, before the custom resource's status, before the CRD, before the delete,
    mid-bootstrap, at revision 1."""
    data_dir, last = recorded
    at = None if back is None else 1 if back < 0 else last - back
    state = history.state_at(data_dir, at, progress=False)
    assert (state.revision, state.last) == (at or last, last)
    assert {k: orjson.dumps(v) for k, v in stored(state.store, clock=True).items()} == folded(
        data_dir, at or last)


@pytest.mark.parametrize(("at", "message"), [
    (lambda last: last + 1, "revision {at} is beyond the end of the log: it ends at revision "
                            "{last}"),
    (lambda last: 10**9, "revision {at} is beyond the end of the log: it ends at revision "
                         "{last}"),
    (lambda last: 0, "revision {at} is not in the log: its revisions run from 1 to {last}"),
    (lambda last: -5, "revision {at} is not in the log: its revisions run from 1 to {last}"),
], ids=["next", "far", "zero", "negative"])
def test_a_revision_outside_the_log_is_a_clear_error(
        recorded: tuple[Path, int], at: Callable[[int], int], message: str) -> None:
    data_dir, last = recorded
    with pytest.raises(history.HistoryError) as e:
        history.state_at(data_dir, at(last), progress=False)
    assert str(e.value) == message.format(at=at(last), last=last)
    assert not isinstance(e.value, history.LogDamaged)


def test_a_damaged_log_gives_no_state_at_any_revision(recorded: tuple[Path, int]) -> None:
    data_dir, _ = recorded
    offset = flip_record(data_dir, 40)
    for at in (10, 40, None):  # before the damage too: never half-loaded
        with pytest.raises(history.LogDamaged) as e:
            history.state_at(data_dir, at, progress=False)
        assert f"DAMAGED at offset {offset:,} (revision 40)" in str(e.value)
        assert f"fakeapi log repair {data_dir} --truncate-at 39" in str(e.value)


def test_a_torn_final_write_is_left_out_as_a_start_cuts_it(recorded: tuple[Path, int]) -> None:
    data_dir, last = recorded
    path = logcheck.log_path(data_dir)
    before = path.read_bytes()
    path.write_bytes(before + encode_record(b'{"r": 74}\n{}')[:-3])  # never acknowledged
    assert history.state_at(data_dir, progress=False).revision == last
    assert path.read_bytes().startswith(before)  # read, not repaired


def test_no_log_or_no_fakeapi_log_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(history.HistoryError, match="holds no event log"):
        history.state_at(tmp_path / "nowhere")
    logcheck.log_path(tmp_path).write_text("not a log")
    with pytest.raises(history.HistoryError, match="is not a fakeapi WAL file"):
        history.state_at(tmp_path)


# ----- snapshots -------------------------------------------------------------------------


def test_a_snapshot_keeps_each_object_but_what_the_target_assigns(
        recorded: tuple[Path, int]) -> None:
    data_dir, last = recorded
    state = history.state_at(data_dir, progress=False)
    out = io.StringIO()
    count = snapshot.write(state.store, out, title="t", progress=False)
    docs = snapshot.parse(out.getvalue(), "snap.yaml")
    objects = list(snapshot.objects(state.store))
    assert count == len(docs) == len(objects) == len(stored(state.store))
    assert "Clock" not in [obj["kind"] for obj in objects]
    for doc, obj in zip(docs, objects, strict=True):
        meta = obj["metadata"]
        assert doc.object == snapshot.kept(obj)
        assert not set(snapshot.STRIPPED) & set(doc.object["metadata"])
        assert (doc.uid, doc.resource_version) == (meta["uid"], meta["resourceVersion"])
    kinds = [d.object["kind"] for d in docs]
    assert kinds.index("Namespace") == 0 and kinds.index("CustomResourceDefinition") == 4
    owned = next(d.object for d in docs if d.object["metadata"]["name"] == "owned")
    assert owned["metadata"]["finalizers"] == ["example.com/keep"]
    assert owned["metadata"]["ownerReferences"][0]["name"] == "cm-0"
    # a literal block, as a person writes it
    assert "multi: |\n    line one\n    line two\n" in out.getvalue()


@pytest.mark.parametrize(("text", "message"), [
    ("a: [1,\n", "snap.yaml: document 1 is not YAML"),
    ("- 1\n- 2\n", "snap.yaml: document 1 is not an object but list"),
    ("kind: ConfigMap\nmetadata: {name: a}\n", "snap.yaml: document 1 has no apiVersion"),
    ("apiVersion: v1\nmetadata: {name: a}\n", "snap.yaml: document 1 has no kind"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n", "document 1 has no metadata.name"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: []\n", "document 1 has no metadata.name"),
    ("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n# x\n---\n"
     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {k: 1, k: 2}\n",
     "snap.yaml: document 2 has duplicate fields: data.k"),
    ("# fakeapi: [1]\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
     "document 1: its # fakeapi: comment is not what a snapshot writes"),
])
def test_a_document_that_is_no_object_is_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(snapshot.SnapshotError) as e:
        snapshot.parse(text, "snap.yaml")
    assert message in str(e.value)


def test_any_manifest_parses_with_timestamps_as_strings() -> None:
    [doc] = snapshot.parse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
                           "  creationTimestamp: 2026-01-01T00:00:00Z\n", "m.yaml")
    assert doc.object["metadata"]["creationTimestamp"] == "2026-01-01T00:00:00Z"
    assert doc.uid is None


# ----- restoring -------------------------------------------------------------------------


def snapshot_text(data_dir: Path, at: int | None = None) -> str:
    out = io.StringIO()
    snapshot.write(history.state_at(data_dir, at, progress=False).store, out, title="t",
                   progress=False)
    return out.getvalue()


@pytest.mark.parametrize("at", [66, None])
def test_a_restored_cluster_holds_the_snapshot_s_objects(recorded: tuple[Path, int],
                                                        tmp_path: Path, at: int | None) -> None:
    data_dir, _ = recorded
    objects = restore.restorable(snapshot.parse(snapshot_text(data_dir, at), "s"), "s")
    cluster = Cluster(ClusterConfig(data_dir=tmp_path / "new", restore=objects))
    expected = stored(history.state_at(data_dir, at, progress=False).store)
    got = stored(cluster.store)
    assert set(got) == set(expected)
    for key, obj in expected.items():
        mine = got[key]
        assert snapshot.kept(mine) == snapshot.kept(obj), key
        assert mine["metadata"]["uid"] == obj["metadata"]["uid"]
        assert "managedFields" not in mine["metadata"]
    if at is None:  # the CRD is served: its kind is in the table, its object readable
        kind = cluster.kinds.by_id(WIDGETS)
        assert kind is not None
        assert cluster.registry.get(kind, "default", "w").object["status"] == {"size": 3}
    events = list(cluster.log)
    assert {e.actor for e in events[:len(expected)]} == {"system:apiserver"}
    assert cluster.wal is not None
    cluster.wal.close_now()


def test_a_restore_adds_what_every_cluster_has(tmp_path: Path) -> None:
    text = "apiVersion: v1\nkind: Namespace\nmetadata: {name: only}\n"
    cluster = Cluster(ClusterConfig(restore=restore.restorable(snapshot.parse(text, "s"), "s"),
                                    seed=3))
    names = {k[2] for k in stored(cluster.store) if k[0] == "namespaces"}
    assert names == {"only", "default", "kube-system", "kube-public", "kube-node-lease"}
    first = next(iter(cluster.log))
    assert first.name == "only" and first.object["metadata"]["uid"]  # a fresh uid


def test_a_restore_into_a_data_dir_with_a_log_is_refused(recorded: tuple[Path, int],
                                                         tmp_path: Path) -> None:
    data_dir, _ = recorded
    objects = restore.restorable(snapshot.parse(snapshot_text(data_dir), "s"), "s")
    target = tmp_path / "target"
    last = make_log(target, configmaps=1)
    before = logcheck.log_path(target).read_bytes()
    with pytest.raises(RestoreRefused, match=f"already holds {last} events"):
        Cluster(ClusterConfig(data_dir=target, restore=objects))
    assert logcheck.log_path(target).read_bytes() == before


CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n"
BAD_SNAPSHOTS = [
    ("apiVersion: v9\nkind: Gadget\nmetadata: {name: a}\n",
     "s: document 1 (Gadget a): the server stores no kind Gadget in v9"),
    ("apiVersion: resource.k8s.io/v1alpha3\nkind: ResourcePoolStatusRequest\n"
     "metadata: {name: a}\nspec: {driver: d.example.com}\n",
     "the server stores no kind ResourcePoolStatusRequest in resource.k8s.io/v1alpha3 (with "
     "these feature gates"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
     "s: document 1 (ConfigMap a): ConfigMap is namespaced, and it has no metadata.namespace"),
    ("apiVersion: v1\nkind: Namespace\nmetadata: {name: a, namespace: default}\n",
     "Namespace is cluster-scoped, and it has a metadata.namespace"),
    (CM + "---\n" + CM, "s: document 2 (ConfigMap default/a): the same object as document 1"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: nowhere}\n",
     'document 1 (ConfigMap nowhere/a) is refused: namespaces "nowhere" not found'),
    ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
     "metadata: {name: Bad_Name, namespace: default}\nspec: {devices: {}}\n",
     "document 1 (ResourceClaim default/Bad_Name) is refused: ResourceClaim.resource.k8s.io "
     '"Bad_Name" is invalid: metadata.name'),
    ("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {capacity: {cpu: lots}}\n",
     'document 1 (Node n) is refused: Node in version "v1" cannot be handled as a Node: '
     "quantities must match"),
    ("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\n",
     "the server stores no kind Widget in example.com/v1"),
]


@pytest.mark.parametrize(("text", "message"), BAD_SNAPSHOTS)
def test_a_document_the_server_would_refuse_is_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(snapshot.SnapshotError) as e:
        restore.restorable(snapshot.parse(text, "s"), "s")
    assert message in str(e.value)


# ----- the command -----------------------------------------------------------------------


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Exit code (argparse's too), stdout, stderr."""
    try:
        code = cli.main(list(argv))
    except SystemExit as e:
        code = int(str(e.code))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_snapshot_command(recorded: tuple[Path, int], tmp_path: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    data_dir, last = recorded
    target = tmp_path / "snap.yaml"
    code, out, err = run_cli(capsys, "snapshot", str(data_dir), "--at", "66", "-o", str(target))
    count = len([k for k in folded(data_dir, 66) if k[0] != CLOCKS.resource_id])  # no Clock
    assert (code, out) == (0, "")
    assert err == f"{count} objects at revision 66 written to {target}\n"
    text = target.read_text()
    assert text.startswith(f"# fakeapi snapshot of {data_dir} at revision 66 (the log ends "
                           f"at {last})\n")
    assert len(snapshot.parse(text, "x")) == count
    code, out, _ = run_cli(capsys, "snapshot", str(data_dir))
    assert code == 0 and out == snapshot_text(data_dir).replace(
        "# t\n", f"# fakeapi snapshot of {data_dir} at revision {last} (the log ends at "
                 f"{last})\n")


@pytest.mark.parametrize(("argv", "code", "message"), [
    (["--at", "999"], 2, "fakeapi: revision 999 is beyond the end of the log: it ends at "
                         "revision "),
    (["--at", "0"], 2, "fakeapi: revision 0 is not in the log"),
    (["--at", "soon"], 2, "invalid revision 'soon': a number"),
])
def test_the_snapshot_command_refuses_what_it_cannot_do(
        recorded: tuple[Path, int], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        argv: list[str], code: int, message: str) -> None:
    target = tmp_path / "snap.yaml"
    got, _, err = run_cli(capsys, "snapshot", str(recorded[0]), *argv, "-o", str(target))
    assert got == code and message in err
    assert not target.exists()


def test_the_snapshot_command_on_a_damaged_log(recorded: tuple[Path, int],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    data_dir, _ = recorded
    flip_record(data_dir, 20)
    code, _, err = run_cli(capsys, "snapshot", str(data_dir), "--at", "5")
    assert code == 1 and "DAMAGED at offset" in err and "(revision 20)" in err
