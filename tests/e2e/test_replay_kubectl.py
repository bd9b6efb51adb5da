"""Record, replay and time travel through the real binaries. A `fakeapi serve --clock virtual
--seed N --data-dir D` process is driven by kubectl v1.37 (the seeds' examples and the
dra-example-driver's quickstart applied, the pods Running, a DeviceFault injected and
removed, an hour of virtual time through the Clock's advance subresource, a pod watch open
throughout); `fakeapi replay D
--check` then finds no divergence, and one changed input (another node profile, a rewritten
DeviceClass body in a copy of the log) fails at the right revision with a field diff.
`--until REV --serve` serves the state before a pod was bound read-only to kubectl; bad
`--until` values and a damaged log are refused before anything starts; the progress bar
shows on a terminal only."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest
import yaml

from fakeapi.replay import history
from tests.support.datadirs import flip_record, write_records
from tests.support.demos import manifest
from tests.support.kubectl import Kubectl
from tests.support.paths import DATA, ROOT
from tests.support.processes import LineReader, start_server, stderr_on_a_terminal
from tests.support.scripted_run import FAULT, QUICKSTART
from tests.support.seeds import SEED_GATES

SEED = "23"
SETTINGS = ("--seed", SEED, "--feature-gates", SEED_GATES)
"""What the recording ran with (a replay reads them from the recording's header)."""
ADVANCE = "/apis/emulator.fakeapi.dev/v1alpha1/clocks/cluster/advance"
CLASS_SELECTOR = "type == 'gpu'"
"""The seed DeviceClass's CEL test, which the changed recording turns into another."""


@dataclasses.dataclass(frozen=True)
class Recorded:
    """A recording's data directory and the revisions the tests name."""

    data_dir: Path
    last: int
    device_class: int
    """The revision of kubectl's apply of the seed DeviceClass (a patch of the driver's)."""
    first_node: int
    """The first Node the emulated kubelets registered."""
    first_bound: int
    """The scheduler's binding of the first pod."""


def advance(k: Kubectl, duration: str, tmp: Path) -> None:
    """POST a ClockAdvance to the Clock's advance subresource with kubectl."""
    body = tmp / "advance.json"
    body.write_text(json.dumps({"apiVersion": "emulator.fakeapi.dev/v1alpha1",
                                "kind": "ClockAdvance", "duration": duration}))
    k("create", "--raw", ADVANCE, "-f", str(body))


def heads(data_dir: Path) -> list[dict]:
    return [orjson.loads(r.partition(b"\n")[0]) for r in history.read_log(data_dir).records]


def first(found: list[dict], test: Callable[[dict], bool]) -> int:
    """The revision of the first event whose head passes `test`."""
    return next(h["r"] for h in found if test(h))


@pytest.fixture(scope="module")
def recording(kubectl_binary: str, tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    root = tmp_path_factory.mktemp("recording")
    server = start_server(root / "data", "--clock", "virtual", *SETTINGS)
    k = Kubectl(kubectl_binary, server.kubeconfig)
    # a watch open across every write: the writes' turns never wait on it
    watch = subprocess.Popen([kubectl_binary, "--kubeconfig", str(server.kubeconfig), "get",
                              "pods", "-A", "--watch", "-o", "name"], text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert watch.stdout is not None
    watched = LineReader(watch.stdout)
    try:
        scenarios = {s["name"]: s for s in yaml.safe_load(
            (DATA / "kubelet_emu" / "demos.yaml").read_text())}
        files = sorted((DATA / "seeds").glob("*.yaml"))
        for name in QUICKSTART:
            files.append(root / f"{name}.yaml")
            files[-1].write_text(yaml.safe_dump_all(manifest(scenarios[name])))
        for file in files:
            k("apply", "-f", str(file))
            advance(k, "1s", root)
        advance(k, "30s", root)
        pods = json.loads(k("get", "pods", "-A", "-o", "json"))["items"]
        demo = [p for p in pods if p["metadata"]["namespace"] in QUICKSTART]
        assert demo and {p["status"].get("phase") for p in demo} == {"Running"}
        fault = root / "fault.yaml"
        fault.write_text(yaml.safe_dump(FAULT))
        k("create", "-f", str(fault))
        advance(k, "60s", root)
        k("delete", "-f", str(fault))
        advance(k, "1h", root)
        names = {f"pod/{p['metadata']['name']}" for p in demo}
        watched.wait_for(lambda lines: names <= set(lines))
    finally:
        watch.terminate()
        watch.wait(10)
        assert server.stop() == 0
    found = heads(root / "data")
    return Recorded(
        data_dir=root / "data", last=len(found),
        device_class=first(found, lambda h: h["res"] == "deviceclasses.resource.k8s.io"
                           and h["a"] == "kubernetes-admin"),
        first_node=first(found, lambda h: h["res"] == "nodes"),
        first_bound=first(found, lambda h: h["res"] == "pods" and h.get("q", {}).get("sub")
                          == "binding"))


def replay(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`fakeapi replay DIR ARGS` in a process of its own."""
    return subprocess.run([sys.executable, "-m", "fakeapi.cli", "replay", str(data_dir), *args],
                          cwd=ROOT, text=True, capture_output=True, timeout=180)


def test_a_replay_of_the_recording_finds_no_divergence(recording: Recorded) -> None:
    done = replay(recording.data_dir, "--check")
    assert done.returncode == 0, done.stdout + done.stderr
    summary, verdict = done.stdout.splitlines()
    assert summary.startswith("replayed ") and f"events, revision {recording.last}," in summary
    assert verdict == f"no divergence in {recording.last} events"


def rewrite_device_class(recording: Recorded, copy: Path) -> None:
    """A copy of the recording whose DeviceClass POST selects other devices."""
    records = history.read_log(recording.data_dir).records
    head, _, raw = records[recording.device_class - 1].partition(b"\n")
    h = orjson.loads(head)
    assert CLASS_SELECTOR in h["q"]["b"]
    h["q"]["b"] = h["q"]["b"].replace(CLASS_SELECTOR, "type == 'tpu'")
    records[recording.device_class - 1] = orjson.dumps(h) + b"\n" + raw
    write_records(copy, records, like=recording.data_dir)


@pytest.mark.parametrize("change", ["node profile", "DeviceClass body"])
def test_a_changed_input_diverges_at_its_revision_with_a_field_diff(
        recording: Recorded, tmp_path: Path, change: str) -> None:
    if change == "node profile":
        done = replay(recording.data_dir, "--check", "--node-profile", "gpu")
        revision = recording.first_node
        diff = '    ~ metadata.annotations["emulator.fakeapi.dev/profile"]: "default" -> "gpu"'
    else:
        rewrite_device_class(recording, tmp_path / "changed")
        done = replay(tmp_path / "changed", "--check")
        revision = recording.device_class
        diff = ("    ~ spec.selectors[0].cel.expression: \"device.driver == 'gpu.example.com' "
                "&& device.attributes['gpu.example.com'].type == 'gpu'\" -> \"device.driver "
                "== 'gpu.example.com' && device.attributes['gpu.example.com'].type == 'tpu'\"")
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout.splitlines()
    assert out[1].startswith(f"divergence at revision {revision}: "), done.stdout
    assert any(line.startswith(diff) for line in out[2:]), done.stdout


@pytest.fixture
def time_travel(recording: Recorded, kubectl_binary: str, tmp_path: Path
                ) -> Iterator[Kubectl]:
    """`fakeapi replay --until (first binding - 1) --serve`, and kubectl for it."""
    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen(
        [sys.executable, "-m", "fakeapi.cli", "replay", str(recording.data_dir),
         "--until", str(recording.first_bound - 1), "--serve", "--kubeconfig", str(kubeconfig)],
        cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    lines = LineReader(proc.stdout)
    try:
        seen = lines.wait_for(lambda got: bool(got) and got[-1].startswith("fakeapi ready at "),
                              timeout=120)
        assert seen[-1].endswith(f" kubeconfig={kubeconfig}"), seen
        assert f"serving revision {recording.first_bound - 1} read-only" in seen
        yield Kubectl(kubectl_binary, kubeconfig)
    finally:
        proc.terminate()
        assert proc.wait(30) == 0


def test_until_a_revision_before_the_binding_serves_the_pod_pending_read_only(
        recording: Recorded, time_travel: Kubectl) -> None:
    bound = heads(recording.data_dir)[recording.first_bound - 1]
    pod = json.loads(time_travel("get", "pod", "-n", bound["ns"], bound["n"], "-o", "json"))
    assert pod["status"].get("phase") == "Pending" and "nodeName" not in pod["spec"]
    assert pod["metadata"]["resourceVersion"] != str(recording.first_bound)
    refused = time_travel.run("delete", "pod", "-n", bound["ns"], bound["n"], check=False)
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        "Error from server (MethodNotAllowed): the server does not allow this method on the "
        f"requested resource: it serves the replay of {recording.data_dir} read-only as it was "
        f"at revision {recording.first_bound - 1} ({bound['ts']})")


@pytest.mark.parametrize(("until", "message"), [
    ("999999", "fakeapi: revision 999999 is beyond the end of the log: it ends at revision "
               "{last}"),
    ("0", "fakeapi: revision 0 is not in the log: its revisions run from 1 to {last}"),
    ("2030-01-01T00:00:00Z", "fakeapi: time 2030-01-01T00:00:00Z is beyond the end of the "
                             "recording: it ends at {end} (revision {last})"),
    ("2025-01-01T00:00:00Z", "fakeapi: time 2025-01-01T00:00:00Z is before the recording: it "
                             "starts at 2026-01-01T00:00:00Z"),
    ("noon", "fakeapi: invalid --until 'noon': neither a revision (a number) nor an RFC 3339 "
             "time such as 2026-01-01T00:10:00Z (parsing time \"noon\" as "
             "\"2006-01-02T15:04:05Z07:00\": cannot parse \"noon\" as \"2006\")"),
])
def test_a_bad_until_is_refused_before_anything_starts(recording: Recorded, until: str,
                                                       message: str, tmp_path: Path) -> None:
    end = heads(recording.data_dir)[-1]["ts"]
    done = replay(recording.data_dir, "--until", until, "--data-dir", str(tmp_path / "out"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.strip() == message.format(last=recording.last, end=end)
    assert not (tmp_path / "out").exists()


def test_a_damaged_log_is_refused_and_never_half_replayed(recording: Recorded,
                                                          tmp_path: Path) -> None:
    copy = tmp_path / "damaged"
    shutil.copytree(recording.data_dir, copy, ignore=shutil.ignore_patterns("nodes", "pki"))
    offset = flip_record(copy, 40)
    done = replay(copy, "--check", "--data-dir", str(tmp_path / "out"))
    assert (done.returncode, done.stdout) == (1, "")
    assert f"is DAMAGED at offset {offset:,} (revision 40)" in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()


def test_the_progress_bar_shows_on_a_terminal_only(recording: Recorded) -> None:
    quiet = replay(recording.data_dir)
    assert quiet.returncode == 0 and quiet.stderr == ""  # no bar in a pipe
    code, seen = stderr_on_a_terminal([sys.executable, "-m", "fakeapi.cli", "replay",
                                       str(recording.data_dir)])
    assert code == 0 and b"replaying" in seen and b"input" in seen


def test_a_compacted_recording_replays_and_travels_from_its_base(
        recording: Recorded, kubectl_binary: str, tmp_path: Path) -> None:
    """Compacted just before the DeviceFault's create, a replay starts from the base's
    objects, sends the inputs after it and keeps its own recording with that base; time
    travel serves a revision after the base; one before it is refused."""
    found = heads(recording.data_dir)
    fault = first(found, lambda h: h["res"] == "devicefaults.emulator.fakeapi.dev")
    inputs_after = sum(1 for h in found if h["r"] >= fault and h["a"] == "kubernetes-admin"
                       and "m" in h.get("q", {}))
    copy = tmp_path / "compacted"
    shutil.copytree(recording.data_dir, copy)
    compacted = subprocess.run([sys.executable, "-m", "fakeapi.cli", "log", "compact", str(copy),
                                "--at", str(fault - 1)], capture_output=True, text=True,
                               check=False)
    assert compacted.returncode == 0, compacted.stderr
    out = tmp_path / "out"
    done = replay(copy, "--data-dir", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"replayed {inputs_after} inputs of {copy}: "), done.stdout
    replayed = history.state_at(out, progress=False).store
    assert replayed.get("devicefaults.emulator.fakeapi.dev", "", "gpu-0-ecc") is None
    assert replayed.get("deviceclasses.resource.k8s.io", "", "gpu.example.com") is not None
    assert history.read_log(out).base == fault - 1

    early = replay(copy, "--until", str(fault - 2))
    assert early.returncode == 2
    assert f"revision {fault - 2} was compacted away" in early.stderr
    server = subprocess.Popen(
        [sys.executable, "-m", "fakeapi.cli", "replay", str(copy), "--until", str(fault),
         "--serve", "--kubeconfig", str(tmp_path / "kubeconfig")],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert server.stdout is not None
        LineReader(server.stdout).wait_for(lambda lines: any(
            line.startswith("fakeapi ready at") for line in lines), timeout=120)
        k = Kubectl(kubectl_binary, tmp_path / "kubeconfig")
        assert k("get", "devicefaults", "-o", "name").split() == [
            "devicefault.emulator.fakeapi.dev/gpu-0-ecc"]
    finally:
        server.terminate()
        assert server.wait(30) == 0
