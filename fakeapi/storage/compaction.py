"""Compaction of a recording: the state at a revision as a base, and only the tail after it.

`compact(data_dir, at)` rewrites a stopped server's data directory so that the objects alive
at revision `at` are kept in a base file (`base-AT.log`: the header, then each object's
current event record, in revision order, framed like the log) and the log keeps its header
(with `"base": AT`) and the records after `at`. Revisions are not renumbered: the log's
first record holds revision AT+1. A start loads the base and then the tail; watches and
lists from before AT are 410 Expired; `log show`, time travel and replay work from AT on.

The rewrite is crash-safe: the new base and the new log are written beside the old ones,
synced, and renamed into place (the base first: a log always names a base file that
exists); the old base goes last.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import orjson

from fakeapi.machinery.clock import RealClock
from fakeapi.storage.log import Event, EventLog
from fakeapi.storage.logcheck import stopped
from fakeapi.storage.recording import LOG_NAME, base_path, parse_header
from fakeapi.storage.store import ReplayError, Store
from fakeapi.storage.walformat import (
    Ack,
    WalCorruptError,
    encode_record,
    fsync_dir,
    new_file,
    scan_file,
    write_ack,
)


class CompactionError(Exception):
    """A compaction that can't be done as asked (the data directory stays as it was)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Compacted:
    """What `compact` did."""

    base: int
    objects: int
    """Objects in the base."""
    kept: int
    """Events kept after the base."""
    before_bytes: int
    after_bytes: int


def read_base(data_dir: Path, base: int) -> list[bytes]:
    """The base records of a log compacted at `base` (WalCorruptError when the base file is
    missing or damaged: a compacted log is never loaded without its base)."""
    path = base_path(data_dir, base)
    try:
        scan = scan_file(path)
    except FileNotFoundError:
        raise WalCorruptError(f"{path} is missing: the log was compacted at revision {base} "
                              "and its state there is in that file") from None
    if scan.damage is not None or parse_header(scan.header, path).base != base:
        why = scan.damage.why if scan.damage is not None else "its header names another base"
        raise WalCorruptError(f"{path}: the base of the log is damaged ({why})")
    return scan.records


def base_store(data_dir: Path, base: int) -> Store:
    """A fresh in-memory store holding the state at a compacted log's `base` (empty for 0),
    for the log's records after it to be replayed into (WalCorruptError or ReplayError when
    the base is missing or damaged)."""
    clock = RealClock()
    store = Store(log=EventLog(clock=clock), clock=clock)
    if base:
        store.load_base(base, read_base(data_dir, base))
    return store


def base_records(store: Store) -> list[bytes]:
    """Each live object's current event record, in revision order."""
    events = [item for resource in store.resources() for item in store.scan(resource)
              if isinstance(item, Event)]
    events.sort(key=lambda e: e.revision)
    return [e.record() for e in events]


def _write_synced(path: Path, chunks: list[bytes]) -> int:
    with open(path, "wb") as f:
        for chunk in chunks:
            f.write(chunk)
        f.flush()
        os.fsync(f.fileno())
        return f.tell()


def write_base(data_dir: Path, base: int, records: list[bytes]) -> None:
    """Write the base file of revision `base` (written beside, synced, renamed into place)."""
    base_file = base_path(data_dir, base)
    tmp = base_file.with_name(base_file.name + ".tmp")
    _write_synced(tmp, [new_file(orjson.dumps({"base": base, "format": 2})),
                        *map(encode_record, records)])
    os.replace(tmp, base_file)
    fsync_dir(data_dir)


def compact(data_dir: Path, at: int) -> Compacted:
    """Keep the state at revision `at` as the base and the events after it (see the module
    docstring); CompactionError when the server runs, the log is damaged, or `at` is not a
    revision after the current base."""
    data_dir = Path(data_dir)
    path = data_dir / LOG_NAME
    if not path.exists():
        raise CompactionError(f"{data_dir} holds no event log ({path} does not exist)")
    with stopped(path, os.O_RDONLY, CompactionError):
        scan = scan_file(path)
        if scan.damage is not None and not scan.damage.torn:
            raise CompactionError(f"{path} is damaged at offset {scan.damage.offset:,}: see "
                                  f"fakeapi log verify {data_dir}")
        header = parse_header(scan.header, path)
        base, last = header.base, header.base + len(scan.records)
        if not base <= at <= last:
            raise CompactionError(f"revision {at} is not in the log: it holds revisions "
                                  f"{base}..{last}" if base else
                                  f"revision {at} is not in the log: it ends at revision {last}")
        if at == base:
            raise CompactionError(f"the log is already compacted at revision {base}")
        store = base_store(data_dir, base)
        try:
            store.replay(scan.records[:at - base])
        except ReplayError as e:
            raise CompactionError(f"{path}: {e}") from None
        kept_records = scan.records[at - base:]
        head = orjson.loads(scan.header) if scan.header is not None else {"format": 2}
        head["base"] = at
        [newest] = store.log.since(at - 1)  # at > base: at least one event was replayed
        head["base_time"] = newest.time
        header_bytes = orjson.dumps(head)  # in its order (see recording.header_record)
        records = base_records(store)
        write_base(data_dir, at, records)
        tmp_log = path.with_name(path.name + ".compact.tmp")
        size = _write_synced(tmp_log, [new_file(header_bytes), *map(encode_record, kept_records)])
        os.replace(tmp_log, path)
        write_ack(path, Ack(size, len(kept_records)))
        fsync_dir(data_dir)
        if header.base:
            base_path(data_dir, header.base).unlink(missing_ok=True)
        return Compacted(base=at, objects=len(records), kept=last - at,
                         before_bytes=scan.size, after_bytes=size)
