"""A damaged log, end to end: the real server refuses it with the offset, the revision and the
way out; `fakeapi log verify` and `fakeapi log repair` do what they say; kubectl sees the
repaired state; an unacknowledged torn tail restarts cleanly, and a log shortened behind the
server's back is refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from fakeapi.storage.logcheck import verify
from tests.support.kubectl import Kubectl
from tests.support.paths import ROOT
from tests.support.processes import ServerProcess, start_server

CONFIGMAPS = 20
QUIET = ("--nodes", "0", "--no-adopt-nodes")
"""No emulated nodes: their heartbeats would add events to the log under test."""


def fakeapi(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the fakeapi CLI as a user would."""
    return subprocess.run([sys.executable, "-m", "fakeapi.cli", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)


def seeded_data_dir(tmp_path: Path, kubectl_binary: str) -> tuple[Path, Kubectl]:
    """A data directory with CONFIGMAPS ConfigMaps written through kubectl, server stopped."""
    data = tmp_path / "data"
    srv = start_server(data, *QUIET)
    kubectl = Kubectl(kubectl_binary, srv.kubeconfig)
    items = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i:02d}"},
              "data": {"i": str(i)}} for i in range(CONFIGMAPS)]
    kubectl("apply", "-f", "-", input=yaml.safe_dump_all(items))
    assert srv.stop() == 0
    return data, kubectl


def configmap_names(srv: ServerProcess, kubectl_binary: str) -> list[str]:
    out = Kubectl(kubectl_binary, srv.kubeconfig)("get", "configmaps", "-o", "name")
    return [line.removeprefix("configmap/") for line in out.split()]


def test_a_flipped_byte_refuses_to_start_until_repaired(tmp_path: Path,
                                                        kubectl_binary: str) -> None:
    data, _ = seeded_data_dir(tmp_path, kubectl_binary)
    log = data / "events.log"
    report = verify(data)
    # damage the record of the 11th ConfigMap, in the middle of the file
    victim = report.revisions - CONFIGMAPS + 11
    offset = report.scan.offsets[victim - 1]
    raw = bytearray(log.read_bytes())
    raw[offset + 40] ^= 0x01
    log.write_bytes(bytes(raw))

    refused = fakeapi("serve", "--port", "0", "--data-dir", str(data))
    assert refused.returncode == 1
    assert "fakeapi ready" not in refused.stdout
    assert f"DAMAGED at offset {offset:,} (revision {victim})" in refused.stderr
    assert f"fakeapi log verify {data}" in refused.stderr
    assert f"fakeapi log repair {data} --truncate-at {victim - 1}" in refused.stderr
    assert log.read_bytes() == bytes(raw), "a refused log is left exactly as it was"

    verified = fakeapi("log", "verify", str(data))
    assert verified.returncode == 1 and f"offset {offset:,}" in verified.stdout
    repaired = fakeapi("log", "repair", str(data), "--truncate-at", str(victim - 1))
    assert repaired.returncode == 0, repaired.stderr
    saved = data / f"events.log.cut-{victim - 1}"
    assert log.read_bytes() + saved.read_bytes() == bytes(raw)
    assert fakeapi("log", "verify", str(data)).returncode == 0

    srv = start_server(data, *QUIET)
    try:
        assert configmap_names(srv, kubectl_binary) == [f"cm-{i:02d}" for i in range(10)]
    finally:
        assert srv.stop() == 0


def test_a_torn_unacknowledged_tail_restarts_cleanly(tmp_path: Path,
                                                     kubectl_binary: str) -> None:
    data, _ = seeded_data_dir(tmp_path, kubectl_binary)
    log = data / "events.log"
    good = log.read_bytes()
    # what a write interrupted by kill -9 leaves: the front half of one more record
    last = verify(data).scan.offsets[-1]
    log.write_bytes(good + good[last:][: (len(good) - last) // 2])
    srv = start_server(data, *QUIET, "--log-level", "INFO")
    try:
        assert len(configmap_names(srv, kubectl_binary)) == CONFIGMAPS
    finally:
        assert srv.stop() == 0
    assert srv.proc.stderr is not None
    err = srv.proc.stderr.read()
    assert "cut an unacknowledged torn final write" in err and " INFO " in err
    assert " WARNING " not in err and " ERROR " not in err
    # the torn half is gone; what follows are the restarted server's own writes (the
    # `kubernetes` Endpoints name its new port), every one of them sound
    assert log.read_bytes().startswith(good)
    assert verify(data).problem is None


def test_a_log_shortened_behind_the_servers_back_is_refused(tmp_path: Path,
                                                            kubectl_binary: str) -> None:
    data, _ = seeded_data_dir(tmp_path, kubectl_binary)
    log = data / "events.log"
    with log.open("r+b") as f:  # an external truncation drops the last acknowledged record
        f.truncate(log.stat().st_size - 10)
    refused = fakeapi("serve", "--port", "0", "--data-dir", str(data))
    assert refused.returncode == 1
    assert "refusing to start" in refused.stderr and "acknowledged" in refused.stderr
