"""Snapshots through the real binaries: `fakeapi snapshot DIR --at REV -o FILE` of a recorded
run (the scripted DRA run, durable, then a CRD and a custom resource), then `fakeapi serve
--from FILE`, where the LIST of every kind through kubectl v1.37 and the Python client equals
the state at that revision (what a snapshot keeps, uids included), and `kubectl apply -f FILE`
to a fresh server, which loads every document. Bad files and a used data directory keep
`--from` from starting; the progress bar shows on a terminal only."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from kubernetes import config, dynamic

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.replay import history, snapshot
from tests.support.datadirs import add_widgets
from tests.support.kubectl import Kubectl
from tests.support.paths import ROOT
from tests.support.processes import ServerProcess, start_server, stderr_on_a_terminal
from tests.support.scripted_run import run
from tests.support.seeds import SEED_GATE_MAP, SEED_GATES

Obj = dict[str, Any]
Key = tuple[str, str, str]
ADVERTISED = {("endpoints", "default", "kubernetes"),
              ("endpointslices.discovery.k8s.io", "default", "kubernetes"),
              ("clocks.emulator.fakeapi.dev", "", "cluster")}
"""What a serving server writes itself (its own address) and its own Clock, which the
in-process recording never had or the snapshot leaves out."""
QUIET = ("--components", "", "--nodes", "0", "--feature-gates", SEED_GATES)
"""A server that only serves: no component changes what was loaded."""


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The data directory of a recorded run."""
    root = tmp_path_factory.mktemp("recording")
    asyncio.run(run(11, root / "state", root / "data"))
    add_widgets(Cluster(ClusterConfig(data_dir=root / "data", feature_gates=SEED_GATE_MAP)))
    return root / "data"


def bound_at(data_dir: Path) -> int:
    """The revision that bound the first pod (the scheduler's write of spec.nodeName)."""
    for revision, record in enumerate(history.read_log(data_dir).records, 1):
        head, _, raw = record.partition(b"\n")
        if orjson.loads(head)["res"] == "pods" and b'"nodeName"' in raw:
            return revision
    raise AssertionError("no pod was bound")


def take_snapshot(data_dir: Path, out: Path, at: int | None) -> subprocess.CompletedProcess[str]:
    """`fakeapi snapshot` in a process of its own."""
    argv = [sys.executable, "-m", "fakeapi.cli", "snapshot", str(data_dir), "-o", str(out)]
    return subprocess.run([*argv, *(["--at", str(at)] if at else [])], cwd=ROOT, text=True,
                          capture_output=True, timeout=120)


def normalized(obj: Obj) -> Obj:
    """An object as a snapshot keeps it, with the uid it restores."""
    return {**snapshot.kept(obj), "uid": obj["metadata"].get("uid")}


def expected_state(data_dir: Path, at: int | None) -> dict[Key, Obj]:
    store = history.state_at(data_dir, at, progress=False).store
    return {(resource, obj["metadata"].get("namespace", ""), obj["metadata"]["name"]):
            normalized(obj) for resource, obj in snapshot.items(store)}


def listed_by_kubectl(k: Kubectl) -> dict[Key, Obj]:
    """Every object of every listable resource, through kubectl."""
    out = {}
    for resource in k("api-resources", "--verbs=list", "-o", "name").split():
        for item in json.loads(k("get", resource, "-A", "-o", "json"))["items"]:
            meta = item["metadata"]
            out[(resource, meta.get("namespace", ""), meta["name"])] = normalized(item)
    return out


@pytest.fixture
def served(request: pytest.FixtureRequest, recording: Path, tmp_path: Path
           ) -> Iterator[tuple[ServerProcess, dict[Key, Obj]]]:
    """A server started `--from` a snapshot at the revision the test names (None: the end),
    and the state of the recording at that revision."""
    at = bound_at(recording) - 1 if request.param == "before-binding" else None
    file = tmp_path / "snapshot.yaml"
    made = take_snapshot(recording, file, at)
    assert made.returncode == 0, made.stderr
    server = start_server(tmp_path / "data", "--from", str(file), *QUIET, http=True)
    yield server, expected_state(recording, at)
    assert server.stop() == 0


