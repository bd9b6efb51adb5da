"""`fakeapi log verify` and `fakeapi log repair` on real log files: what they report, what they
cut and keep, and the exit codes of the CLI."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from fakeapi.cli import main as cli
from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.storage import logcheck
from fakeapi.storage.wal import WriteAheadLog
from fakeapi.storage.walformat import ack_path, encode_record, new_file, read_ack
from tests.support.datadirs import flip_record, make_log


def run_cli(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_sound_log_verifies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    last = make_log(tmp_path)
    report = logcheck.verify(tmp_path)
    assert (report.revisions, report.problem) == (last, None)
    assert report.ack is not None and report.ack.records == last
    code, out, _ = run_cli("log", "verify", str(tmp_path), capsys=capsys)
    assert code == 0
    assert f"revisions 1..{last} intact" in out and out.rstrip().endswith("OK")


def test_a_flipped_byte_is_reported_with_offset_revision_and_the_way_out(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    last = make_log(tmp_path)
    damaged = last - 2
    offset = flip_record(tmp_path, damaged)
    before = logcheck.log_path(tmp_path).read_bytes()
    code, out, _ = run_cli("log", "verify", str(tmp_path), capsys=capsys)
    assert code == 1
    assert f"DAMAGED at offset {offset:,} (revision {damaged}): checksum mismatch" in out
    assert "2 intact records follow" in out
    assert f"fakeapi log repair {tmp_path} --truncate-at {damaged - 1}" in out
    assert logcheck.log_path(tmp_path).read_bytes() == before, "verify changes nothing"

    # the server refuses it the same way
    code, _, err = run_cli("serve", "--http", "--port", "0", "--data-dir", str(tmp_path),
                           capsys=capsys)
    assert code == 1
    assert "refusing to start" in err and f"offset {offset:,} (revision {damaged})" in err
    assert f"fakeapi log verify {tmp_path}" in err


def test_repair_keeps_what_it_is_told_and_saves_the_rest(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    last = make_log(tmp_path)
    flip_record(tmp_path, last - 1)
    path = logcheck.log_path(tmp_path)
    before = path.read_bytes()
    keep = last - 2

    code, _, err = run_cli("log", "repair", str(tmp_path), "--truncate-at", str(last),
                           capsys=capsys)
    assert code == 1 and f"the most that can be kept is --truncate-at {keep}" in err
    assert path.read_bytes() == before, "a refused repair changes nothing"

    code, out, _ = run_cli("log", "repair", str(tmp_path), "--truncate-at", str(keep),
                           capsys=capsys)
    assert code == 0
    saved = tmp_path / f"events.log.cut-{keep}"
    assert f"kept revisions 1..{keep}" in out and str(saved) in out
    assert path.read_bytes() + saved.read_bytes() == before, "nothing lost: cut = saved"
    ack = read_ack(path)
    assert ack is not None and ack.records == keep
    assert logcheck.verify(tmp_path).problem is None

    cluster = Cluster(ClusterConfig(data_dir=tmp_path, seed=1))  # starts again
    assert cluster.store.get("configmaps", "default", "cm-0") is not None
    assert cluster.wal is not None
    cluster.wal.close_now()


def test_repair_can_rewind_a_sound_log_and_a_second_cut_gets_its_own_file(
        tmp_path: Path) -> None:
    last = make_log(tmp_path)
    first = logcheck.repair(tmp_path, last - 1)
    assert first.kept == last - 1 and first.saved is not None
    again = logcheck.repair(tmp_path, last - 1)
    assert again.saved is None and again.cut_bytes == 0, "nothing left to cut"
    assert make_log(tmp_path, configmaps=5) == last, "cm-4 is written again at the cut revision"
    second = logcheck.repair(tmp_path, last - 1)
    assert second.saved is not None and second.saved != first.saved
    assert first.saved.read_bytes() != b"" and second.saved.read_bytes() != b""


async def test_repair_refuses_a_log_a_server_has_open(tmp_path: Path) -> None:
    make_log(tmp_path)
    wal, _ = WriteAheadLog.open(logcheck.log_path(tmp_path))
    with pytest.raises(logcheck.RepairError, match="running server"):
        logcheck.repair(tmp_path, 1)
    await wal.close()


def test_a_torn_unacknowledged_tail_is_not_damage(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    last = make_log(tmp_path)
    path = logcheck.log_path(tmp_path)
    with path.open("ab") as f:
        f.write(encode_record(b"x" * 100)[:50])
    code, out, _ = run_cli("log", "verify", str(tmp_path), capsys=capsys)
    assert code == 0 and "the next start cuts it" in out
    cluster = Cluster(ClusterConfig(data_dir=tmp_path, seed=1))
    assert cluster.log.revision == last
    assert cluster.wal is not None
    asyncio.run(cluster.close())


def test_an_intact_record_that_is_not_the_next_event_is_damage(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = logcheck.log_path(tmp_path)
    path.write_bytes(new_file() + encode_record(b"not an event"))
    ack_path(path).unlink(missing_ok=True)
    report = logcheck.verify(tmp_path)
    assert report.problem is not None and report.problem.refused
    assert report.problem.revision == 1 and "not an event record" in report.problem.why
    code, _, err = run_cli("serve", "--http", "--port", "0", "--data-dir", str(tmp_path),
                           capsys=capsys)
    assert code == 1 and "revision 1" in err


def test_a_file_that_is_no_log_is_exit_2(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    logcheck.log_path(tmp_path).write_text("apiVersion: v1\n")
    code, _, err = run_cli("log", "verify", str(tmp_path), capsys=capsys)
    assert code == 2 and "not a fakeapi WAL file" in err


@pytest.mark.parametrize("acknowledged", [True, False], ids=["acknowledged", "past-the-ack"])
def test_the_refusal_says_whether_acknowledged_writes_are_at_stake(
        tmp_path: Path, acknowledged: bool) -> None:
    last = make_log(tmp_path)
    path = logcheck.log_path(tmp_path)
    with path.open("ab") as f:  # intact records past the ack mark, the first no event
        f.write(encode_record(b"not an event") + encode_record(b"another"))
    if acknowledged:
        damaged = last - 1
        flip_record(tmp_path, damaged)
    text = logcheck.refusal(tmp_path)
    report = logcheck.verify(tmp_path)
    assert report.problem is not None and report.problem.refused
    assert report.problem.acknowledged is acknowledged
    assert ("would drop acknowledged writes" in text) is acknowledged
    assert ("no acknowledged write is lost" in text) is not acknowledged
    assert f"--truncate-at {report.problem.revision - 1}" in text
