"""The recording's format: the checked-in logs of every format are read the same way (header,
events, actors, request heads), a new log gets a header that a restart never rewrites, and
damaged or future logs are refused with the offset and revision, before or where the reader
reaches them, through the streaming reader, `fakeapi log verify` and a start alike."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.replay import history
from fakeapi.storage import logcheck, recording
from fakeapi.storage.wal import WriteAheadLog
from fakeapi.storage.walformat import (
    FILE_MAGIC,
    RECORD_HEADER,
    WalCorruptError,
    WalDamagedError,
    WalFormatError,
    encode_record,
    scan_file,
)
from tests.support.paths import ROOT

RECORDINGS = ROOT / "tests" / "data" / "recordings"
ADMIN = "kubernetes-admin"


@pytest.fixture(params=["format1", "format2"])
def checked_in(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A copy of one checked-in recording (the reader must not need write access, but a
    start would cut or rewrite the ack file)."""
    shutil.copytree(RECORDINGS / request.param, tmp_path / "data")
    return tmp_path / "data"


def test_checked_in_recordings_read_as_the_run_they_recorded(checked_in: Path) -> None:
    header = recording.read_header(checked_in)
    events = list(recording.events(checked_in))
    assert [e.revision for e in events] == list(range(1, len(events) + 1))
    assert len(events) == 89
    if header.format == 1:
        assert header == recording.Header(format=1, fakeapi="", created="", settings={})
    else:
        assert (header.format, header.created) == (2, "2026-01-01T00:00:00Z")
        assert header.fakeapi
        settings = header.settings
        assert (settings["seed"], settings["clock"], settings["nodes"]) == (7, "virtual", 1)
        assert settings["node_profile"]["name"] == "default"
        assert settings["node_profile"]["drivers"], "the profile's content, not its name"
    admin = [(e.request or {}).get("v", "") + " " + e.resource for e in events
             if e.actor == ADMIN]
    assert admin == ["create namespaces", "create configmaps", "patch configmaps",
                     "patch configmaps", "create pods", "create clocks.emulator.fakeapi.dev",
                     "delete configmaps"]
    first = next(e for e in events if e.actor == ADMIN)
    assert first.request is not None
    assert first.request["m"] == "POST"
    assert first.request["p"].startswith("/api/v1/namespaces?fieldManager=kubectl-create")
    assert "system:masters" in first.request["g"] and "demo" in first.request["b"]
    assert first.request["ct"] == "application/vnd.kubernetes.protobuf"
    advance = next(e for e in events if e.resource.startswith("clocks.") and e.actor == ADMIN)
    assert advance.request is not None and advance.request.get("sub") == "advance"
    actors = {e.actor for e in events}
    assert "system:serviceaccount:kube-system:kube-scheduler" in actors
    pod = [e for e in events if e.resource == "pods"][-1]
    assert pod.object["status"]["phase"] == "Running"
    assert [e.revision for e in recording.events(checked_in, since=80)] == list(range(80, 90))
    state = history.state_at(checked_in, progress=False)
    assert state.store.get("pods", "demo", "web") is not None
    assert state.store.get("configmaps", "demo", "settings") is None
    assert logcheck.verify(checked_in).problem is None


def test_a_restart_keeps_the_header_and_format_of_the_log_it_finds(
        checked_in: Path, tmp_path: Path) -> None:
    before = recording.read_header(checked_in)
    cluster = Cluster(ClusterConfig(data_dir=checked_in, settings={"seed": 99}))
    assert cluster.log.revision >= 89
    cluster.log.flush_now()
    assert cluster.wal is not None
    cluster.wal.close_now()
    assert recording.read_header(checked_in) == before
    assert len(list(recording.events(checked_in))) == cluster.log.revision


def test_a_new_log_records_its_settings_in_the_header(tmp_path: Path) -> None:
    settings = {"seed": 3, "clock": "virtual", "feature_gates": {"DRADeviceTaints": True}}
    cluster = Cluster(ClusterConfig(data_dir=tmp_path, settings=settings))
    assert cluster.wal is not None
    cluster.wal.close_now()
    header = recording.read_header(tmp_path)
    assert (header.format, header.settings) == (2, settings)
    assert header.fakeapi == recording.package_version()
    assert tmp_path.joinpath("events.log").read_bytes().startswith(b"FAKEWAL2")
    records = scan_file(tmp_path / "events.log").records
    assert [e.record() for e in recording.events(tmp_path)] == records


def _log(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(RECORDINGS / "format2", data)
    return data


def _offsets(data: Path) -> list[int]:
    return scan_file(data / "events.log").offsets


def _future_magic(data: bytes, offsets: list[int]) -> bytes:
    return b"FAKEWAL3" + data[8:]


def _future_header(data: bytes, offsets: list[int]) -> bytes:
    return FILE_MAGIC + encode_record(b'{"format":3,"settings":{}}') + data[offsets[0]:]


def _corrupt_middle(data: bytes, offsets: list[int]) -> bytes:
    at = offsets[40] + RECORD_HEADER.size + 5
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1:]


def _truncated(data: bytes, offsets: list[int]) -> bytes:
    return data[:offsets[60] + 7]


def _damaged_header(data: bytes, offsets: list[int]) -> bytes:
    return data[:12] + b"\x00\x00\x00\x00" + data[16:]


# (name, damage, error, what the message says)
BAD = [
    ("future-magic", _future_magic, WalFormatError, ["format 3", "offset 0"]),
    ("future-header", _future_header, WalFormatError, ["format 3", "offset 8"]),
    ("damaged-header", _damaged_header, WalCorruptError, ["header", "offset 8"]),
    ("corrupt-middle", _corrupt_middle, WalDamagedError, ["record 41", "checksum mismatch"]),
    ("truncated", _truncated, WalDamagedError, ["record 61", "acknowledged"]),
]


@pytest.mark.parametrize(("damage", "error", "says"), [b[1:] for b in BAD],
                         ids=[b[0] for b in BAD])
def test_bad_logs_are_refused_with_offset_and_revision(tmp_path: Path, damage, error,
                                                       says: list[str]) -> None:
    data = _log(tmp_path)
    path = data / "events.log"
    damaged = damage(path.read_bytes(), _offsets(data))
    path.write_bytes(damaged)
    with pytest.raises(error) as streamed:
        for _ in recording.events(data):
            pass
    for text in says:
        assert text in str(streamed.value)
    if isinstance(streamed.value, WalDamagedError):
        offset = _offsets(data)[-1] if damage is _truncated else None
        assert f"offset {streamed.value.damage.offset}" in str(streamed.value)
        assert offset is None or streamed.value.damage.offset > offset
        assert logcheck.verify(data).problem is not None
        assert recording.read_header(data).format == 2
    else:
        with pytest.raises(error):
            recording.read_header(data)
        with pytest.raises(error):
            scan_file(path)
    with pytest.raises(error):
        WriteAheadLog.open(path)
    with pytest.raises(history.HistoryError):
        history.state_at(data, progress=False)
    assert path.read_bytes() == damaged, "a refused log is left as it was"


def test_a_torn_unacknowledged_tail_is_left_out_as_a_start_would_cut_it(tmp_path: Path) -> None:
    data = _log(tmp_path)
    path = data / "events.log"
    (data / "events.log.ack").unlink()
    path.write_bytes(path.read_bytes() + encode_record(b"x" * 50)[:30])
    assert len(list(recording.events(data))) == 89


def test_no_log_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(recording.RecordingMissing, match="holds no event log"):
        recording.read_header(tmp_path)
    with pytest.raises(recording.RecordingMissing):
        next(recording.events(tmp_path))
