"""`fakeapi snapshot DIR --at REV -o FILE`: the state of a data directory's log at a
revision, as multi-document YAML for `kubectl apply -f` and `fakeapi serve --from`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def parse_revision(text: str) -> int:
    """`--at`: a revision number."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid revision {text!r}: a number") from None


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`fakeapi snapshot` and its options."""
    cmd = sub.add_parser("snapshot", help="write the state at a revision as YAML that kubectl "
                                          "apply and fakeapi serve --from load")
    cmd.add_argument("data_dir", type=Path, metavar="DIR", help="a data directory (--data-dir)")
    cmd.add_argument("--at", type=parse_revision, metavar="REV",
                     help="the revision (default: the end of the log)")
    cmd.add_argument("-o", "--output", type=Path, metavar="FILE",
                     help="where to write it (default: stdout)")
    cmd.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """0 when written; 1 for a damaged log; 2 for no log or no such revision."""
    from fakeapi.replay import history, snapshot

    try:
        state = history.state_at(args.data_dir, args.at)
    except history.HistoryError as e:
        print(f"fakeapi: {e}", file=sys.stderr)
        return 1 if isinstance(e, history.LogDamaged) else 2
    title = (f"fakeapi snapshot of {args.data_dir} at revision {state.revision} (the log ends "
             f"at {state.last})")
    if args.output is None or str(args.output) == "-":
        snapshot.write(state.store, sys.stdout, title=title)
        return 0
    tmp = args.output.with_name(f".{args.output.name}.tmp")
    try:
        with open(tmp, "w") as out:
            count = snapshot.write(state.store, out, title=title)
        tmp.replace(args.output)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        print(f"fakeapi: can't write {args.output}: {e}", file=sys.stderr)
        return 2
    print(f"{count} objects at revision {state.revision} written to {args.output}",
          file=sys.stderr)
    return 0
