"""On-disk write-ahead log for the event log: append-only framed records with group commit.

The in-memory event log is the truth while the process runs; this file is what makes it
survive a crash. The contract: a record whose `sync()` returned is on disk, and after a crash
(kill -9, power loss) the file reopens to a prefix of the appended records that contains every
synced one and never a corrupted record. A file that can't honour that (a damaged record, or
acknowledged records missing) is refused with `WalDamagedError`, never silently shortened.

File format (all integers little-endian)::

    file   := FILE_MAGIC header record*          (format 2, ``b"FAKEWAL2"``)
            | FILE_MAGIC_V1 record*              (format 1, ``b"FAKEWAL1"``: read, never made)
    header := record   (a JSON object whose "format" is 2; `fakeapi.storage.recording`)
    record := RECORD_MAGIC  u32 length  u32 crc  payload[length]

The header record is written with the file and never rewritten; it is not one of the
records `open()` and `scan_file()` return (record i is still the i-th after it). A file whose
magic or header names a newer format is refused (`WalFormatError`) with the offset.

`RECORD_MAGIC` is 4 fixed bytes, so zero-filled or garbage tails never parse as records.
`crc` is CRC-32 of the payload seeded with the length, so neither a damaged payload nor a
damaged length field can validate. Records are never rewritten; the only
mutation besides appending is cutting an unacknowledged torn final write at open, or the batch
of a failed write.

Next to the file, `<name>.ack` holds how far the file has been acknowledged (the end offset and
record count of the last completed fsync, with its own CRC). It is written after every fsync,
without an fsync of its own: after kill -9 it is exact, after a power loss it may lag, and it
never claims more than the file holds. At open, damage before that offset, or a file shorter
than it, means acknowledged records are gone: the open is refused. Past it, a final write that
was torn (nothing intact after it) is cut, at INFO. Without the ack file (a log copied on its
own) only the framing decides: an incomplete final record or a zero-filled tail is cut, a
complete final record with a bad checksum is refused.

Threading model: `append()` only buffers (no I/O) and is called on the event loop thread. A
single background flusher task hands everything pending to one dedicated worker thread, which
writes it with one `write` and one `fdatasync`, then wakes every `sync()` waiter it covered
(group commit). Any write or fsync error poisons the log: the partial batch is cut from the
file, the pending waiters and every later `append`/`sync` fail with `WalError` (after a failed
fsync the page cache can't be trusted for that data: PostgreSQL's "fsync failure is a PANIC").
`resume()` probes whether the file takes writes again (space freed, device back) and, if it
does, lets appending continue after the last durable record.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import errno
import fcntl
import heapq
import itertools
import logging
import mmap
import os
import struct
import threading
import zlib
from pathlib import Path
from typing import TypeAlias

import orjson

__all__ = [
    "ACK_SUFFIX",
    "DEFAULT_HEADER",
    "FILE_MAGIC",
    "FILE_MAGIC_V1",
    "FORMAT",
    "MAX_RECORD_BYTES",
    "RECORD_HEADER",
    "RECORD_MAGIC",
    "Ack",
    "Damage",
    "Preamble",
    "ScanResult",
    "WalClosedError",
    "WalCorruptError",
    "WalDamagedError",
    "WalError",
    "WalFormatError",
    "WriteAheadLog",
    "ack_path",
    "encode_record",
    "fsync_dir",
    "judge",
    "lock",
    "new_file",
    "next_record",
    "preamble",
    "read_ack",
    "scan_file",
    "skip_records",
    "write_ack",
]

log = logging.getLogger(__name__)

Buffer: TypeAlias = "bytes | mmap.mmap"
"""What the readers here parse: a file's bytes, or the file mapped (a streaming reader)."""

