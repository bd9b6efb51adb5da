"""Snapshots of a big log, in process: rebuilding the state at a revision from the log
(`fakeapi.replay.history.state_at`, the store's replay; issue 16 asks >= 200,000 events/s for
rebuilding state from a log), writing it as a snapshot, reading and checking the snapshot
(`fakeapi serve --from`'s scratch cluster) and committing it into a new cluster.

The log: N ConfigMaps and N/4 ResourceClaims created, then updated until it holds `--events`
events, written to a WAL file in a temporary folder (removed afterwards). Prints rates only.
Run with `.venv/bin/python bench/bench_snapshot.py [--events N] [--objects N]`.
"""

from __future__ import annotations

import argparse
import io
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchlib import RESOURCECLAIMS, configmap, header, rate_line, resource_claim, rss_mb  # noqa: E402

from fakeapi.cluster import Cluster, ClusterConfig  # noqa: E402
from fakeapi.registry.context import RequestContext  # noqa: E402
from fakeapi.replay import history, restore, snapshot  # noqa: E402
from fakeapi.storage import logcheck  # noqa: E402
from fakeapi.storage.wal import WriteAheadLog  # noqa: E402

WRITER = RequestContext(user="bench", groups=("system:masters",), field_manager="bench")


def make_log(data_dir: Path, events: int, objects: int) -> int:
    """Write the log (in memory, then its records to a WAL file); its last revision."""
    cluster = Cluster(ClusterConfig(retention=10**8, retention_bytes=1 << 40, seed=1))
    cms = cluster.kinds.by_id("configmaps")
    claims = cluster.kinds.by_id(RESOURCECLAIMS)
    assert cms is not None and claims is not None
    for i in range(objects):
        cluster.registry.create(cms, "default", configmap(f"cm-{i}"), WRITER)
        if i % 4 == 0:
            cluster.registry.create(claims, "default", resource_claim(f"rc-{i}"), WRITER)
    i = 0
    while cluster.log.revision < events:
        current = cluster.store.get("configmaps", "default", f"cm-{i % objects}")
        assert current is not None
        cluster.registry.update(cms, "default", current.name, {
            **current.object, "data": {"key": f"value-{i}"}}, WRITER)
        i += 1
    data_dir.mkdir(parents=True)
    wal, _ = WriteAheadLog.open(logcheck.log_path(data_dir))
    for event in cluster.log:
        wal.append(event.record())
    wal.flush_now()
    wal.close_now()
    return cluster.log.revision


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=300_000)
    parser.add_argument("--objects", type=int, default=20_000)
    args = parser.parse_args()
    header("bench_snapshot: state at a revision, snapshot, restore")
    root = Path(tempfile.mkdtemp(prefix="bench-snapshot-"))
    try:
        last = make_log(root / "data", args.events, args.objects)
        size = logcheck.log_path(root / "data").stat().st_size
        print(f"log: {last:,} events, {size / 1e6:,.0f} MB")
        for at in (last, last // 2):
            start = time.perf_counter()
            state = history.state_at(root / "data", at, progress=False)
            took = time.perf_counter() - start
            print(rate_line(f"state at revision {at:,} (rebuild)", at / took, 200_000,
                            " events/s"))
        out = io.StringIO()
        start = time.perf_counter()
        count = snapshot.write(state.store, out, title="bench", progress=False)
        took = time.perf_counter() - start
        print(f"{'snapshot written':<44} {count / took:>10,.0f} objects/s  ({count:,} objects, "
              f"{len(out.getvalue()) / 1e6:,.1f} MB, {took:.2f} s)")
        start = time.perf_counter()
        objects = restore.restorable(snapshot.parse(out.getvalue(), "bench"), "bench")
        took = time.perf_counter() - start
        print(f"{'snapshot read and checked (--from)':<44} {len(objects) / took:>10,.0f} "
              f"objects/s  ({took:.2f} s)")
        start = time.perf_counter()
        Cluster(ClusterConfig(restore=objects))
        took = time.perf_counter() - start
        print(f"{'restored into a new cluster':<44} {len(objects) / took:>10,.0f} objects/s  "
              f"({took:.2f} s); RSS {rss_mb():,.0f} MB")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
