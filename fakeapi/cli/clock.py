"""`fakeapi clock show` and `fakeapi clock advance DURATION`: read or move a running server's
clock (the emulator's `clocks/cluster` and its `advance` subresource)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from fakeapi.cli import remote
from fakeapi.machinery.durations import DurationError, format_duration, parse_duration

CLOCK_PATH = "/apis/emulator.fakeapi.dev/v1alpha1/clocks/cluster"


def parse_advance(text: str) -> str:
    """DURATION: a Go duration, not negative (checked before anything is sent)."""
    try:
        ns = parse_duration(text)
    except DurationError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if ns < 0:
        raise argparse.ArgumentTypeError(f"a clock can't go back: {json.dumps(text)} is negative")
    return text


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`fakeapi clock show|advance`."""
    clock = sub.add_parser("clock", help="show or advance a running server's clock")
    clock_sub = clock.add_subparsers(dest="clock_command", required=True)
    show = clock_sub.add_parser("show", help="the clock's time now and its mode")
    remote.add_kubeconfig_argument(show)
    show.add_argument("-o", "--output", choices=["text", "json"], default="text",
                      help="text (default) or the Clock object as JSON")
    advance = clock_sub.add_parser(
        "advance", help="move a virtual clock on (fakeapi serve --clock virtual): every timer "
                        "due on the way fires at its own time")
    advance.add_argument("duration", type=parse_advance, metavar="DURATION",
                         help="Go duration syntax: 300ms, 30s, 5m, 1.5h, 2h45m")
    remote.add_kubeconfig_argument(advance)
    # `advance -5m` is a duration that argparse would take for an option: let it through to
    # its check, which says what is wrong with it
    advance._negative_number_matcher = re.compile(r"^-[0-9.]")
    clock.set_defaults(run=run_clock_command)


def reading(kubeconfig: Path | None) -> dict[str, str]:
    """The clock's time now and mode, from its `kubectl get` Table (the Now column is the
    server's clock at the time of the request)."""
    table = remote.request(kubeconfig, CLOCK_PATH, accept=remote.TABLE)
    names = [c["name"] for c in table["columnDefinitions"]]
    cells = dict(zip(names, table["rows"][0]["cells"], strict=True))
    return {"now": cells["Now"], "mode": cells["Mode"]}


def run_clock_command(args: argparse.Namespace) -> int:
    """0 when done, 1 for an error from the server (or none reached)."""
    try:
        if args.clock_command == "advance":
            remote.request(args.kubeconfig, CLOCK_PATH + "/advance", timeout=None, body={
                "apiVersion": "emulator.fakeapi.dev/v1alpha1", "kind": "ClockAdvance",
                "duration": args.duration})
        now = reading(args.kubeconfig)
    except remote.RemoteError as e:
        print(e, file=sys.stderr)
        return 1
    if args.clock_command == "advance":
        print(f"advanced {format_duration(parse_duration(args.duration))}: now {now['now']} "
              f"({now['mode']})")
    elif args.output == "json":
        print(json.dumps(now))
    else:
        print(f"now:  {now['now']}\nmode: {now['mode']}")
    return 0
