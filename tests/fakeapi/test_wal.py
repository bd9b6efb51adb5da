"""Tests for the on-disk write-ahead log: framing, torn-tail recovery, group commit, crashes."""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from fakeapi.storage import walformat
from fakeapi.storage.wal import WalClosedError, WriteAheadLog
from fakeapi.storage.walformat import (
    FILE_MAGIC,
    RECORD_HEADER,
    WalCorruptError,
    WalDamagedError,
    WalError,
    encode_record,
    new_file,
)
from tests.support.faults import DiskFaults

ROOT = Path(__file__).resolve().parents[2]
GOOD = [b'{"type":"ADDED","rv":1}', b"", b"x" * 5000]
START = new_file()
"""What a new WAL file starts with: the magic and the (default) header record."""


def write_good(path: Path, payloads: list[bytes]) -> int:
    """Create a WAL holding `payloads` through the public API; return the file size."""
    wal, records = WriteAheadLog.open(path)
    assert records == []
    for p in payloads:
        wal.append(p)
    wal.close_now()
    return path.stat().st_size


def reopen(path: Path) -> list[bytes]:
    """Open, read everything, close."""
    wal, records = WriteAheadLog.open(path)
    wal.close_now()
    return records


# -- framing and round trips ---------------------------------------------------------------


@pytest.mark.parametrize(
    "payloads",
    [
        [],
        [b""],
        [b"a"],
        GOOD,
        [bytes(range(256)) * 40, b"\x00" * 100, RECORD_HEADER.pack(b"\xe7EV\x01", 0, 0)],
        [f'{{"n":{i}}}'.encode() for i in range(1000)],
    ],
    ids=["none", "empty", "one-byte", "mixed", "binary-lookalikes", "many"],
)
async def test_round_trip(tmp_path: Path, payloads: list[bytes]) -> None:
    path = tmp_path / "events.wal"
    wal, records = WriteAheadLog.open(path)
    assert records == []
    seqs = [wal.append(p) for p in payloads]
    assert seqs == list(range(1, len(payloads) + 1))
    if seqs:
        await wal.sync(seqs[-1])
    assert wal.durable_seq == len(payloads)
    await wal.close()
    assert path.read_bytes() == START + b"".join(encode_record(p) for p in payloads)
    assert reopen(path) == payloads


async def test_append_is_buffered_and_seq_continues_after_reopen(tmp_path: Path) -> None:
    path = tmp_path / "events.wal"
    write_good(path, GOOD)
    wal, records = WriteAheadLog.open(path)
    size = path.stat().st_size
    seq = wal.append(b"next")
    assert seq == len(records) + 1 == 4
    assert path.stat().st_size == size, "append must not touch the file"
    assert (wal.last_seq, wal.durable_seq) == (4, 3)
    await wal.sync(seq)
    assert path.stat().st_size == size + len(encode_record(b"next"))
    await wal.close()
    assert reopen(path) == [*GOOD, b"next"]


def test_oversized_record_is_rejected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(walformat, "MAX_RECORD_BYTES", 20)  # above the header record's 12
    wal, _ = WriteAheadLog.open(tmp_path / "events.wal")
    with pytest.raises(ValueError, match="exceeds 20"):
        wal.append(b"x" * 21)
    assert wal.last_seq == 0
    wal.close_now()


