"""Compaction: the state at a revision as the log's base, the events after it kept; time
travel, restarts and the readers work across it, and what it can't do is refused."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from fakeapi.cli.main import main
from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.replay import history
from fakeapi.storage import compaction, logcheck, recording
from fakeapi.storage.log import CompactedError, Event
from fakeapi.storage.store import Store
from fakeapi.storage.wal import WriteAheadLog
from fakeapi.storage.walformat import WalCorruptError
from tests.support.datadirs import ADMIN, add_history, flip_record, make_log

Key = tuple[str, str, str]


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, int]:
    """A data directory with creates, an update, a delete and a CRD; and its last revision."""
    data_dir = tmp_path / "data"
    make_log(data_dir, configmaps=3)
    return data_dir, add_history(data_dir)


def objects(store: Store) -> dict[Key, bytes]:
    """Every object of the store, encoded."""
    return {(resource, item.namespace, item.name): item.raw
            for resource in store.resources() for item in store.scan(resource)
            if isinstance(item, Event)}


def state(data_dir: Path, at: int | None = None) -> dict[Key, bytes]:
    return objects(history.state_at(data_dir, at, progress=False).store)


def test_time_travel_and_a_restart_see_the_same_states_after_compaction(
        recorded: tuple[Path, int], tmp_path: Path) -> None:
    data_dir, last = recorded
    mid = last - 6
    before = {at: state(data_dir, at) for at in (mid, mid + 3, last)}
    size = logcheck.log_path(data_dir).stat().st_size
    done = compaction.compact(data_dir, mid)
    assert (done.base, done.kept, done.objects) == (mid, 6, len(before[mid]))
    assert done.after_bytes < size
    assert {at: state(data_dir, at) for at in before} == before
    report = logcheck.verify(data_dir)
    assert (report.base, report.revisions, report.problem) == (mid, last, None)
    assert f"revisions {mid + 1}..{last} intact" in logcheck.format_report(report)
    assert [e.revision for e in recording.events(data_dir)] == list(range(mid + 1, last + 1))

    cluster = Cluster(ClusterConfig(data_dir=data_dir, seed=1))
    assert cluster.log.revision == last
    assert objects(cluster.store) == before[last]
    with pytest.raises(CompactedError):  # a watch or list from before the base: 410
        cluster.log.ensure_retained("configmaps", mid - 1)
    cluster.log.ensure_retained("configmaps", mid)
    kind = cluster.kinds.by_id("configmaps")
    assert kind is not None
    made = cluster.registry.create(kind, "default", {"metadata": {"name": "after"}}, ADMIN)
    assert made.event is not None and made.event.revision == last + 1
    cluster.log.flush_now()
    assert cluster.log.visible == last + 1  # the WAL's records count from the base
    assert cluster.wal is not None
    cluster.wal.close_now()
    again = Cluster(ClusterConfig(data_dir=data_dir, seed=1))  # the appended tail reloads
    assert again.log.revision == last + 1
    assert again.store.get("configmaps", "default", "after") is not None
    assert again.wal is not None
    again.wal.close_now()


def test_a_second_compaction_replaces_the_base(recorded: tuple[Path, int]) -> None:
    data_dir, last = recorded
    end = state(data_dir)
    compaction.compact(data_dir, last - 8)
    compaction.compact(data_dir, last - 2)
    assert sorted(p.name for p in data_dir.glob("base-*")) == [f"base-{last - 2}.log"]
    assert state(data_dir) == end
    with pytest.raises(history.HistoryError, match=(
            rf"revision {last - 3} was compacted away: the log holds the state at revision "
            rf"{last - 2} and the revisions after it, to {last}")):
        history.state_at(data_dir, last - 3, progress=False)


BAD = [
    (lambda last: last + 1, "revision {at} is not in the log: it ends at revision {last}"),
    (lambda last: -1, "revision {at} is not in the log: it ends at revision {last}"),
]


@pytest.mark.parametrize(("at", "message"), BAD)
def test_a_revision_outside_the_log_is_refused(recorded: tuple[Path, int], at: Any,
                                               message: str) -> None:
    data_dir, last = recorded
    before = logcheck.log_path(data_dir).read_bytes()
    with pytest.raises(compaction.CompactionError) as e:
        compaction.compact(data_dir, at(last))
    assert str(e.value) == message.format(at=at(last), last=last)
    assert logcheck.log_path(data_dir).read_bytes() == before


def test_before_or_at_the_base_is_refused(recorded: tuple[Path, int]) -> None:
    data_dir, last = recorded
    compaction.compact(data_dir, last - 4)
    with pytest.raises(compaction.CompactionError,
                       match=f"the log is already compacted at revision {last - 4}"):
        compaction.compact(data_dir, last - 4)
    with pytest.raises(compaction.CompactionError, match=(
            f"revision {last - 5} is not in the log: it holds revisions {last - 4}..{last}")):
        compaction.compact(data_dir, last - 5)


def test_a_running_server_or_a_damaged_log_is_refused(recorded: tuple[Path, int],
                                                       tmp_path: Path) -> None:
    data_dir, last = recorded
    wal, _ = WriteAheadLog.open(logcheck.log_path(data_dir))
    try:
        with pytest.raises(compaction.CompactionError, match="open in a running server"):
            compaction.compact(data_dir, 5)
    finally:
        wal.close_now()
    damaged = tmp_path / "damaged"
    shutil.copytree(data_dir, damaged)
    flip_record(damaged, last - 2)
    with pytest.raises(compaction.CompactionError, match="is damaged at offset"):
        compaction.compact(damaged, 5)
    assert not list(damaged.glob("base-*"))


def test_a_compacted_log_without_its_base_is_never_loaded(recorded: tuple[Path, int]) -> None:
    data_dir, last = recorded
    compaction.compact(data_dir, last - 4)
    base = recording.base_path(data_dir, last - 4)
    base.unlink()
    with pytest.raises(WalCorruptError, match=f"{base} is missing: the log was compacted at "
                                              f"revision {last - 4}"):
        Cluster(ClusterConfig(data_dir=data_dir, seed=1))
    with pytest.raises(history.HistoryError, match="is missing"):
        history.state_at(data_dir, progress=False)


def test_the_compact_command(recorded: tuple[Path, int],
                             capsys: pytest.CaptureFixture[str]) -> None:
    data_dir, last = recorded
    assert main(["log", "compact", str(data_dir), "--at", str(last - 3)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"compacted at revision {last - 3}: ")
    assert "3 events after it" in out
    assert main(["log", "compact", str(data_dir), "--at", str(last + 5)]) == 1
    assert "is not in the log" in capsys.readouterr().err
    assert main(["log", "compact", str(data_dir.parent / "nothing"), "--at", "3"]) == 1
    assert "holds no event log" in capsys.readouterr().err


def test_log_show_diffs_the_first_events_after_the_base_against_it(
        recorded: tuple[Path, int], capsys: pytest.CaptureFixture[str]) -> None:
    data_dir, last = recorded
    compaction.compact(data_dir, last - 6)  # before cm-0's update and cm-1's delete
    assert main(["log", "show", str(data_dir), "--diff", "--kind", "cm"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[0] == str(last - 5) and lines[1].endswith("default/cm-0")
    assert lines[2:4] == ['    + data: {"k":"v2"}', lines[3]]
    assert lines[3].endswith("default/cm-1") and lines[4] == "    deleted"
