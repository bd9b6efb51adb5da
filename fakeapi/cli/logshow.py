"""`fakeapi log show`: a recording's events as a table, JSON lines or YAML documents, from a
data directory's log file or from a running server's `/debug/fakeapi/log` (`--kubeconfig`,
`--follow`).

A stream, not a page: rows are printed as the reader reaches them (the table's columns are
sized by its first rows), so the first screen of a big log is there at once; a filtered scan
or a diff shows a progress bar on a terminal (stderr). Exit 0, 1 for a log damaged where the
reader got to (what came before it was printed), 2 for no log, a newer format or bad
options.
"""

from __future__ import annotations

import argparse
import os
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fakeapi.registry.kinds import KindTable
    from fakeapi.storage.log import Event

TABLE_SAMPLE = 50
"""Rows the table's column widths are taken from."""


def add_arguments(show: argparse.ArgumentParser) -> None:
    """The options of `fakeapi log show`."""
    from fakeapi.cli import remote

    show.add_argument("data_dir", type=Path, metavar="DIR", nargs="?",
                      help="the data directory whose log to read (or use --kubeconfig)")
    remote.add_kubeconfig_argument(show)
    show.add_argument("-o", "--output", choices=("table", "json", "yaml"), default="table",
                      help="a table (default), or the events as JSON lines or YAML")
    show.add_argument("--kind", help="resource id, plural, singular, kind or short name")
    show.add_argument("-n", "--namespace", help="only objects of this namespace")
    show.add_argument("--name", help="only objects of this name")
    show.add_argument("--actor", help="user or component identity, exactly")
    show.add_argument("--since", metavar="REV|TIME", help="from this revision or RFC 3339 time")
    show.add_argument("--until", metavar="REV|TIME", help="up to this revision or time")
    show.add_argument("--diff", action="store_true",
                      help="under each event, its field-level change against the object's "
                           "previous version")
    show.add_argument("--diff-all", action="store_true",
                      help="with --diff, also resourceVersion and managedFields")
    show.add_argument("-f", "--follow", action="store_true",
                      help="keep listing new events of a running server (its --kubeconfig, "
                           "or DIR's kubeconfig)")


def run(args: argparse.Namespace) -> int:
    """List; see the module's exit codes."""
    from fakeapi.cli.remote import RemoteError
    from fakeapi.registry.loglisting import ListingError
    from fakeapi.storage.recording import RecordingMissing
    from fakeapi.storage.walformat import WalCorruptError, WalDamagedError

    if args.data_dir is None and args.kubeconfig is None:
        print("fakeapi: log show needs DIR or --kubeconfig", file=sys.stderr)
        return 2
    out = sys.stdout
    try:
        if args.kubeconfig is not None or args.follow:
            entries = _remote(args)
        else:
            entries = _local(args)
        _print(entries, args, out)
    except WalDamagedError as e:
        out.flush()
        print(f"fakeapi: {e}", file=sys.stderr)
        return 1
    except (ListingError, RecordingMissing, WalCorruptError, RemoteError) as e:
        out.flush()
        text = str(e)
        print(text if text.startswith(("fakeapi:", "Error from server")) else f"fakeapi: {e}",
              file=sys.stderr)
        return 2
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130
    return 0


