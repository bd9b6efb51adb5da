"""The state of a data directory's log at a revision, rebuilt with the store's own replay.

`read_log` is the one place here that reads a recording (it switches to the streaming reader
of `fakeapi.storage.recording` once that exists); `state_at` replays its records up to a
revision into an in-memory store, as a restart would, without touching the data directory
(no lock, nothing cut). A damaged log is refused as the server refuses it (the offset and
the revision), never half-loaded.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path

from tqdm import tqdm

from fakeapi.storage import compaction, logcheck
from fakeapi.storage.recording import NO_HEADER, Header, parse_header
from fakeapi.storage.store import ReplayError, Store
from fakeapi.storage.walformat import WalCorruptError, scan_file

CHUNK = 20_000
"""Records replayed per step (the progress bar moves once per step)."""


class HistoryError(Exception):
    """The log can't give the state asked for (missing, damaged, or no such revision)."""


class LogDamaged(HistoryError):
    """The log is damaged (the message says where and the way out)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class LogRecords:
    """A data directory's intact records (record i holds revision base+i)."""

    data_dir: Path
    records: list[bytes]
    offsets: list[int]
    """The file offset of each record."""
    header: Header = NO_HEADER
    """What the log says of itself: its run's settings, and a compacted log's base."""

    @property
    def base(self) -> int:
        """A compacted log's base revision (0: the log holds every revision from 1)."""
        return self.header.base

    @property
    def last(self) -> int:
        """The newest revision in the log."""
        return self.base + len(self.records)


@dataclasses.dataclass(frozen=True, kw_only=True)
class StateAt:
    """The objects of a log as they were at `revision` (the log ends at `last`)."""

    revision: int
    last: int
    store: Store


def read_log(data_dir: Path) -> LogRecords:
    """Every intact record of `data_dir`'s log (an unacknowledged torn final write, which a
    start would cut, is left out); HistoryError when there is no log or it is damaged."""
    path = logcheck.log_path(data_dir)
    try:
        scan = scan_file(path)
    except FileNotFoundError:
        raise HistoryError(f"{data_dir} holds no event log ({path} does not exist)") from None
    except WalCorruptError as e:
        raise HistoryError(str(e)) from None
    if scan.damage is not None and not scan.damage.torn:
        raise LogDamaged(_damaged(data_dir))
    try:
        header = parse_header(scan.header, path)
    except WalCorruptError as e:
        raise HistoryError(str(e)) from None
    return LogRecords(data_dir=Path(data_dir), records=scan.records, offsets=scan.offsets,
                      header=header)


def _damaged(data_dir: Path) -> str:
    report = logcheck.verify(data_dir)
    return (f"the event log {report.path} is {logcheck.damage_text(report)}\n"
            + logcheck.way_out(report))


def check_revision(revision: int, last: int, base: int = 0) -> None:
    """HistoryError unless `revision` is in the log (1..last, or base..last when compacted)."""
    if base and base <= revision <= last:
        return
    if base and 0 < revision < base:
        raise HistoryError(f"revision {revision} was compacted away: the log holds the state "
                           f"at revision {base} and the revisions after it, to {last}")
    if last == 0:
        raise HistoryError("the log holds no events yet")
    if revision > last:
        raise HistoryError(f"revision {revision} is beyond the end of the log: it ends at "
                           f"revision {last}")
    if revision < 1:
        raise HistoryError(f"revision {revision} is not in the log: its revisions run from 1 "
                           f"to {last}")


def state_at(data_dir: Path, revision: int | None = None, *,
             progress: bool | None = None) -> StateAt:
    """The state of `data_dir`'s log at `revision` (default: its end). `progress`: a bar on
    stderr (default: when stderr is a terminal)."""
    records = read_log(data_dir)
    at = records.last if revision is None else revision
    check_revision(at, records.last, records.base)
    base = records.base
    try:
        store = compaction.base_store(data_dir, base)
    except (WalCorruptError, ReplayError) as e:
        raise LogDamaged(str(e)) from None
    with tqdm(total=at - base, unit="event", unit_scale=True, desc="reading the log",
              file=sys.stderr,
              disable=not (sys.stderr.isatty() if progress is None else progress),
              leave=False) as bar:
        for start, chunk in _chunks(records.records, at - base):
            try:
                store.replay(chunk)
            except ReplayError as e:
                index = start + e.record
                raise LogDamaged(
                    f"the event log {logcheck.log_path(data_dir)} is DAMAGED at offset "
                    f"{records.offsets[index - 1]:,} (revision {base + index}): {e.why}"
                ) from None
            bar.update(len(chunk))
    return StateAt(revision=at, last=records.last, store=store)


def _chunks(records: list[bytes], upto: int) -> Iterator[tuple[int, list[bytes]]]:
    """(revisions before the chunk, the chunk) over records[:upto]."""
    for start in range(0, upto, CHUNK):
        yield start, records[start:min(start + CHUNK, upto)]