def test_one_record_limit_governs_the_writer_and_the_readers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The limit lives in `walformat` alone and both halves read it when they run, so a
    record written under a larger limit is one the readers refuse under a smaller one."""
    path = tmp_path / "events.wal"
    write_good(path, [b"x" * 21])
    monkeypatch.setattr(walformat, "MAX_RECORD_BYTES", 20)
    why = "record length 21 is impossible"
    assert walformat.next_record(encode_record(b"x" * 21), 0) == (None, 0, why)
    assert walformat.scan_file(path).damage is not None
    with pytest.raises(WalDamagedError, match=why):
        WriteAheadLog.open(path)


# -- torn tails ------------------------------------------------------------------------------

NEXT = encode_record(b'{"type":"MODIFIED","rv":4}')


def flip(data: bytes, index: int) -> bytes:
    """`data` with the byte at `index` inverted."""
    return data[:index] + bytes([data[index] ^ 0xFF]) + data[index + 1 :]


def header(length: int, crc: int) -> bytes:
    """A record header with the right magic and arbitrary fields."""
    return RECORD_HEADER.pack(b"\xe7EV\x01", length, crc)


# (id, damage applied to the cleanly closed file's bytes, how many GOOD records survive with
# the ack file / with the framing alone (ack file gone); None: the open is refused)
DAMAGES: list[tuple[str, Callable[[bytes], bytes], int | None, int | None]] = [
    ("cut-inside-magic", lambda d: d + NEXT[:2], 3, 3),
    ("cut-inside-header", lambda d: d + NEXT[:7], 3, 3),
    ("header-only", lambda d: d + NEXT[: RECORD_HEADER.size], 3, 3),
    ("cut-inside-payload", lambda d: d + NEXT[:-3], 3, 3),
    ("flipped-payload-byte", lambda d: d + flip(NEXT, len(NEXT) - 5), 3, None),
    ("flipped-length-byte", lambda d: d + flip(NEXT, 4), 3, 3),
    ("flipped-crc-byte", lambda d: d + flip(NEXT, 9), 3, None),
    ("huge-length", lambda d: d + header(0xFFFFFFFF, 0) + b"x" * 64, 3, None),
    ("trailing-zeros", lambda d: d + b"\x00" * 4096, 3, 3),
    ("trailing-garbage", lambda d: d + bytes((i * 37 + 11) % 256 for i in range(777)), 3, None),
    ("empty-record-bad-crc", lambda d: d + header(0, 1), 3, None),
    ("zeros-after-partial-record", lambda d: d + NEXT[:20] + b"\x00" * 512, 3, None),
    ("last-good-record-flipped", lambda d: flip(d, len(d) - 1), None, None),
    ("last-good-record-truncated", lambda d: d[:-1], None, 2),
    ("last-record-dropped", lambda d: d[: -len(encode_record(GOOD[-1]))], None, 2),
]


@pytest.mark.parametrize("with_ack", [True, False], ids=["ack", "framing-only"])
@pytest.mark.parametrize(
    ("damage", "with_ack_survivors", "framing_survivors"), [t[1:] for t in DAMAGES],
    ids=[t[0] for t in DAMAGES],
)
async def test_only_an_unacknowledged_torn_final_write_is_cut(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    damage: Callable[[bytes], bytes],
    with_ack_survivors: int | None,
    framing_survivors: int | None,
    with_ack: bool,
) -> None:
    path = tmp_path / "events.wal"
    write_good(path, GOOD)
    if not with_ack:
        walformat.ack_path(path).unlink()
    damaged = damage(path.read_bytes())
    path.write_bytes(damaged)
    survivors = with_ack_survivors if with_ack else framing_survivors

    if survivors is None:
        with pytest.raises(WalDamagedError) as refused:
            WriteAheadLog.open(path)
        assert path.read_bytes() == damaged, "a refused file must be left as it was"
        good_end = len(START) + sum(len(encode_record(p)) for p in GOOD[:2])
        assert refused.value.damage.offset in (good_end, good_end + len(encode_record(GOOD[2])))
        assert f"offset {refused.value.damage.offset}" in str(refused.value)
        return
    expected = GOOD[:survivors]
    good_size = len(START) + sum(len(encode_record(p)) for p in expected)
    with caplog.at_level(logging.INFO, logger="fakeapi.storage.wal"):
        wal, records = WriteAheadLog.open(path)
    assert records == expected
    assert path.stat().st_size == good_size, "torn tail must be cut on disk"
    if len(damaged) > good_size:
        assert "cut an unacknowledged torn final write" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert walformat.read_ack(path) == walformat.Ack(good_size, survivors)

    seq = wal.append(b"after-recovery")
    assert seq == survivors + 1
    await wal.sync(seq)
    await wal.close()
    assert reopen(path) == [*expected, b"after-recovery"]


def test_every_cut_point_recovers_exactly_the_whole_records_by_framing(tmp_path: Path) -> None:
    payloads = [b"", b"a", b"bb" * 7, b"c" * 300, b"{}"]
    path = tmp_path / "full.wal"
    write_good(path, payloads)
    full = path.read_bytes()
    ends = [len(START)]
    for p in payloads:
        ends.append(ends[-1] + len(encode_record(p)))
    cut_path = tmp_path / "cut.wal"
    for cut in range(len(FILE_MAGIC), len(full) + 1):
        cut_path.write_bytes(full[:cut])  # a copy without its ack file: framing decides
        whole = sum(1 for end in ends[1:] if end <= cut)
        assert reopen(cut_path) == payloads[:whole], f"cut at {cut}"
        assert cut_path.stat().st_size == ends[whole]
        walformat.ack_path(cut_path).unlink()


def test_a_cut_into_acknowledged_records_is_refused_at_every_point(tmp_path: Path) -> None:
    payloads = [b"a", b"bb" * 7, b"c" * 30]
    path = tmp_path / "events.wal"
    write_good(path, payloads)
    full = path.read_bytes()
    for cut in range(len(FILE_MAGIC), len(full)):
        path.write_bytes(full[:cut])
        with pytest.raises(WalDamagedError, match="acknowledged"):
            WriteAheadLog.open(path)
    path.write_bytes(full)
    assert reopen(path) == payloads


def test_mid_log_corruption_is_refused_with_its_offset(tmp_path: Path) -> None:
    payloads = [f"record-{i}".encode() * 10 for i in range(5)]
    path = tmp_path / "events.wal"
    write_good(path, payloads)
    data = path.read_bytes()
    second = len(START) + len(encode_record(payloads[0]))
    damaged = flip(data, second + RECORD_HEADER.size + 3)
    path.write_bytes(damaged)

    with pytest.raises(WalDamagedError) as refused:
        WriteAheadLog.open(path)
    damage = refused.value.damage
    assert (damage.offset, damage.record, damage.intact_after) == (second, 2, 3)
    assert damage.acknowledged and not damage.torn
    assert damage.why == "checksum mismatch"
    assert path.read_bytes() == damaged
    assert list(tmp_path.glob("events.wal.*")) == [walformat.ack_path(path)]
    scan = walformat.scan_file(path)
    assert scan.records == payloads[:1] and scan.damage == damage


def test_the_ack_file_follows_every_flush(tmp_path: Path) -> None:
    path = tmp_path / "events.wal"
    wal, _ = WriteAheadLog.open(path)
    assert walformat.read_ack(path) == walformat.Ack(len(START), 0)
    wal.append(b"one")
    assert walformat.read_ack(path) == walformat.Ack(len(START), 0), "append alone acks nothing"
    wal.flush_now()
    size = len(START) + len(encode_record(b"one"))
    assert walformat.read_ack(path) == walformat.Ack(size, 1)
    wal.close_now()
    walformat.ack_path(path).write_bytes(b"garbage")
    assert walformat.read_ack(path) is None  # a damaged ack file counts as none
    assert reopen(path) == [b"one"]
    assert walformat.read_ack(path) == walformat.Ack(size, 1), "the open rewrites it"


@pytest.mark.parametrize(
    "content",
    [b"", FILE_MAGIC[:1], FILE_MAGIC[:7], FILE_MAGIC, START[:10], START[:-1], b"\x00" * 3,
     b"\x00" * 8192, FILE_MAGIC + b"\x00" * 30],
    ids=["empty", "magic-1", "magic-7", "magic", "header-2", "header-all-but-1", "zeros-3",
         "zeros-8k", "magic-then-zeros"],
)
async def test_torn_file_header_is_reinitialized(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "events.wal"
    path.write_bytes(content)
    wal, records = WriteAheadLog.open(path)
    assert records == []
    assert path.read_bytes() == START
    await wal.sync(wal.append(b"first"))
    await wal.close()
    assert reopen(path) == [b"first"]


@pytest.mark.parametrize(
    "content",
    [b"apiVersion: v1\n", b"FAKEWAL9" + encode_record(b"x"), b"\x00" * 8 + encode_record(b"x"),
     FILE_MAGIC + encode_record(b"not json") + encode_record(b"x"),
     FILE_MAGIC + encode_record(b'{"format":3}'), FILE_MAGIC + b"garbage-not-a-record"],
    ids=["text", "other-version", "zeros-then-record", "header-not-json", "header-format-3",
         "garbage-after-magic"],
)
def test_foreign_file_is_refused_untouched(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "events.wal"
    path.write_bytes(content)
    with pytest.raises(WalCorruptError):
        WriteAheadLog.open(path)
    assert path.read_bytes() == content


def test_second_open_of_same_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "events.wal"
    wal, _ = WriteAheadLog.open(path)
    with pytest.raises(WalError, match="already open"):
        WriteAheadLog.open(path)
    wal.close_now()
    reopen(path)


# -- group commit ----------------------------------------------------------------------------


@pytest.mark.parametrize(("writers", "per_writer"), [(1, 50), (8, 100), (300, 20)])
async def test_concurrent_syncs_share_flushes(
    tmp_path: Path, writers: int, per_writer: int
) -> None:
    path = tmp_path / "events.wal"
    wal, _ = WriteAheadLog.open(path)
    expected: dict[int, bytes] = {}

    async def writer(w: int) -> None:
        for i in range(per_writer):
            payload = f"w{w}-{i}".encode()
            seq = wal.append(payload)
            expected[seq] = payload
            await wal.sync(seq)
            assert wal.durable_seq >= seq
            if i % 7 == 0:
                await asyncio.sleep(0)

    await asyncio.gather(*(writer(w) for w in range(writers)))
    total = writers * per_writer
    assert wal.durable_seq == wal.last_seq == total
    if writers > 1:
        assert wal.flush_count < total / 2, "concurrent callers must share write+fsync"
    await wal.close()
    assert reopen(path) == [expected[s] for s in range(1, total + 1)]


async def test_sync_edge_cases(tmp_path: Path) -> None:
    wal, _ = WriteAheadLog.open(tmp_path / "events.wal")
    await wal.sync(0)
    with pytest.raises(ValueError, match="only 0 records"):
        await wal.sync(1)
    seqs = [wal.append(b"%d" % i) for i in range(10)]
    # out of order, duplicated, and one waiter cancelled: the others are still woken
    cancelled = asyncio.ensure_future(wal.sync(seqs[4]))
    await asyncio.sleep(0)
    cancelled.cancel()
    await asyncio.gather(wal.sync(seqs[9]), wal.sync(seqs[2]), wal.sync(seqs[2]), wal.sync(5))
    assert cancelled.cancelled()
    assert wal.durable_seq == 10
    await wal.sync(3)  # already durable: no flush needed
    await wal.close()


async def test_close_flushes_unsynced_appends_and_then_refuses(tmp_path: Path) -> None:
    path = tmp_path / "events.wal"
    wal, _ = WriteAheadLog.open(path)
    seqs = [wal.append(b"pending-%d" % i) for i in range(5)]
    waiter = asyncio.ensure_future(wal.sync(seqs[1]))
    await asyncio.gather(wal.close(), wal.close())  # concurrent closes share one
    await waiter
    assert wal.durable_seq == 5
    await wal.sync(seqs[-1])  # durable records stay syncable
    with pytest.raises(WalClosedError):
        wal.append(b"late")
    await wal.close()  # idempotent
    assert reopen(path) == [b"pending-%d" % i for i in range(5)]


def test_flush_now_without_event_loop(tmp_path: Path) -> None:
    path = tmp_path / "events.wal"
    wal, _ = WriteAheadLog.open(path)
    wal.append(b"a")
    wal.append(b"b")
    wal.flush_now()
    assert wal.durable_seq == 2
    assert path.stat().st_size == len(START + encode_record(b"a") + encode_record(b"b"))
    wal.append(b"c")
    wal.close_now()
    with pytest.raises(WalClosedError):
        wal.append(b"d")
    assert reopen(path) == [b"a", b"b", b"c"]


# -- I/O errors --------------------------------------------------------------------------------


FAULTS = {
    "fsync-eio": ("fsync_error", OSError(errno.EIO, "Input/output error")),  # a lost write
    # runs out of space half-way, leaving a partial batch on disk
    "write-enospc": ("write_error", OSError(errno.ENOSPC, "No space left on device")),
}


@pytest.mark.parametrize("fault", list(FAULTS))
async def test_io_error_reaches_every_waiter_and_poisons_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    path = tmp_path / "events.wal"
    disk = DiskFaults(monkeypatch, path)
    attr, error = FAULTS[fault]
    wal, _ = WriteAheadLog.open(path)
    durable = [wal.append(b"durable-%d" % i) for i in range(3)]
    await wal.sync(durable[-1])
    durable_size = path.stat().st_size

    setattr(disk, attr, error)
    lost = [wal.append(b"lost-%d" % i) for i in range(20)]
    results = await asyncio.gather(*(wal.sync(s) for s in lost), return_exceptions=True)
    assert all(isinstance(r, WalError) for r in results), results
    first = results[0]
    assert isinstance(first, WalError) and isinstance(first.__cause__, OSError)
    setattr(disk, attr, None)

    assert wal.durable_seq == durable[-1]
    await wal.sync(durable[1])  # what was durable stays acknowledged
    with pytest.raises(WalError):
        wal.append(b"after-failure")
    with pytest.raises(WalError):
        wal.flush_now()
    assert path.stat().st_size == durable_size, "the failed batch must be cut from the file"

    setattr(disk, attr, error)
    assert not await wal.resume(), "the fault is still there: not writable"
    setattr(disk, attr, None)
    assert await wal.resume(), "the fault is gone: writable again"
    assert path.stat().st_size == durable_size, "the probe leaves nothing behind"
    seq = wal.append(b"after-resume")
    assert seq == durable[-1] + 1, "what was lost is not counted"
    await wal.sync(seq)
    await wal.close()
    assert reopen(path) == [*(b"durable-%d" % i for i in range(3)), b"after-resume"]


# -- real crash --------------------------------------------------------------------------------

CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from fakeapi.storage.wal import WriteAheadLog

    def payload(tag, i):
        size = (len(tag) * 7919 + i * 104729) % 9000
        return f"{tag}-{i}|".encode() + bytes([(i * 31 + len(tag)) % 251]) * size

    async def main(path, tag, writers):
        wal, records = WriteAheadLog.open(Path(path))
        print(f"open {len(records)}", flush=True)

        async def writer(w):
            i = 0
            while True:
                seq = wal.append(payload(f"{tag}w{w}", i))
                await wal.sync(seq)
                sys.stdout.write(f"ack {seq} {tag}w{w} {i}\\n")
                sys.stdout.flush()
                i += 1

        await asyncio.gather(*(writer(w) for w in range(writers)))

    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
    """
)


