"""`fakeapi log show` over a 1,000,000-event log (issue 16: the first page in <= 0.5 s).

The log: ConfigMaps in 10 namespaces created and then updated (about 600 bytes of JSON
each, a realistic request head on each record), written straight to a format-2 WAL file in
a temporary folder (removed afterwards). Measured: the first page as a user sees it (a
`fakeapi log show DIR` child process, spawn to its 51st line: the header and 50 rows), the
same in process, the whole table, a filtered scan (--kind --namespace --name, one object's
events), JSON entries (every object decoded), and --diff over the first 100,000 events.
Prints rates only. Run with `.venv/bin/python bench/bench_logshow.py [--events N]`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import orjson  # noqa: E402
from benchlib import ROOT, header, max_line, rate_line  # noqa: E402

from fakeapi.cli import main as cli  # noqa: E402
from fakeapi.storage import recording  # noqa: E402
from fakeapi.storage.log import Event  # noqa: E402
from fakeapi.storage.wal import WriteAheadLog  # noqa: E402

OBJECTS = 20_000


def make_log(data_dir: Path, events: int) -> None:
    """`events` ConfigMap events (creates, then updates) in a new log of `data_dir`."""
    data_dir.mkdir(parents=True)
    wal, _ = WriteAheadLog.open(recording.log_file(data_dir),
                                header=recording.header_record({"seed": 1}, "2026-01-01T00:00:00Z"))
    for rev in range(1, events + 1):
        i = (rev - 1) % OBJECTS
        ns, name = f"ns-{i % 10}", f"cm-{i}"
        obj = {"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": name, "namespace": ns, "uid": f"uid-{i:032d}",
                            "resourceVersion": str(rev), "labels": {"app": "bench"},
                            "creationTimestamp": "2026-01-01T00:00:00Z"},
               "data": {"key": f"value-{rev}", "payload": "x" * 300}}
        seconds = rev // 1000
        event = Event(revision=rev, type="ADDED" if rev <= OBJECTS else "MODIFIED",
                      resource="configmaps", namespace=ns, name=name, object=obj,
                      raw=orjson.dumps(obj), prev_raw=None, actor="kubernetes-admin",
                      time=f"2026-01-{1 + seconds // 86400:02d}T{seconds // 3600 % 24:02d}:"
                           f"{seconds // 60 % 60:02d}:{seconds % 60:02d}Z",
                      request={"v": "update" if rev > OBJECTS else "create", "fm": "bench",
                               "m": "PUT" if rev > OBJECTS else "POST",
                               "p": f"/api/v1/namespaces/{ns}/configmaps"})
        wal.append(event.record())
        if rev % 50_000 == 0:
            wal.flush_now()
    wal.flush_now()
    wal.close_now()


def first_page_child(data_dir: Path) -> float:
    """Spawn to the 51st line of a `fakeapi log show DIR` child (then it is stopped)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "fakeapi.cli", "log", "show", str(data_dir)],
                            stdout=subprocess.PIPE, cwd=ROOT, env=env)
    assert proc.stdout is not None
    for _ in range(51):
        proc.stdout.readline()
    took = time.perf_counter() - start
    proc.kill()
    proc.wait()
    return took


def in_process(*argv: str, first_lines: int = 0) -> tuple[float, int]:
    """Seconds for `fakeapi log show ARGV` in this process (to its first `first_lines`
    lines when given), and the lines it printed."""

    class Stop(Exception):
        pass

    class Lines(io.StringIO):
        count = 0

        def write(self, s: str) -> int:
            self.count += s.count("\n")
            if first_lines and self.count >= first_lines:
                raise Stop
            return len(s)

    out = Lines()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out):
        try:
            code = cli.main(["log", "show", *argv])
            assert code == 0, code
        except Stop:
            pass
    return time.perf_counter() - start, out.count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=1_000_000)
    args = parser.parse_args()
    header("bench_logshow: fakeapi log show over a big log")
    root = Path(tempfile.mkdtemp(prefix="bench-logshow-"))
    data = root / "data"
    try:
        start = time.perf_counter()
        make_log(data, args.events)
        size = recording.log_file(data).stat().st_size
        print(f"log: {args.events:,} events, {size / 1e6:,.0f} MB (written in "
              f"{time.perf_counter() - start:.1f} s)")
        print(max_line("first page, child process (spawn to row 50)", first_page_child(data),
                       0.5, " s"))
        took, _ = in_process(str(data), first_lines=51)
        print(max_line("first page, in process", took, 0.5, " s"))
        took, _ = in_process(str(data), "--since", str(args.events - 100), first_lines=51)
        print(max_line("first page from the last 100 (--since REV)", took, 0.5, " s"))
        took, lines = in_process(str(data))
        print(f"{'whole table':<44} {args.events / took:>10,.0f} events/s  ({took:.2f} s, "
              f"{lines:,} lines)")
        took, lines = in_process(str(data), "--kind", "cm", "-n", "ns-3", "--name", "cm-13")
        print(f"{'filtered scan (one object)':<44} {args.events / took:>10,.0f} events/s  "
              f"({took:.2f} s, {lines:,} lines)")
        part = min(args.events, 100_000)
        took, lines = in_process(str(data), "-o", "json", "--until", str(part))
        print(f"{'-o json (objects decoded), first 100k':<44} {part / took:>10,.0f} events/s  "
              f"({took:.2f} s)")
        took, lines = in_process(str(data), "--diff", "--until", str(part))
        print(rate_line("--diff, first 100k", part / took, 0, " events/s").split(" target")[0]
              + f"  ({took:.2f} s, {lines:,} lines)")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
