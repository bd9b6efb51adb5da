"""The `fakeapi` command: its subcommands, each in a module of its own (`serve`, `emulate`,
`explain`, `log`, `clock`, `snapshot`, `replay`, `node`, `driver`), which imports what it
needs when it runs."""

from __future__ import annotations

import argparse
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version

from fakeapi import KUBERNETES_VERSION
from fakeapi.cli import clock, driver, emulate, explain, logs, node, replay, serve, snapshot


def version() -> str:
    """The installed package's version."""
    try:
        return package_version("fakeapi")
    except PackageNotFoundError:  # run from a tree that isn't installed
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(
        prog="fakeapi", description="An event-sourced fake Kubernetes 1.37 API server with "
        "emulated nodes, fake DRA drivers and the control plane's components; record, replay "
        "and drive its clock. `fakeapi COMMAND --help` tells more.")
    parser.add_argument("--version", action="version",
                        version=f"fakeapi {version()} (Kubernetes {KUBERNETES_VERSION})")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in (serve, emulate, explain, logs, clock, snapshot, replay, node, driver):
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point."""
    args = build_parser().parse_args(argv)
    result: int = args.run(args)
    return result