def expected_payload(tag: str, i: int) -> bytes:
    """Mirror of the child's payload function."""
    size = (len(tag) * 7919 + i * 104729) % 9000
    return f"{tag}-{i}|".encode() + bytes([(i * 31 + len(tag)) % 251]) * size


def parse_payload(record: bytes) -> bytes:
    """Rebuild what a record should be from its own tag and index (detects any corruption)."""
    head = record.split(b"|", 1)[0].decode()
    tag, _, i = head.rpartition("-")
    return expected_payload(tag, int(i))


def run_and_kill(*, script: Path, path: Path, tag: str, writers: int, acks: int) -> list[str]:
    """Run the child until it acknowledged `acks` records, SIGKILL it, return its stdout lines."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, str(script), str(path), tag, str(writers)]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, env=env, text=True) as proc:
        assert proc.stdout is not None
        lines = []
        seen = 0
        try:
            while seen < acks:
                line = proc.stdout.readline()
                assert line, f"child exited early with {proc.wait()}"
                lines.append(line)
                seen += line.startswith("ack ")
        finally:
            proc.send_signal(signal.SIGKILL)
            rest = proc.stdout.read()  # not communicate(): it would skip readline's buffer
            proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    # everything the child printed before dying was acknowledged; a half line was not
    lines.extend(rest.splitlines(keepends=True))
    return [line for line in lines if line.endswith("\n")]


@pytest.mark.parametrize(
    "rounds",
    [[(1, 40)], [(32, 1500)], [(4, 300), (64, 2500), (1, 20)]],
    ids=["one-writer", "many-writers", "repeated-crashes"],
)
def test_sigkill_mid_burst_loses_no_acknowledged_record(
    tmp_path: Path, rounds: list[tuple[int, int]]
) -> None:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    path = tmp_path / "events.wal"
    previous: list[bytes] = []
    for n, (writers, acks) in enumerate(rounds):
        lines = run_and_kill(script=script, path=path, tag=f"r{n}", writers=writers, acks=acks)
        assert lines[0] == f"open {len(previous)}\n"
        records = reopen(path)
        assert records[: len(previous)] == previous, "earlier records must survive later crashes"
        acked = [line.split() for line in lines[1:]]
        assert len(acked) >= acks
        for _, seq, tag, i in acked:
            assert int(seq) <= len(records), f"acknowledged seq {seq} missing"
            assert records[int(seq) - 1] == expected_payload(tag, int(i))
        for record in records[len(previous) :]:
            assert record == parse_payload(record), "recovered record is corrupt"
        previous = records
