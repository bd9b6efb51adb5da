"""The write-ahead log's on-disk format, and reading and judging a file by it.

Everything here is about the bytes: the framing, the file preamble, the ack file, and a scan
that says where a file stops being a clean sequence of records and whether that is a torn
final write or damage. The writer (`fakeapi.storage.wal`: appending, group commit, recovery at
open) and the readers (`recording`, `compaction`, `logcheck`, the replay) use it; it imports
neither. `MAX_RECORD_BYTES` lives here alone and every user reads it at call time.

File format (all integers little-endian)::

    file   := FILE_MAGIC header record*          (format 2, ``b"FAKEWAL2"``)
            | FILE_MAGIC_V1 record*              (format 1, ``b"FAKEWAL1"``: read, never made)
    header := record   (a JSON object whose "format" is 2; `fakeapi.storage.recording`)
    record := RECORD_MAGIC  u32 length  u32 crc  payload[length]

The header record is written with the file and never rewritten; it is not one of the
records a scan returns (record i is still the i-th after it). A file whose magic or header
names a newer format is refused (`WalFormatError`) with the offset.

`RECORD_MAGIC` is 4 fixed bytes, so zero-filled or garbage tails never parse as records.
`crc` is CRC-32 of the payload seeded with the length, so neither a damaged payload nor a
damaged length field can validate.

Next to the file, `<name>.ack` holds how far the file has been acknowledged (the end offset and
record count of the last completed fsync, with its own CRC). The writer updates it after every
fsync, without an fsync of its own: after kill -9 it is exact, after a power loss it may lag,
and it never claims more than the file holds. `judge` reads a file against it: damage before
that offset, or a file shorter than it, means acknowledged records are gone (refused). Past
it, a final write that was torn (nothing intact after it) may be cut. Without the ack file (a
log copied on its own) only the framing decides: an incomplete final record or a zero-filled
tail is torn, a complete final record with a bad checksum is damage.
"""

from __future__ import annotations

import dataclasses
import fcntl
import logging
import mmap
import os
import struct
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
    "WalCorruptError",
    "WalDamagedError",
    "WalError",
    "WalFormatError",
    "ack_bytes",
    "ack_path",
    "encode_record",
    "fsync_dir",
    "judge",
    "lock",
    "new_file",
    "next_record",
    "preamble",
    "read_ack",
    "record_header",
    "scan_data",
    "scan_file",
    "skip_records",
    "torn_at_creation",
    "write_ack",
    "write_all",
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

_pack_header = RECORD_HEADER.pack
_unpack_header = RECORD_HEADER.unpack_from
_HEADER_SIZE = RECORD_HEADER.size
_crc32 = zlib.crc32


class WalError(Exception):
    """The WAL can't guarantee durability (I/O error, or it is closed)."""


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


def record_header(payload: bytes) -> bytes:
    """The frame header stored before `payload`: magic, length and the seeded checksum."""
    length = len(payload)
    return _pack_header(RECORD_MAGIC, length, _crc32(payload, length))


def encode_record(payload: bytes) -> bytes:
    """One framed record (header + payload) exactly as it is stored on disk."""
    return record_header(payload) + payload


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


def write_all(fd: int, data: bytes) -> None:
    """Write all of `data` at the current offset, retrying short writes."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


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


def ack_bytes(ack: Ack) -> bytes:
    """The ack file's content for `ack` (fixed size, so the writer rewrites it in place)."""
    head = _ACK.pack(ACK_MAGIC, ack.offset, ack.records, 0)[: _ACK.size - 4]
    return head + struct.pack("<I", _crc32(head))


def write_ack(path: Path, ack: Ack, *, sync: bool = True) -> None:
    """Record `ack` for the WAL at `path` (a replace, durable when `sync`)."""
    target = ack_path(path)
    tmp = target.with_name(target.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    try:
        write_all(fd, ack_bytes(ack))
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


def torn_at_creation(data: bytes) -> bool:
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


def scan_data(data: bytes, ack: Ack | None, pre: Preamble) -> ScanResult:
    """Scan a whole file's bytes after its preamble and judge the end against `ack`."""
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
    return scan_data(data, read_ack(Path(path)), preamble(data, Path(path)))
