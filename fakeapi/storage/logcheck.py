"""`fakeapi log verify` and `fakeapi log repair`: what is wrong with a log, and the way out.

The server refuses to start on a damaged log (`WalDamagedError`, or an intact record that is
not the event due next): serving the state up to the damage would drop acknowledged writes
and hand their revisions to new objects. `verify` says where the log stops being sound and
what a start would do; `repair --truncate-at REV` keeps revisions 1..REV and cuts the rest,
saving the cut bytes next to the log first. Nothing here runs while a server has the log
open (the WAL's lock).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path

from fakeapi.machinery.jsonio import loads
from fakeapi.storage.log import Event
from fakeapi.storage.recording import LOG_NAME, base_path, parse_header
from fakeapi.storage.walformat import Ack, ScanResult, WalError, lock, scan_file, write_ack


class RepairError(Exception):
    """A repair that can't be done as asked (the log stays as it was)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Problem:
    """Where the log stops being sound."""

    offset: int
    revision: int
    """Revision of the first record that can't be kept (intact records before it + 1)."""
    why: str
    intact_after: int
    refused: bool
    """A start refuses the log (False: an unacknowledged torn final write, cut at start)."""
    acknowledged: bool = True
    """The damage lies in what the ack file says was acknowledged (True too without an ack
    file, when nothing tells)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Report:
    """What `verify` found in one data directory's log."""

    path: Path
    size: int
    revisions: int
    """Revisions base+1..revisions replay cleanly."""
    base: int = 0
    """A compacted log's base revision (its state is in the base file; 0: not compacted)."""
    ack: Ack | None
    problem: Problem | None
    scan: ScanResult


def log_path(data_dir: Path) -> Path:
    """The event log file of a data directory."""
    return Path(data_dir) / LOG_NAME


def verify(data_dir: Path) -> Report:
    """Read the log of `data_dir` (without changing it) and judge every record.

    Raises WalCorruptError when the file is not a fakeapi log at all, OSError when it can't
    be read.
    """
    path = log_path(data_dir)
    scan = scan_file(path)
    base = parse_header(scan.header, path).base
    problem: Problem | None = None
    good = len(scan.records)
    for i, payload in enumerate(scan.records, 1):
        try:
            event = Event.from_record(payload, None)
            due = base + i
            why = "" if event.revision == due else (f"it holds revision {event.revision} where "
                                                    f"{due} was due")
            if not why and not isinstance(loads(event.raw), dict):
                why = "not an event record (its object is not a JSON object)"
        except ValueError as e:
            why = str(e)
        if why:
            offset = scan.offsets[i - 1]
            problem = Problem(offset=offset, revision=base + i, why=why,
                              intact_after=len(scan.records) - i, refused=True,
                              acknowledged=scan.ack is None or offset < scan.ack.offset)
            good = i - 1
            break
    damage = scan.damage
    if problem is None and damage is not None:
        problem = Problem(offset=damage.offset, revision=base + damage.record, why=damage.why,
                          intact_after=damage.intact_after, refused=not damage.torn,
                          acknowledged=damage.acknowledged)
    return Report(path=path, size=scan.size, revisions=base + good, ack=scan.ack,
                  problem=problem, scan=scan, base=base)


def format_report(report: Report) -> str:
    """The human-readable verdict `fakeapi log verify` prints."""
    lines = [f"{report.path}: {report.size:,} bytes, revisions {report.base + 1}.."
             f"{report.revisions} intact"]
    if report.base:
        lines.append(f"  compacted: the state at revision {report.base} is in "
                     f"{base_path(report.path.parent, report.base).name}")
    if report.ack is None:
        lines.append("  no ack file: only the record framing can tell a torn write from damage")
    else:
        lines.append(f"  acknowledged: {report.ack.records:,} records, {report.ack.offset:,} "
                     "bytes")
    problem = report.problem
    if problem is None:
        lines.append("OK")
    elif not problem.refused:
        lines.append(f"OK, but the final write (at offset {problem.offset:,}, "
                     f"{report.size - problem.offset:,} bytes) is torn and was never "
                     f"acknowledged: the next start cuts it ({problem.why})")
    else:
        lines.append(damage_text(report))
        lines.append(way_out(report))
    return "\n".join(lines)


