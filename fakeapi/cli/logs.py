"""`fakeapi log`: show, verify, repair or compact a data directory's event log."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`fakeapi log show [DIR]`, `fakeapi log verify DIR`, `fakeapi log repair DIR
    --truncate-at REV` and `fakeapi log compact DIR --at REV`."""
    from fakeapi.cli import logshow

    log_cmd = sub.add_parser(
        "log", help="show, check, repair or compact a data directory's event log")
    log_sub = log_cmd.add_subparsers(dest="log_command", required=True)
    show = log_sub.add_parser("show", help="list the recorded events (a file or a live server)")
    logshow.add_arguments(show)
    verify = log_sub.add_parser("verify", help="say whether the log is sound, and where not")
    verify.add_argument("data_dir", type=Path, metavar="DIR")
    repair = log_sub.add_parser("repair", help="keep revisions 1..REV, cut (and save) the rest")
    repair.add_argument("data_dir", type=Path, metavar="DIR")
    repair.add_argument("--truncate-at", type=int, required=True, metavar="REV",
                        help="the last revision to keep")
    compact = log_sub.add_parser(
        "compact", help="keep the state at REV as the log's base and only the events after it")
    compact.add_argument("data_dir", type=Path, metavar="DIR")
    compact.add_argument("--at", type=int, required=True, metavar="REV",
                         help="the revision whose state becomes the base")
    log_cmd.set_defaults(run=run_log_command)


def run_log_command(args: argparse.Namespace) -> int:
    """`fakeapi log show` (see `cli.logshow`), or `verify|repair|compact`: 0 when the log is
    sound (or was repaired or compacted), 1 when it is damaged (or the repair or compaction
    was refused), 2 when it is no fakeapi log at all."""
    if args.log_command == "show":
        from fakeapi.cli import logshow
        return logshow.run(args)
    from fakeapi.storage import compaction, logcheck

    if args.log_command == "verify":
        return _answer(lambda: _verify(args.data_dir), ())
    if args.log_command == "repair":
        return _answer(lambda: _repair(args.data_dir, args.truncate_at), logcheck.RepairError)
    return _answer(lambda: _compact(args.data_dir, args.at), compaction.CompactionError)


def _answer(action: Callable[[], tuple[int, str]],
            refused: type[Exception] | tuple[()]) -> int:
    """Print what `action` says and return its code; 1 for a refusal, 2 for no log."""
    from fakeapi.storage.walformat import WalCorruptError

    try:
        code, text = action()
    except refused as e:
        print(f"fakeapi: {e}", file=sys.stderr)
        return 1
    except (WalCorruptError, OSError) as e:
        print(f"fakeapi: {e}", file=sys.stderr)
        return 2
    print(text)
    return code


def _verify(data_dir: Path) -> tuple[int, str]:
    from fakeapi.storage import logcheck

    report = logcheck.verify(data_dir)
    return (1 if report.problem is not None and report.problem.refused else 0,
            logcheck.format_report(report))


def _repair(data_dir: Path, truncate_at: int) -> tuple[int, str]:
    from fakeapi.storage import logcheck

    done = logcheck.repair(data_dir, truncate_at)
    if done.saved is None:
        return 0, f"nothing to cut: the log ends at revision {done.kept}"
    return 0, (f"kept revisions 1..{done.kept}; cut {done.cut_bytes:,} bytes, saved to "
               f"{done.saved}")


def _compact(data_dir: Path, at: int) -> tuple[int, str]:
    from fakeapi.storage import compaction

    done = compaction.compact(data_dir, at)
    return 0, (f"compacted at revision {done.base}: {done.objects:,} objects in the base, "
               f"{done.kept:,} events after it; {done.before_bytes:,} -> "
               f"{done.after_bytes:,} bytes in the log")