FORMAT = 2
"""The format this version writes (the digit of the file magic, and the header's "format")."""
FILE_MAGIC = b"FAKEWAL2"
FILE_MAGIC_V1 = b"FAKEWAL1"
_MAGIC_STEM = b"FAKEWAL"
DEFAULT_HEADER = b'{"format":2}'
"""The header of a log created without one (only tests and benches open a WAL so)."""
RECORD_MAGIC = b"\xe7EV\x01"
RECORD_HEADER = struct.Struct("<4sII")  # magic, payload length, crc32(payload, seed=length)
MAX_RECORD_BYTES = 64 * 1024 * 1024  # far above the apiserver's 1.5 MB object limit
ACK_SUFFIX = ".ack"
ACK_MAGIC = b"FAKEACK1"
_ACK = struct.Struct("<8sQQI")  # magic, acknowledged end offset, record count, crc32(fields)
PROBE_BYTES = 64 * 1024
"""Bytes `resume()` writes (then cuts) past the durable end to learn whether writes work."""

_pack_header = RECORD_HEADER.pack
_unpack_header = RECORD_HEADER.unpack_from
_HEADER_SIZE = RECORD_HEADER.size
_crc32 = zlib.crc32


class WalError(Exception):
    """The WAL can't guarantee durability (I/O error, or it is closed)."""


class WalClosedError(WalError):
    """The WAL was closed; nothing can be appended or synced past what is already durable."""


class WalCorruptError(WalError):
    """The file is not a WAL of this format, so recovery refuses to touch it."""


class WalFormatError(WalCorruptError):
    """The file is a WAL of a newer format than this version reads."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Damage:
    """Where a WAL file stops being a clean sequence of records, and why."""

    offset: int
    """File offset of the first byte that is not part of a good record."""
    record: int
    """1-based number of the record that is damaged (good records before it + 1)."""
    why: str
    intact_after: int
    """Records that still validate somewhere after the damage (more than a torn write)."""
    acknowledged: bool
    """The damage lies in what an fsync already acknowledged (per the ack file)."""
    torn: bool
    """It is an unacknowledged torn final write, which recovery may cut."""


class WalDamagedError(WalCorruptError):
    """The file holds a damaged record (or lost acknowledged ones): recovery refuses it."""

    def __init__(self, path: Path, damage: Damage) -> None:
        where = "acknowledged data" if damage.acknowledged else "the file"
        more = (f"; {damage.intact_after} intact records follow" if damage.intact_after else "")
        super().__init__(f"{path}: damaged record {damage.record} at offset {damage.offset} of "
                         f"{where}: {damage.why}{more}")
        self.path = path
        self.damage = damage


@dataclasses.dataclass(frozen=True)
class Ack:
    """What the ack file says was acknowledged: the file's end offset and its record count."""

    offset: int
    records: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class ScanResult:
    """One pass over a WAL file: the good records, their offsets, and any damage after them."""

    size: int
    records: list[bytes]
    offsets: list[int]
    """Start offset of each good record (its header)."""
    good_end: int
    ack: Ack | None
    damage: Damage | None
    format: int = FORMAT
    """1 (no header) or 2."""
    header: bytes | None = None
    """The header record's payload (None in format 1)."""


def encode_record(payload: bytes) -> bytes:
    """One framed record (header + payload) exactly as it is stored on disk."""
    return _pack_header(RECORD_MAGIC, len(payload), _crc32(payload, len(payload))) + payload


def new_file(header: bytes = DEFAULT_HEADER) -> bytes:
    """The first bytes of a new log: the file magic and the framed header record."""
    return FILE_MAGIC + encode_record(header)


@dataclasses.dataclass(frozen=True)
class Preamble:
    """What precedes the first event record: the format, the header, where records start."""

    format: int
    header: bytes | None
    start: int