def _local(args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    """The entries of DIR's log file."""
    from fakeapi.registry import loglisting
    from fakeapi.storage import recording

    def kinds() -> KindTable:
        from fakeapi.registry.kinds import served_kinds
        return served_kinds()

    options = vars(args)
    filter = loglisting.filter_from(options.get, kinds)
    header = recording.read_header(args.data_dir)  # no log, or a newer format: first
    bounded = isinstance(filter.since, int) or isinstance(filter.until, int)
    last = recording.last_revision(args.data_dir) if bounded or sys.stderr.isatty() else 0
    if bounded:
        loglisting.check_bounds(filter, last)
    scan = args.diff or any(getattr(args, f) for f in ("kind", "namespace", "name", "actor"))
    start = 1 if args.diff else filter.first_revision()
    events = recording.events(args.data_dir, since=start)
    known: list[Event] = []
    if args.diff and header.base:  # a compacted log: the versions its base holds
        from fakeapi.storage import compaction
        from fakeapi.storage.log import Event as Stored
        known = [Stored.from_record(r, None)
                 for r in compaction.read_base(args.data_dir, header.base)]
    if not (scan and sys.stderr.isatty()):
        yield from loglisting.select(events, filter, with_object=args.output != "table",
                                     with_diff=args.diff, everything=args.diff_all,
                                     known=known)
        return
    from tqdm import tqdm

    with tqdm(total=last - start + 1, unit="event", unit_scale=True, desc="reading the log",
              file=sys.stderr, leave=False, mininterval=0.5) as bar:

        def seen(_event: Event) -> None:
            bar.update()

        yield from loglisting.select(events, filter, with_object=args.output != "table",
                                     with_diff=args.diff, everything=args.diff_all, seen=seen,
                                     known=known)


def _remote(args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    """The entries a running server lists at /debug/fakeapi/log."""
    import orjson

    from fakeapi.cli import remote
    from fakeapi.http.loglist import PATH  # a constant: aiohttp is imported with it

    kubeconfig = args.kubeconfig or Path(args.data_dir) / "kubeconfig"
    query = {k: getattr(args, k) for k in ("kind", "namespace", "name", "actor", "since",
                                           "until") if getattr(args, k)}
    if args.diff:
        query["diff"] = "true"
    if args.output == "table":
        query["object"] = "false"
    if args.follow:
        query["watch"] = "true"
    path = PATH + ("?" + urllib.parse.urlencode(query) if query else "")
    for line in remote.stream_lines(kubeconfig, path):
        if line.strip():
            yield orjson.loads(line)


def _print(entries: Iterator[dict[str, Any]], args: argparse.Namespace, out: Any) -> None:
    """Write the entries as asked, flushing as they come when following."""
    if args.output == "table":
        _table(entries, args.diff, out, args.follow)
        return
    if args.output == "json":
        import orjson
        for e in entries:
            out.write(orjson.dumps(e).decode() + "\n")
            if args.follow:
                out.flush()
        return
    import yaml
    for e in entries:
        out.write("---\n" + yaml.safe_dump(e, sort_keys=False))
        if args.follow:
            out.flush()


def _table(entries: Iterator[dict[str, Any]], diff: bool, out: Any, follow: bool) -> None:
    """Columns sized by the first TABLE_SAMPLE rows (or by each row while following); the
    diff lines under their row."""
    from fakeapi.registry.loglisting import COLUMNS, row

    sample: list[dict[str, Any]] = []
    widths = [len(c) for c in COLUMNS]

    def emit(e: dict[str, Any]) -> None:
        cells = row(e)
        out.write("   ".join(c.ljust(w) for c, w in zip(cells[:-1], widths, strict=False))
                  + "   " + cells[-1] + "\n")
        for line in e.get("diff") or () if diff else ():
            out.write(f"    {line}\n")
        if follow:
            out.flush()

    def header() -> None:
        out.write("   ".join(c.ljust(w) for c, w in zip(COLUMNS[:-1], widths, strict=False))
                  + "   " + COLUMNS[-1] + "\n")

    started = False

    def start(rows: list[dict[str, Any]], slack: int) -> None:
        nonlocal started
        if not started:
            _fit(widths, rows, slack=slack)
            header()
            for s in sample:
                emit(s)
            started = True

    try:
        for e in entries:
            if not started and not follow and len(sample) < TABLE_SAMPLE:
                sample.append(e)
                continue
            start(sample or [e], 0 if sample else 12)
            emit(e)
    finally:  # the rows read before damage or an interrupt are still printed
        if sample:
            start(sample, 0)


def _fit(widths: list[int], entries: list[dict[str, Any]], slack: int = 0) -> None:
    from fakeapi.registry.loglisting import row

    for e in entries:
        for i, cell in enumerate(row(e)):
            widths[i] = max(widths[i], len(cell) + slack)
