"""The recording served by a running `fakeapi serve`: kubectl v1.37 reads
/debug/fakeapi/log as the admin and is refused as another user (RBAC on the non-resource
URL, upstream's 403 Status), a bad query is a 400, `fakeapi log show --kubeconfig` lists
from it and `--follow` sees a new kubectl write as it happens; the log's header holds the
settings the server was started with."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakeapi.storage import recording
from tests.support.kubectl import Kubectl, token_kubectl
from tests.support.paths import ROOT
from tests.support.processes import LineReader, ServerProcess, start_server

TOKENS = 'alice-token,alice,1001,"dev"\n'
PATH = "/debug/fakeapi/log"


@pytest.fixture
def live(tmp_path: Path, kubectl_binary: str) -> Iterator[tuple[ServerProcess, Kubectl]]:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(TOKENS)
    srv = start_server(tmp_path / "data", "--clock", "virtual", "--nodes", "0", "--seed", "3",
                       "--token-auth-file", str(tokens))
    try:
        yield srv, Kubectl(kubectl_binary, srv.kubeconfig)
    finally:
        assert srv.stop() == 0


def fakeapi(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fakeapi.cli", *argv], cwd=ROOT, text=True,
                          capture_output=True, timeout=60)


def test_kubectl_reads_the_log_as_admin_only(live: tuple[ServerProcess, Kubectl]) -> None:
    srv, k = live
    k("create", "configmap", "one", "--from-literal=a=1")
    lines = k("get", "--raw", PATH).splitlines()
    entries = [json.loads(line) for line in lines]
    assert [e["revision"] for e in entries] == list(range(1, len(entries) + 1))
    mine = [e for e in entries if e["resource"] == "configmaps" and e["name"] == "one"]
    assert len(mine) == 1 and mine[0]["actor"] == "kubernetes-admin"
    assert mine[0]["object"]["data"] == {"a": "1"} and mine[0]["request"]["m"] == "POST"
    only = [json.loads(line) for line in k(
        "get", "--raw", PATH + "?kind=cm&name=one&object=false&diff=true").splitlines()]
    assert [(e["name"], e["diff"], "object" in e) for e in only] == [("one", ["created"], False)]

    alice = token_kubectl(k, "alice-token")
    refused = alice.run("get", "--raw", PATH, check=False)
    assert refused.returncode == 1
    assert ('Error from server (Forbidden): forbidden: User "alice" cannot get path '
            f'"{PATH}"') in refused.stderr
    bad = k.run("get", "--raw", PATH + "?since=yesterday", check=False)
    assert bad.returncode == 1 and "Error from server (BadRequest)" in bad.stderr
    assert "invalid --since 'yesterday'" in bad.stderr

    listed = fakeapi("log", "show", "--kubeconfig", str(srv.kubeconfig), "--kind", "cm",
                     "--name", "one")
    assert listed.returncode == 0, listed.stderr
    rows = [line.split() for line in listed.stdout.splitlines()]
    assert rows[0][0] == "REVISION" and rows[1][2:] == ["kubernetes-admin", "create",
                                                         "configmaps", "default/one"]
    as_alice = fakeapi("log", "show", "--kubeconfig", str(alice.kubeconfig))
    assert as_alice.returncode == 2 and "Error from server (Forbidden)" in as_alice.stderr
    beyond = fakeapi("log", "show", "--kubeconfig", str(srv.kubeconfig), "--until", "99999")
    assert beyond.returncode == 2 and "beyond the end of the log" in beyond.stderr

    settings = recording.read_header(srv.data_dir).settings
    assert {k: settings[k] for k in ("seed", "clock", "nodes", "components", "adopt_nodes",
                                     "feature_gates")} == {
        "seed": 3, "clock": "virtual", "nodes": 0, "components": "*", "adopt_nodes": True,
        "feature_gates": {}}
    assert settings["node_profile"]["name"] == "default" and settings["node_profile"]["drivers"]


@pytest.mark.parametrize("via", ["kubeconfig", "dir"])
def test_follow_sees_a_new_write(live: tuple[ServerProcess, Kubectl], via: str) -> None:
    srv, k = live
    target = (["--kubeconfig", str(srv.kubeconfig)] if via == "kubeconfig"
              else [str(srv.data_dir)])
    follower = subprocess.Popen(
        [sys.executable, "-m", "fakeapi.cli", "log", "show", "--follow", *target, "--kind",
         "configmaps", "-n", "default", "-o", "json"],
        cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert follower.stdout is not None
    try:
        lines = LineReader(follower.stdout)
        k("create", "configmap", "later", "--from-literal=b=2")
        seen = lines.wait_for(lambda got: any('"later"' in line for line in got))
        entry = json.loads(next(line for line in seen if '"later"' in line))
        assert entry["object"]["data"] == {"b": "2"} and entry["actor"] == "kubernetes-admin"
        k("delete", "configmap", "later")
        lines.wait_for(lambda got: any('"DELETED"' in line for line in got))
    finally:
        follower.terminate()
        follower.wait(10)
