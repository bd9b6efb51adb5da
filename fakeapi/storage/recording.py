"""The recording: a data directory's event log read as what it is, a record of one run.

Its header (format 2) says which fakeapi made it, when on its clock, and the settings a
replay needs to rebuild the same control plane (`Header`); format-1 logs have none. `events`
streams the events record by record from the mapped file, decoding each head as it goes and
each object only when it is read, so the first page of a million-event log is at hand at
once. A log is read as a start would read it: an unacknowledged torn final write is left
out, any other damage is `WalDamagedError` (offset and revision) when the reader reaches it,
and a newer format is `WalFormatError`, before any event.
"""

from __future__ import annotations

import dataclasses
import mmap
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from fakeapi.storage.log import Event
from fakeapi.storage.walformat import (
    FORMAT,
    Damage,
    WalCorruptError,
    WalDamagedError,
    judge,
    next_record,
    preamble,
    read_ack,
    skip_records,
)

LOG_NAME = "events.log"
"""The event log's file name in a data directory."""


class RecordingMissing(Exception):
    """There is no event log where one was asked for."""


@dataclasses.dataclass(frozen=True)
class Header:
    """What a recording says of itself (format 1: nothing, so settings are {})."""

    format: int
    fakeapi: str
    """The package version that created the log ("" when unknown)."""
    created: str
    """The clock time (RFC 3339) at which the log was created ("" when unknown)."""
    settings: dict[str, Any]
    """How the run was started (`fakeapi serve` records them; see the README)."""
    base_time: str = ""
    """The clock's reading at the base revision (RFC 3339; "" when not compacted)."""
    base: int = 0
    """A compacted log's base revision: the state there is in the data directory's base
    file, and the log's records hold revisions base+1 on (0: not compacted)."""


NO_HEADER = Header(format=1, fakeapi="", created="", settings={})
"""The header of a format-1 log (nothing known of its run)."""


def package_version() -> str:
    """The installed fakeapi's version ("unknown" outside an installed package)."""
    import importlib.metadata  # not for readers: only a new log's header needs it

    try:
        return importlib.metadata.version("fakeapi")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def header_record(settings: Mapping[str, Any], created: str, *, base: int = 0) -> bytes:
    """The header record's payload for a new log (`base`: a log that starts from a base
    state at that revision, at the time `created`). Keys keep their order (the settings are
    built in a fixed order, so the same run gives the same bytes): a node profile's maps
    must come back in the order the profile gave them, or the nodes a replay builds from
    it would encode differently."""
    head = {"format": FORMAT, "fakeapi": package_version(), "created": created,
            "settings": dict(settings)}
    if base:
        head |= {"base": base, "base_time": created}
    return orjson.dumps(head)


def log_file(data_dir: Path) -> Path:
    """The event log of a data directory (a path to the log file itself is taken as it is)."""
    path = Path(data_dir)
    return path if path.is_file() else path / LOG_NAME


def base_path(data_dir: Path, base: int) -> Path:
    """The file of a compacted log's base state at revision `base` (`fakeapi log compact`:
    the objects alive there, one event record each, framed like the log)."""
    return Path(data_dir) / f"base-{base}.log"


def parse_header(payload: bytes | None, path: Path) -> Header:
    """The `Header` of a header record's payload (None: a format-1 log)."""
    if payload is None:
        return NO_HEADER
    h = orjson.loads(payload)  # preamble() checked that it is an object with a format
    fakeapi, created, settings = h.get("fakeapi", ""), h.get("created", ""), h.get("settings", {})
    if not (isinstance(fakeapi, str) and isinstance(created, str)
            and isinstance(settings, dict)):
        raise WalCorruptError(f"{path}: damaged log header: fakeapi and created must be "
                              "strings, settings an object")
    base = h.get("base", 0)
    if not (isinstance(base, int) and not isinstance(base, bool) and base >= 0):
        raise WalCorruptError(f"{path}: damaged log header: base must be a revision")
    base_time = h.get("base_time", "")
    if not isinstance(base_time, str):
        raise WalCorruptError(f"{path}: damaged log header: base_time must be a time")
    return Header(format=h["format"], fakeapi=fakeapi, created=created, settings=settings,
                  base=base, base_time=base_time)


def _open(data_dir: Path) -> tuple[Path, mmap.mmap | None]:
    """The log file and its contents mapped (None for an empty file)."""
    path = log_file(data_dir)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            return path, mmap.mmap(f.fileno(), size, access=mmap.ACCESS_READ) if size else None
    except FileNotFoundError:
        raise RecordingMissing(f"{data_dir} holds no event log ({path} does not exist)") from None


def read_header(data_dir: Path) -> Header:
    """The header of `data_dir`'s log (RecordingMissing, WalCorruptError, WalFormatError)."""
    path, mm = _open(data_dir)
    if mm is None:  # torn while being created: a start makes it anew
        raise WalCorruptError(f"{path}: the log is empty (no file header)")
    try:
        return parse_header(preamble(mm, path).header, path)
    finally:
        mm.close()


def events(data_dir: Path, *, since: int = 1) -> Iterator[Event]:
    """The events of `data_dir`'s log from revision `since` on, decoded one record at a time.

    Raises (when it gets there) RecordingMissing, WalFormatError before any event, and
    WalDamagedError at a damaged record, with its offset and revision (records before
    `since` are walked by their framing only, not checksummed). The events carry no
    previous version (`prev_raw` is None).
    """
    ack = read_ack(log_file(data_dir))  # before the file: it never claims more than that
    path, mm = _open(data_dir)
    if mm is None:
        return
    try:
        pre = preamble(mm, path)
        base = parse_header(pre.header, path).base
        pos, skipped = skip_records(mm, pre.start, max(0, since - 1 - base))
        revision = base + skipped
        from_record = Event.from_record
        size = len(mm)
        why = ""
        while pos < size:
            payload, end, why = next_record(mm, pos)
            if payload is None:
                break
            revision += 1
            if revision >= since:
                try:
                    event = from_record(payload, None)
                except ValueError as e:
                    raise _damaged(path, pos, revision, str(e)) from None
                if event.revision != revision:
                    raise _damaged(path, pos, revision, f"it holds revision {event.revision} "
                                   f"where {revision} was due")
                yield event
            pos = end
        damage = judge(mm, pos, revision - base, why, ack)
        if damage is not None and not damage.torn:
            raise WalDamagedError(path, damage)
    finally:
        mm.close()


def _damaged(path: Path, offset: int, revision: int, why: str) -> WalDamagedError:
    return WalDamagedError(path, Damage(offset=offset, record=revision, why=why,
                                        intact_after=0, acknowledged=False, torn=False))




def last_revision(data_dir: Path) -> int:
    """The newest revision of `data_dir`'s log: the ack file's count when it covers the whole
    file, else the intact records counted."""
    path = log_file(data_dir)
    ack = read_ack(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise RecordingMissing(f"{data_dir} holds no event log ({path} does not exist)") from None
    _, mm = _open(data_dir)
    if mm is None:
        return 0
    try:
        pre = preamble(mm, path)
        base = parse_header(pre.header, path).base
        if ack is not None and ack.offset == size:
            return base + ack.records
        pos, count = pre.start, 0
        while True:
            payload, pos, _ = next_record(mm, pos)
            if payload is None:
                return base + count
            count += 1
    finally:
        mm.close()


__all__ = ["LOG_NAME", "NO_HEADER", "Header", "RecordingMissing", "base_path", "events",
           "header_record", "last_revision", "log_file", "package_version", "parse_header",
           "read_header"]