def damage_text(report: Report) -> str:
    """One sentence: where the log is damaged and how."""
    problem = report.problem
    assert problem is not None
    more = f"; {problem.intact_after:,} intact records follow" if problem.intact_after else ""
    return (f"DAMAGED at offset {problem.offset:,} (revision {problem.revision}): "
            f"{problem.why}{more}")


def way_out(report: Report) -> str:
    """How to inspect and repair a damaged log."""
    data_dir = report.path.parent
    keep = report.problem.revision - 1 if report.problem else report.revisions
    return (f"  inspect it:  fakeapi log verify {data_dir}\n"
            f"  keep revisions {report.base + 1}..{keep} and cut the rest (a copy of what is "
            f"cut is saved next to the log):  fakeapi log repair {data_dir} --truncate-at {keep}")


def refusal(data_dir: Path) -> str:
    """What the server prints when it refuses to start on a damaged log."""
    report = verify(data_dir)
    problem = report.problem
    if problem is None or problem.acknowledged:
        why = ("Serving the log up to the damage would drop acknowledged writes and hand their "
               "revisions to new objects.")
    else:
        why = ("The damage lies past the acknowledged writes, so no acknowledged write is lost "
               "by cutting there; but it is not a torn final write, and what follows it is "
               "cut only when you say so.")
    return (f"fakeapi: refusing to start: the event log {report.path} is {damage_text(report)}"
            f"\n{why}\n" + way_out(report))


@dataclasses.dataclass(frozen=True, kw_only=True)
class Repaired:
    """What `repair` did."""

    kept: int
    cut_bytes: int
    saved: Path | None


def repair(data_dir: Path, truncate_at: int) -> Repaired:
    """Keep revisions 1..`truncate_at` of the log and cut everything after them, after saving
    the cut bytes to `events.log.cut-REV` (RepairError when that would keep a damaged or
    missing record, or the log is open in a running server)."""
    path = log_path(data_dir)
    if truncate_at < 0:
        raise RepairError("--truncate-at must be 0 or more")
    with stopped(path, os.O_RDWR, RepairError) as fd:
        report = verify(data_dir)
        if truncate_at < report.base:
            raise RepairError(f"revision {truncate_at} is before the log's base: it was "
                              f"compacted at revision {report.base}")
        if truncate_at > report.revisions:
            raise RepairError(f"revision {truncate_at} is past the last intact one: the most "
                              f"that can be kept is --truncate-at {report.revisions}")
        offsets = report.scan.offsets
        kept = truncate_at - report.base
        cut = offsets[kept] if kept < len(offsets) else report.scan.good_end
        if cut >= report.size:
            return Repaired(kept=truncate_at, cut_bytes=0, saved=None)
        saved = _free_name(path.with_name(f"{path.name}.cut-{truncate_at}"))
        with open(path, "rb") as f:
            f.seek(cut)
            tail = f.read()
        with open(saved, "xb") as out:
            out.write(tail)
            out.flush()
            os.fsync(out.fileno())
        os.ftruncate(fd, cut)
        os.fsync(fd)
        write_ack(path, Ack(cut, kept))
        return Repaired(kept=truncate_at, cut_bytes=len(tail), saved=saved)


@contextlib.contextmanager
def stopped(path: Path, flags: int, refused: type[Exception]) -> Iterator[int]:
    """The log file opened (`flags`) and locked for a change while no server runs on it;
    `refused(...)` when one does."""
    fd = os.open(path, flags | os.O_CLOEXEC)
    try:
        try:
            lock(fd, path)
        except WalError:
            raise refused(f"{path} is open in a running server: stop it first") from None
        yield fd
    finally:
        os.close(fd)


def _free_name(path: Path) -> Path:
    """`path`, or `path.N` for the first N that doesn't exist yet."""
    candidate, n = path, 0
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.{n}")
    return candidate