def _file_format(data: Buffer, path: Path) -> int:
    """The format the file magic names (WalCorruptError when it is no fakeapi WAL,
    WalFormatError when it is a newer one)."""
    magic = bytes(data[: len(FILE_MAGIC)])
    if magic == FILE_MAGIC:
        return FORMAT
    if magic == FILE_MAGIC_V1:
        return 1
    if magic[:-1] == _MAGIC_STEM and magic[-1:].isdigit():
        raise WalFormatError(f"{path}: the log is format {magic[-1:].decode()} (file magic "
                             f"{magic.decode()} at offset 0), newer than this fakeapi reads "
                             f"(formats 1 to {FORMAT})")
    raise WalCorruptError(f"{path} is not a fakeapi WAL file (bad file header)")


def preamble(data: Buffer, path: Path) -> Preamble:
    """Read the file magic and (format 2) the header record at the start of `data`.

    WalCorruptError for a file that is no fakeapi WAL or whose header record is damaged,
    WalFormatError for a newer format (the file's or the header's), both naming the offset.
    """
    fmt = _file_format(data, path)
    start = len(FILE_MAGIC)
    if fmt == 1:
        return Preamble(1, None, start)
    records, _, end, why = _scan(data, start, limit=1)
    if not records:
        raise WalCorruptError(f"{path}: damaged log header at offset {start} (the record "
                              f"before revision 1): {why or 'missing'}")
    header = records[0]
    try:
        declared = orjson.loads(header)["format"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        declared = None
    if not isinstance(declared, int) or isinstance(declared, bool):
        raise WalCorruptError(f"{path}: damaged log header at offset {start} (the record "
                              "before revision 1): not a JSON object with an integer format")
    if declared != FORMAT:
        newer = "newer than this fakeapi reads" if declared > FORMAT else "not format 2"
        raise WalFormatError(f"{path}: the log header at offset {start} says format "
                             f"{declared}, {newer} (formats 1 to {FORMAT})")
    return Preamble(FORMAT, header, end)


def _write_all(fd: int, data: bytes) -> None:
    """Write all of `data` at the current offset, retrying short writes."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _datasync(fd: int) -> None:
    """Flush file data (and the size, which `fdatasync` includes) to stable storage."""
    os.fdatasync(fd)


def _read_all(fd: int, size: int) -> bytes:
    """Read the first `size` bytes of the file (pread may return less per call)."""
    chunks: list[bytes] = []
    pos = 0
    while pos < size:
        chunk = os.pread(fd, size - pos, pos)
        if not chunk:
            break
        chunks.append(chunk)
        pos += len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def fsync_dir(path: Path) -> None:
    """Make a file's directory entry durable (needed after creating the file)."""
    dfd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def ack_path(path: Path) -> Path:
    """Where the ack file of the WAL at `path` lives."""
    return path.with_name(path.name + ACK_SUFFIX)


def read_ack(path: Path) -> Ack | None:
    """The ack file of the WAL at `path` (None when missing or unreadable: then only the
    framing judges a damaged tail)."""
    try:
        data = ack_path(path).read_bytes()
    except OSError:
        return None
    if len(data) != _ACK.size:
        return None
    magic, offset, records, crc = _ACK.unpack(data)
    if magic != ACK_MAGIC or crc != _crc32(data[: _ACK.size - 4]):
        log.warning("%s: ignoring a damaged ack file", ack_path(path))
        return None
    return Ack(offset, records)


def _ack_bytes(ack: Ack) -> bytes:
    head = _ACK.pack(ACK_MAGIC, ack.offset, ack.records, 0)[: _ACK.size - 4]
    return head + struct.pack("<I", _crc32(head))


def write_ack(path: Path, ack: Ack, *, sync: bool = True) -> None:
    """Record `ack` for the WAL at `path` (a replace, durable when `sync`)."""
    target = ack_path(path)
    tmp = target.with_name(target.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    try:
        _write_all(fd, _ack_bytes(ack))
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, target)
    if sync:
        fsync_dir(path.parent)


def lock(fd: int, path: Path) -> None:
    """Take the file's exclusive lock, which one open WAL (or repair) holds while it runs."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as exc:
        raise WalError(f"{path} is already open by another WAL") from exc


def _scan(data: Buffer, start: int,
          limit: int | None = None) -> tuple[list[bytes], list[int], int, str]:
    """Parse records from `start` (at most `limit`); return payloads, offsets, the offset
    after the last good one, and why parsing stopped there ("" at the end of the data or
    the limit).

    The loop is a restart's hot path (every record of the log, once): a good record costs
    one header unpack, one slice and one checksum, and a record that fails any check ends
    the loop, whose reason is worked out after it (`_why_not`)."""
    records: list[bytes] = []
    offsets: list[int] = []
    end = len(data)
    pos = start
    if limit is not None:
        while pos < end and len(records) < limit:
            payload, nxt, why = next_record(data, pos)
            if payload is None:
                return records, offsets, pos, why
            records.append(payload)
            offsets.append(pos)
            pos = nxt
        return records, offsets, pos, ""
    unpack, crc32, add, add_offset = _unpack_header, _crc32, records.append, offsets.append
    magic_ok, max_len, size = RECORD_MAGIC, MAX_RECORD_BYTES, _HEADER_SIZE
    while pos + size <= end:
        magic, length, crc = unpack(data, pos)
        body = pos + size
        nxt = body + length
        if magic != magic_ok or length > max_len or nxt > end:
            break
        payload = data[body:nxt]
        if crc32(payload, length) != crc:
            break
        add(payload)
        add_offset(pos)
        pos = nxt
    return records, offsets, pos, _why_not(data, pos) if pos < end else ""


def _why_not(data: Buffer, pos: int) -> str:
    """Why no good record starts at `pos` (before the end of `data`)."""
    return next_record(data, pos)[2]


def _torn_at_creation(data: bytes) -> bool:
    """Whether `data` is what a creation cut short leaves: nothing, zero fill, a prefix of
    the file magic, or the magic and part of the header record (nothing after it)."""
    if not data or data.count(0) == len(data):
        return True
    magic_len = len(FILE_MAGIC)
    if len(data) < magic_len:
        return FILE_MAGIC.startswith(data)
    if data[:magic_len] != FILE_MAGIC:
        return False
    tail = data[magic_len:]
    if not tail.strip(b"\x00"):
        return True
    records, _, _, why = _scan(data, magic_len, limit=1)
    return not records and _incomplete_final_write(tail, why)


def _intact_records_after(data: Buffer, start: int) -> int:
    """Count records that still validate somewhere after a damaged spot (a corruption hint)."""
    pos = data.find(RECORD_MAGIC, start + 1)
    while pos != -1:
        found = _scan(data, pos)[0]
        if found:
            return len(found)
        pos = data.find(RECORD_MAGIC, pos + 1)
    return 0


def _incomplete_final_write(tail: bytes, why: str) -> bool:
    """Whether `tail` (from the damage to the end) is what an interrupted append leaves: part
    of one record (a prefix of a header, or a header whose payload runs past the end), or
    zero fill (an extended file whose data never reached the disk)."""
    if not tail.strip(b"\x00"):
        return True
    if why == "incomplete record":
        return True
    if why == "incomplete record header":
        return RECORD_MAGIC.startswith(tail[: len(RECORD_MAGIC)])
    return False


def judge(data: Buffer, good_end: int, n: int, why: str, ack: Ack | None) -> Damage | None:
    """The damage after `n` good records ending at `good_end` (None when the file is clean),
    for a reader that stopped there for reason `why` (a whole-file scan or a streaming
    reader)."""
    size = len(data)
    if ack is not None and (good_end < ack.offset or n < ack.records):
        if good_end == size:
            why = (f"the file ends at offset {size} after {n} records, but {ack.records} "
                   f"records ({ack.offset} bytes) were acknowledged")
        intact = _intact_records_after(data, good_end) if good_end < size else 0
        return Damage(offset=good_end, record=n + 1, why=why, intact_after=intact,
                      acknowledged=True, torn=False)
    if good_end == size:
        return None
    intact = _intact_records_after(data, good_end)
    if intact:
        torn = False
    elif ack is not None:
        torn = True  # past everything acknowledged, nothing valid after: a torn final write
    else:
        torn = _incomplete_final_write(data[good_end:], why)
    return Damage(offset=good_end, record=n + 1, why=why, intact_after=intact,
                  acknowledged=False, torn=torn)


def _scan_data(data: bytes, ack: Ack | None, pre: Preamble) -> ScanResult:
    records, offsets, good_end, why = _scan(data, pre.start)
    return ScanResult(size=len(data), records=records, offsets=offsets, good_end=good_end,
                      ack=ack, damage=judge(data, good_end, len(records), why, ack),
                      format=pre.format, header=pre.header)


def next_record(data: Buffer, pos: int) -> tuple[bytes | None, int, str]:
    """The payload of the record at `pos` and the offset after it, or (None, pos, why not):
    one step of a streaming reader."""
    end = len(data)
    if pos + _HEADER_SIZE > end:
        return None, pos, "incomplete record header"
    magic, length, crc = _unpack_header(data, pos)
    body = pos + _HEADER_SIZE
    if magic != RECORD_MAGIC:
        return None, pos, "no record header"
    if length > MAX_RECORD_BYTES:
        return None, pos, f"record length {length} is impossible"
    if body + length > end:
        return None, pos, "incomplete record"
    payload = data[body: body + length]
    if _crc32(payload, length) != crc:
        return None, pos, "checksum mismatch"
    return payload, body + length, ""


def skip_records(data: Buffer, pos: int, count: int) -> tuple[int, int]:
    """Walk past up to `count` records from `pos` by their framing alone (magic and length,
    no checksum: a reader that starts later need not read what it skips); the offset reached
    and how many were passed (fewer at the end or at a broken frame, where `next_record`
    then says why)."""
    end = len(data)
    passed = 0
    while passed < count and pos + _HEADER_SIZE <= end:
        magic, length, _ = _unpack_header(data, pos)
        nxt = pos + _HEADER_SIZE + length
        if magic != RECORD_MAGIC or length > MAX_RECORD_BYTES or nxt > end:
            break
        pos = nxt
        passed += 1
    return pos, passed


def scan_file(path: Path) -> ScanResult:
    """Read and judge a WAL file without changing it (what `fakeapi log verify` reports).

    Raises WalCorruptError when the file is not a fakeapi WAL (or its header is damaged),
    WalFormatError when it is a newer format.
    """
    data = Path(path).read_bytes()
    return _scan_data(data, read_ack(Path(path)), preamble(data, Path(path)))


class WriteAheadLog:
    """Append-only record file with group-commit `sync()`; use `WriteAheadLog.open()`."""

    def __init__(self, *, path: Path, fd: int, offset: int, seq: int,
                 pre: Preamble | None = None) -> None:
        self._path = path
        self._fd = fd
        self._preamble = pre or Preamble(FORMAT, DEFAULT_HEADER, len(new_file()))
        self._buf_lock = threading.Lock()  # guards _buf/_seq between loop and worker thread
        self._io_lock = threading.Lock()  # serializes writes; held across write + fsync
        self._buf: list[bytes] = []
        self._seq = seq  # last appended
        self._durable_seq = seq  # last written + fsync'd
        self._durable_offset = offset  # file size covering _durable_seq
        self._flush_count = 0
        self._error: BaseException | None = None
        self._closed = False
        self._fd_closed = False
        self._ack_fd = os.open(ack_path(path), os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
        self._ack_failed = False
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="wal-flush"
        )
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []  # heap by seq
        self._tiebreak = itertools.count()
        self._flusher: asyncio.Task[None] | None = None
        self._closing: asyncio.Future[None] | None = None

    # -- opening and recovery -------------------------------------------------------------

    @classmethod
    def open(cls, path: Path, *,
             header: bytes = DEFAULT_HEADER) -> tuple[WriteAheadLog, list[bytes]]:
        """Open or create the WAL at `path`; return it and every valid event record, in order.

        A new file gets `header` (a JSON object with "format": 2) as its header record; an
        existing file keeps the header (or the format) it has. An unacknowledged torn final
        write is cut (and logged at INFO), so new appends continue cleanly; any other damage
        raises WalDamagedError and leaves the file as it is.
        """
        path = Path(path)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            lock(fd, path)
            records, offset, pre = cls._recover(path, fd, header)
        except BaseException:
            os.close(fd)
            raise
        os.lseek(fd, offset, os.SEEK_SET)
        return cls(path=path, fd=fd, offset=offset, seq=len(records), pre=pre), records

    @staticmethod
    def _recover(path: Path, fd: int, header: bytes) -> tuple[list[bytes], int, Preamble]:
        """Read the file, cut an unacknowledged torn tail, and return (records, end offset,
        preamble)."""
        size = os.fstat(fd).st_size
        data = _read_all(fd, size)
        if len(data) != size:
            raise WalError(f"{path}: short read during recovery ({len(data)} of {size} bytes)")
        if _torn_at_creation(data):
            # Only a file torn while being created (a prefix of the magic and header, or zero
            # fill) is ours to reinitialize; anything else is refused untouched below.
            ack = read_ack(path)
            if ack is not None and ack.records:
                raise WalDamagedError(path, Damage(
                    offset=0, record=1, why=f"the file header is gone, but {ack.records} "
                    "records were acknowledged", intact_after=0, acknowledged=True, torn=False))
            if data:
                log.info("%s: reinitializing a torn file header (%d bytes)", path, size)
            first = new_file(header)
            pre = preamble(first, path)
            os.ftruncate(fd, 0)
            os.pwrite(fd, first, 0)
            _datasync(fd)
            fsync_dir(path.parent)
            write_ack(path, Ack(len(first), 0))
            return [], len(first), pre
        pre = preamble(data, path)
        scan = _scan_data(data, read_ack(path), pre)
        damage = scan.damage
        if damage is not None:
            if not damage.torn:
                raise WalDamagedError(path, damage)
            log.info("%s: cut an unacknowledged torn final write of %d bytes at offset %d "
                     "after %d records (%s)", path, size - scan.good_end, scan.good_end,
                     len(scan.records), damage.why)
            os.ftruncate(fd, scan.good_end)
            _datasync(fd)
        if damage is not None or scan.ack is None or scan.ack != Ack(scan.good_end,
                                                                       len(scan.records)):
            write_ack(path, Ack(scan.good_end, len(scan.records)))
        return scan.records, scan.good_end, pre

    # -- the file's header ----------------------------------------------------------------

    @property
    def format(self) -> int:
        """The file's format (1: no header; 2)."""
        return self._preamble.format

    @property
    def header(self) -> bytes | None:
        """The header record's payload as the file holds it (None in format 1)."""
        return self._preamble.header

    # -- appending and group commit -------------------------------------------------------

    @property
    def path(self) -> Path:
        """Where the log lives."""
        return self._path

    @property
    def last_seq(self) -> int:
        """Sequence number of the last appended record (0 if none)."""
        return self._seq

    @property
    def durable_seq(self) -> int:
        """Every record up to this sequence number is written and fsync'd."""
        return self._durable_seq

    @property
    def flush_count(self) -> int:
        """How many write+fsync batches have been done (for group-commit statistics)."""
        return self._flush_count

    def append(self, payload: bytes) -> int:
        """Buffer one record (no I/O) and return its 1-based sequence number in the file."""
        length = len(payload)
        if length > MAX_RECORD_BYTES:
            raise ValueError(f"WAL record of {length} bytes exceeds {MAX_RECORD_BYTES}")
        header = _pack_header(RECORD_MAGIC, length, _crc32(payload, length))
        with self._buf_lock:
            if self._closed or self._error is not None:
                raise self._unusable()
            self._buf.append(header)
            self._buf.append(payload)
            self._seq += 1
            return self._seq

    async def sync(self, seq: int) -> None:
        """Return once record `seq` (and all before it) is written and fsync'd.

        Concurrent callers share one write+fsync; raises `WalError` if the flush fails.
        """
        if seq <= self._durable_seq:
            return
        if seq > self._seq:
            raise ValueError(f"cannot sync seq {seq}: only {self._seq} records appended")
        if self._error is not None or self._fd_closed:
            raise self._unusable()
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (seq, next(self._tiebreak), fut))
        if self._flusher is None:
            self._flusher = asyncio.create_task(self._flush_loop(), name="wal-flusher")
        await fut

    async def _flush_loop(self) -> None:
        """Flush while anyone waits; appends made during one flush ride in the next one."""
        try:
            while self._waiters:
                await self._flush_and_wake()
        except asyncio.CancelledError:
            for _, _, fut in self._waiters:
                fut.cancel()
            self._waiters.clear()
            raise
        except Exception:  # already delivered to every waiter by _flush_and_wake
            pass
        finally:
            self._flusher = None

    async def _flush_and_wake(self) -> None:
        """Run one write+fsync in the worker thread, then resolve the waiters it covered."""
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._executor, self._flush_blocking)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            self._fail_waiters(exc)
            raise
        self._wake()

    def _wake(self) -> None:
        """Resolve every waiter whose record is durable."""
        waiters, durable = self._waiters, self._durable_seq
        while waiters and waiters[0][0] <= durable:
            fut = heapq.heappop(waiters)[2]
            if not fut.done():
                fut.set_result(None)

    def _fail_waiters(self, exc: BaseException) -> None:
        """Fail every waiter whose record is not durable (the others are woken normally)."""
        self._wake()
        while self._waiters:
            fut = heapq.heappop(self._waiters)[2]
            if not fut.done():
                err = WalError(f"WAL flush failed: {exc}")
                err.__cause__ = exc
                fut.set_exception(err)

    def _flush_blocking(self) -> int:
        """Write and fsync everything buffered (in one write); return the durable seq."""
        with self._io_lock:
            if self._error is not None:
                raise self._unusable()
            with self._buf_lock:
                chunks, upto = self._buf, self._seq
                if not chunks:
                    return self._durable_seq
                if self._fd_closed:
                    raise WalClosedError(f"{self._path} is closed")
                self._buf = []
            data = b"".join(chunks)
            try:
                _write_all(self._fd, data)
                _datasync(self._fd)
            except BaseException as exc:
                self._poison(exc)
                raise
            self._durable_offset += len(data)
            self._durable_seq = upto
            self._flush_count += 1
            self._record_ack()
            return upto

    def _record_ack(self) -> None:
        """Note in the ack file how far the file is now acknowledged (before anyone is told)."""
        try:
            os.pwrite(self._ack_fd, _ack_bytes(Ack(self._durable_offset, self._durable_seq)), 0)
        except OSError as exc:  # only a hint for recovery: the records themselves are durable
            if not self._ack_failed:
                log.warning("%s: could not update the ack file: %r", self._path, exc)
            self._ack_failed = True
        else:
            self._ack_failed = False

    def _poison(self, exc: BaseException) -> None:
        """Mark the log failed and best-effort cut the partial batch so the file stays clean."""
        self._error = exc
        log.error("%s: WAL write/fsync failed, appends are refused until it is writable: %r",
                  self._path, exc)
        try:
            os.ftruncate(self._fd, self._durable_offset)
            os.lseek(self._fd, self._durable_offset, os.SEEK_SET)
        except OSError as trunc_exc:  # recovery at the next open cuts whatever is left
            log.error("%s: could not cut the failed batch: %r", self._path, trunc_exc)

    @property
    def error(self) -> BaseException | None:
        """The I/O error that stopped appends (None while the log is writable)."""
        return self._error

    async def resume(self) -> bool:
        """After an I/O error: probe whether the file takes writes again; if it does, drop
        what was appended after the last durable record and accept appends again."""
        if self._error is None:
            return True
        if self._fd_closed:
            return False
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._resume_blocking)

    def _resume_blocking(self) -> bool:
        with self._io_lock:
            if self._error is None:
                return True
            end = self._durable_offset
            try:
                os.ftruncate(self._fd, end)
                os.lseek(self._fd, end, os.SEEK_SET)
                _write_all(self._fd, bytes(PROBE_BYTES))
                _datasync(self._fd)
                os.ftruncate(self._fd, end)
                _datasync(self._fd)
                os.lseek(self._fd, end, os.SEEK_SET)
            except OSError as exc:
                try:  # a torn probe is zero fill, which recovery cuts anyway
                    os.ftruncate(self._fd, end)
                except OSError:
                    pass
                log.debug("%s: still not writable: %r", self._path, exc)
                return False
            with self._buf_lock:
                self._buf = []
                self._seq = self._durable_seq
                self._error = None
            self._record_ack()
            log.warning("%s: writable again after %d durable records", self._path,
                        self._durable_seq)
            return True

    def _unusable(self) -> WalError:
        """The error to raise once the log is failed or closed."""
        if self._error is not None:
            err = WalError(f"{self._path}: WAL failed earlier: {self._error}")
            err.__cause__ = self._error
            return err
        return WalClosedError(f"{self._path} is closed")

    # -- shutdown -------------------------------------------------------------------------

    def flush_now(self) -> None:
        """Synchronously write and fsync everything appended so far (no event loop needed);
        an I/O error is a `WalError` (caused by it), as `sync()` raises it."""
        try:
            self._flush_blocking()
        except WalError:
            raise
        except OSError as exc:
            raise WalError(f"WAL flush failed: {exc}") from exc

    async def close(self) -> None:
        """Flush and fsync everything pending, wake all waiters, and close the file.

        Idempotent; concurrent callers share one close, which finishes even if they are
        cancelled.
        """
        if self._closing is None:
            self._closing = asyncio.ensure_future(self._close())
        await asyncio.shield(self._closing)

    async def _close(self) -> None:
        """The body of `close()`, run once."""
        if self._fd_closed:
            return
        with self._buf_lock:
            self._closed = True
        loop = asyncio.get_running_loop()
        try:
            if self._error is None:
                await self._flush_and_wake()
        finally:
            if self._flusher is not None:
                await asyncio.gather(self._flusher, return_exceptions=True)
            self._fail_waiters(WalClosedError(f"{self._path} closed"))
            await loop.run_in_executor(self._executor, self._close_fd)
            self._executor.shutdown(wait=False)

    def close_now(self) -> None:
        """Synchronous `close()` for shutdown paths without a running event loop."""
        if self._fd_closed:
            return
        with self._buf_lock:
            self._closed = True
        try:
            if self._error is None:
                self._flush_blocking()
        finally:
            self._close_fd()
            self._executor.shutdown(wait=False)

    def _close_fd(self) -> None:
        """Close the file descriptors once (which also releases the flock); a clean close
        leaves a durable ack file."""
        with self._io_lock:
            if not self._fd_closed:
                self._fd_closed = True
                if self._error is None:
                    try:
                        os.fsync(self._ack_fd)
                    except OSError as exc:
                        log.warning("%s: could not sync the ack file: %r", self._path, exc)
                for fd in (self._ack_fd, self._fd):
                    try:
                        os.close(fd)
                    except OSError as exc:
                        if exc.errno != errno.EBADF:
                            raise

    def __repr__(self) -> str:
        return f"<WriteAheadLog {self._path} seq={self._seq} durable={self._durable_seq}>"
