"""What a recording holds for a replay: its events' heads, its external inputs, and the
facts of the recorded server a replay repeats (its clock mode, its advertised address).

An external input is an event whose request came over HTTP (its head `q` has the method
`m`), whose actor is not the control plane itself (`ControlPlane.is_component_identity`),
and that is the first event of its request (no `same`: a request that committed several
events is sent once). Clients' writes, clock advances and DeviceFault writes are all such
inputs; the components' writes are not: a replay makes them again.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from fakeapi.machinery.clock import REAL, VIRTUAL
from fakeapi.machinery.requestinfo import recorded_body
from fakeapi.machinery.timestamps import parse_time, time_error
from fakeapi.registry.kinds import CLOCKS, ENDPOINT_SLICES
from fakeapi.replay.history import HistoryError, LogDamaged, LogRecords, check_revision, read_log
from fakeapi.schema.emulator import CLOCK_NAME
from fakeapi.storage import compaction
from fakeapi.storage.walformat import WalCorruptError

Head = dict[str, Any]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Input:
    """One external request of a recording, as a replay sends it again."""

    revision: int
    """The revision of the first event it committed in the recording."""
    time: dt.datetime
    user: str
    groups: tuple[str, ...]
    method: str
    path: str
    """Path and query, as sent."""
    content_type: str
    body: bytes
    user_agent: str
    """The recorded User-Agent (a request without a field manager is named after it)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Recording:
    """A data directory's log with every record's head decoded (head i: revision base+i+1),
    and a compacted log's base (the objects alive at its base revision)."""

    log: LogRecords
    heads: list[Head]
    base_records: list[bytes] = dataclasses.field(default_factory=list)

    @property
    def last(self) -> int:
        """The newest revision."""
        return self.log.last

    def raw(self, revision: int) -> bytes:
        """The object JSON of the event at `revision` (after the base)."""
        return self.log.records[revision - 1 - self.log.base].partition(b"\n")[2]

    def _versions(self) -> Iterator[tuple[Head, bytes]]:
        """(head, object JSON) of the base's objects, then of every event, in order."""
        for record in self.base_records:
            line, _, raw = record.partition(b"\n")
            yield orjson.loads(line), raw
        for head, record in zip(self.heads, self.log.records, strict=True):
            yield head, record.partition(b"\n")[2]

    def inputs(self, is_component: Callable[[str], bool]) -> list[Input]:
        """The external inputs, in revision order."""
        found = []
        for head in self.heads:
            q = head.get("q")
            if not q or "m" not in q or "same" in q or is_component(head["a"]):
                continue
            found.append(Input(revision=head["r"], time=parse_time(head["ts"]), user=head["a"],
                               groups=tuple(q.get("g", ())), method=q["m"], path=q["p"],
                               content_type=q.get("ct", ""), body=recorded_body(q),
                               user_agent=q.get("ua", "")))
        return found

    def clock_mode(self) -> str:
        """The mode of the recorded server's clock (`real` for a log without a Clock)."""
        for head, raw in self._versions():
            if head["res"] == CLOCKS.resource_id and head["n"] == CLOCK_NAME:
                status = orjson.loads(raw).get("status") or {}
                return str(status.get("mode") or REAL)
        return REAL

    @property
    def exact(self) -> bool:
        """Whether a replay can repeat the log exactly (a `virtual` clock's recording)."""
        return self.clock_mode() == VIRTUAL

    def address(self) -> tuple[str, int] | None:
        """The address the recorded server first advertised in the `kubernetes` Service."""
        for head, raw in self._versions():
            if (head["res"], head["ns"], head["n"]) == (ENDPOINT_SLICES.resource_id, "default",
                                                        "kubernetes"):
                obj = orjson.loads(raw)
                return obj["endpoints"][0]["addresses"][0], obj["ports"][0]["port"]
        return None

    def start(self) -> dt.datetime:
        """The clock's reading at the start: the base's (compacted), else the first event's."""
        return parse_time(self.log.header.base_time or self.heads[0]["ts"])

    def revision_of(self, text: str) -> int:
        """`--until`: a revision, or the newest event at or before an RFC 3339 time;
        HistoryError for a malformed value or a point outside the recording."""
        text = text.strip()
        if text.lstrip("-").isdigit():
            revision = int(text)
            check_revision(revision, self.last, self.log.base)
            return revision
        if (error := time_error(text)) is not None:
            raise HistoryError(f"invalid --until {text!r}: neither a revision (a number) nor "
                               f"an RFC 3339 time such as 2026-01-01T00:10:00Z ({error})")
        when = parse_time(text)
        first, last = self.start(), parse_time(self.heads[-1]["ts"])
        if when < first:
            raise HistoryError(f"time {text} is before the recording: it starts at "
                               f"{self.heads[0]['ts']}")
        if when > last:
            raise HistoryError(f"time {text} is beyond the end of the recording: it ends at "
                               f"{self.heads[-1]['ts']} (revision {self.last})")
        revision = 0
        for head in self.heads:
            if parse_time(head["ts"]) > when:
                break
            revision = head["r"]
        return revision


def read_recording(data_dir: Path) -> Recording:
    """The recording of `data_dir` (HistoryError: no log, an empty or a damaged one)."""
    log = read_log(data_dir)
    if not log.records:
        raise HistoryError(f"the event log of {data_dir} holds no events yet")
    heads = [orjson.loads(record.partition(b"\n")[0]) for record in log.records]
    if not log.base:
        return Recording(log=log, heads=heads)
    try:
        base = compaction.read_base(data_dir, log.base)
    except WalCorruptError as e:
        raise LogDamaged(str(e)) from None
    return Recording(log=log, heads=heads, base_records=base)
