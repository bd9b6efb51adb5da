"""The `fakeapi` command: its subcommands, each in a module of its own (`serve`, `explain`,
`log`, `clock`, `snapshot`, `replay`, `node`, `driver`), which imports what it needs when it
runs."""

from __future__ import annotations

import argparse

from fakeapi.cli import clock, driver, explain, logs, node, replay, serve, snapshot


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(prog="fakeapi", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for command in (serve, explain, logs, clock, snapshot, replay, node, driver):
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point."""
    args = build_parser().parse_args(argv)
    result: int = args.run(args)
    return result
