"""The `fakeapi` command: its subcommands, each in a module of its own (`serve`, `emulate`,
`explain`, `log`, `clock`, `snapshot`, `replay`, `node`, `driver`), which imports what it
needs when it runs."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NoReturn

from fakeapi import KUBERNETES_VERSION
from fakeapi.cli import clock, driver, emulate, explain, logs, node, replay, serve, snapshot


def version() -> str:
    """The installed package's version."""
    from importlib import metadata  # 40 ms of imports that only --version needs

    try:
        return metadata.version("fakeapi")
    except metadata.PackageNotFoundError:  # run from a tree that isn't installed
        return "unknown"


class VersionAction(argparse.Action):
    """`--version`: print the package's and Kubernetes' versions and exit (argparse's own
    action wants the text before parsing, so every command would look it up)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> NoReturn:
        print(f"fakeapi {version()} (Kubernetes {KUBERNETES_VERSION})")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(
        prog="fakeapi", description="An event-sourced fake Kubernetes 1.37 API server with "
        "emulated nodes, fake DRA drivers and the control plane's components; record, replay "
        "and drive its clock. `fakeapi COMMAND --help` tells more.")
    parser.add_argument("--version", action=VersionAction,
                        help="show the program's version number and exit")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in (serve, emulate, explain, logs, clock, snapshot, replay, node, driver):
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point."""
    args = build_parser().parse_args(argv)
    result: int = args.run(args)
    return result
