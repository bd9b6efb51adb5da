"""`fakeapi log`: show, verify, repair or compact a data directory's event log."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`fakeapi log show [DIR]`, `fakeapi log verify DIR` and `fakeapi log repair DIR
    --truncate-at REV`."""
    from fakeapi.cli import logshow

    log_cmd = sub.add_parser("log", help="show, check or repair a data directory's event log")
    log_sub = log_cmd.add_subparsers(dest="log_command", required=True)
    show = log_sub.add_parser("show", help="list the recorded events (a file or a live server)")
    logshow.add_arguments(show)
    verify = log_sub.add_parser("verify", help="say whether the log is sound, and where not")
    verify.add_argument("data_dir", type=Path, metavar="DIR")
    repair = log_sub.add_parser("repair", help="keep revisions 1..REV, cut (and save) the rest")
    repair.add_argument("data_dir", type=Path, metavar="DIR")
    repair.add_argument("--truncate-at", type=int, required=True, metavar="REV")
    compact = log_sub.add_parser(
        "compact", help="keep the state at REV as the log's base and only the events after it")
    compact.add_argument("data_dir", type=Path, metavar="DIR")
    compact.add_argument("--at", type=int, required=True, metavar="REV")
    log_cmd.set_defaults(run=run_log_command)


def run_log_command(args: argparse.Namespace) -> int:
    """`fakeapi log show` (see `cli.logshow`), or `verify|repair`: 0 when the log is sound
    (or was repaired), 1 when it is damaged (or the repair was refused), 2 when it is no
    fakeapi log at all."""
    if args.log_command == "show":
        from fakeapi.cli import logshow
        return logshow.run(args)
    from fakeapi.storage import logcheck
    from fakeapi.storage.wal import WalCorruptError

    if args.log_command == "compact":
        return _compact(args.data_dir, args.at)
    try:
        if args.log_command == "verify":
            report = logcheck.verify(args.data_dir)
            print(logcheck.format_report(report))
            return 1 if report.problem is not None and report.problem.refused else 0
        done = logcheck.repair(args.data_dir, args.truncate_at)
    except logcheck.RepairError as e:
        print(f"fakeapi: {e}", file=sys.stderr)
        return 1
    except (WalCorruptError, OSError) as e:
        print(f"fakeapi: {e}", file=sys.stderr)
        return 2
    if done.saved is None:
        print(f"nothing to cut: the log ends at revision {done.kept}")
    else:
        print(f"kept revisions 1..{done.kept}; cut {done.cut_bytes:,} bytes, saved to "
              f"{done.saved}")
    return 0


def _compact(data_dir: Path, at: int) -> int:
    """`fakeapi log compact DIR --at REV`: 0 when done, 1 when refused, 2 when no log."""
    from fakeapi.storage import compaction
    from fakeapi.storage.wal import WalCorruptError

    try:
        done = compaction.compact(data_dir, at)
    except compaction.CompactionError as e:
        print(f"fakeapi: {e}", file=sys.stderr)
        return 1
    except (WalCorruptError, OSError) as e:
        print(f"fakeapi: {e}", file=sys.stderr)
        return 2
    print(f"compacted at revision {done.base}: {done.objects:,} objects in the base, "
          f"{done.kept:,} events after it; {done.before_bytes:,} -> {done.after_bytes:,} "
          "bytes in the log")
    return 0
