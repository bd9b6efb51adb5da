"""The full crash suite: 20 kill -9 rounds of a durable server under 24 writers and a watcher.

Run with `.venv/bin/python bench/bench_crash.py [--rounds N] [--writes N]`. Each round writes
until N acknowledgements (creates and updates of ConfigMaps), SIGKILLs the server mid-burst,
restarts it, and checks the log it recovered: every acknowledged write and every watched
event is there at its revision, and no revision seen in any round now holds anything else
(tests/support/crash.py). Prints per-round counts and the time taken; any lost or reused
revision ends the run with the assertion that found it. Same check as
`pytest -m crash_full tests/e2e/test_crash.py`.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from benchlib import CpuMeter, header

from tests.support.crash import WRITERS, run_rounds


def main() -> None:
    """Run the rounds in a temporary data directory and report them."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--writes", type=int, default=300, help="acknowledged writes per round")
    args = parser.parse_args()
    header(f"bench_crash: {args.rounds} kill -9 rounds, {WRITERS} writers + 1 watcher")
    work = Path(tempfile.mkdtemp(prefix="fakeapi-crash-"))
    meter = CpuMeter()
    started = time.perf_counter()
    try:
        ledger = run_rounds(work / "data", args.rounds, writes_per_round=args.writes)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    elapsed = time.perf_counter() - started
    for n, r in enumerate(ledger.rounds):
        print(f"  round {n + 1:>2}: {r['acked']:>4} acked, {r['watched']:>4} watched, log at "
              f"revision {r['last_revision']}")
    print(f"  {args.rounds} rounds in {elapsed:.1f} s: {len(ledger.acked)} acknowledged and "
          f"{len(ledger.watched)} watched revisions, none lost, none reused | the machine was "
          f"busy {meter.shares()['other']:.2f} cores (this run's processes included)")


if __name__ == "__main__":
    main()