@pytest.mark.parametrize("served", ["before-binding", "end"], indirect=True)
def test_every_list_of_a_server_started_from_a_snapshot_is_the_state_at_its_revision(
        kubectl_binary: str, served: tuple[ServerProcess, dict[Key, Obj]]) -> None:
    server, expected = served
    got = listed_by_kubectl(Kubectl(kubectl_binary, server.kubeconfig))
    assert set(got) - set(expected) == ADVERTISED
    missing = set(expected) - set(got)
    assert not missing, sorted(missing)[:10]
    for key, obj in expected.items():
        assert got[key] == obj, key
    api = dynamic.DynamicClient(config.new_client_from_config(config_file=str(
        server.kubeconfig)))
    kinds = {(obj["apiVersion"], obj["kind"]) for obj in expected.values()}
    through_python: dict[Key, Obj] = {}
    for api_version, kind in sorted(kinds):
        resource = api.resources.get(api_version=api_version, kind=kind)
        resource_id = f"{resource.name}.{resource.group}" if resource.group else resource.name
        for item in resource.get().to_dict()["items"]:
            meta = item["metadata"]
            through_python[(resource_id, meta.get("namespace") or "", meta["name"])] = \
                normalized(item)
    assert through_python == {k: v for k, v in got.items() if k not in ADVERTISED}


def test_kubectl_apply_loads_every_document(kubectl_binary: str, recording: Path,
                                            tmp_path: Path) -> None:
    file = tmp_path / "snapshot.yaml"
    assert take_snapshot(recording, file, None).returncode == 0
    docs = snapshot.read(file)
    server = start_server(tmp_path / "data", *QUIET, http=True)
    try:
        k = Kubectl(kubectl_binary, server.kubeconfig)
        # as with any manifest that installs a CRD and its objects: kubectl maps every kind
        # before it applies, so the first run installs the CRD and can't map the Widget yet
        first = k.run("apply", "-f", str(file), timeout=300, check=False)
        assert first.returncode == 1
        assert first.stderr.rstrip().endswith('no matches for kind "Widget" in version '
                                              '"example.com/v1"\nensure CRDs are installed first')
        assert len(first.stdout.splitlines()) == len(docs) - 1
        again = k.run("apply", "-f", str(file), timeout=300)
        assert len(again.stdout.splitlines()) == len(docs)
        got = listed_by_kubectl(k)
        for doc in docs:
            obj = doc.object
            meta = obj["metadata"]
            found = [v for key, v in got.items() if key[1:] == (meta.get("namespace", ""),
                                                                meta["name"])
                     and v["kind"] == obj["kind"]]
            assert found, (obj["kind"], meta.get("namespace"), meta["name"])
            assert found[0]["uid"] != doc.uid  # the target's own
    finally:
        assert server.stop() == 0


def serve_from(file: Path, data_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fakeapi.cli", "serve", "--port", "0",
                           "--http", "--data-dir", str(data_dir), "--from", str(file), *QUIET],
                          cwd=ROOT, text=True, capture_output=True, timeout=60)


def test_serve_from_refuses_a_bad_snapshot_and_a_used_data_dir(recording: Path,
                                                               tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n"
                   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: a}\n"
                   "data: {k: [1]}\n")
    refused = serve_from(bad, tmp_path / "new")
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.startswith(f"fakeapi: refusing to start: {bad}: document 2 "
                                     "(ConfigMap a/b) is refused: ")
    assert not (tmp_path / "new" / "events.log").exists()
    good = tmp_path / "good.yaml"
    assert take_snapshot(recording, good, 100).returncode == 0
    used = serve_from(good, recording)
    assert used.returncode == 1
    assert "already holds" in used.stderr and "restoring needs a new data directory" in \
        used.stderr


def test_the_progress_bar_shows_on_a_terminal_only(recording: Path, tmp_path: Path) -> None:
    quiet = take_snapshot(recording, tmp_path / "a.yaml", None)
    assert quiet.returncode == 0
    assert quiet.stderr.count("\n") == 1 and "written to" in quiet.stderr  # no bar in a pipe
    code, seen = stderr_on_a_terminal([sys.executable, "-m", "fakeapi.cli", "snapshot",
                                       str(recording), "-o", str(tmp_path / "b.yaml")])
    assert code == 0
    assert b"reading the log" in seen and b"writing" in seen
