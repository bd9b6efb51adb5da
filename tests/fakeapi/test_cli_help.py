"""`fakeapi --help` tells a newcomer what each command and option is for (issue 18, the first
five minutes): a description of the tool, `--version`, and help text on every option of every
command."""

from __future__ import annotations

import argparse
import subprocess
import sys
from importlib.metadata import version

import pytest

from fakeapi import KUBERNETES_VERSION
from fakeapi.cli.main import build_parser
from tests.support.paths import ROOT


def commands() -> dict[str, argparse.ArgumentParser]:
    """Every command's parser, nested ones included (`log show`, `node env`)."""
    out: dict[str, argparse.ArgumentParser] = {}

    def walk(prefix: str, parser: argparse.ArgumentParser) -> None:
        out[prefix] = parser
        for action in parser._actions:  # argparse keeps its subcommands here only
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(f"{prefix} {name}".strip(), sub)
    walk("", build_parser())
    return out


@pytest.mark.parametrize("command", sorted(commands()), ids=lambda c: c or "fakeapi")
def test_every_option_says_what_it_is_for(command: str) -> None:
    parser = commands()[command]
    silent = [a.option_strings[-1] for a in parser._actions
              if a.option_strings and not a.help and not isinstance(a, argparse._HelpAction)]
    assert silent == []


def test_version_names_the_package_and_the_kubernetes_version() -> None:
    res = subprocess.run([sys.executable, "-m", "fakeapi.cli", "--version"], cwd=ROOT,
                         capture_output=True, text=True, check=True)
    assert res.stdout == f"fakeapi {version('fakeapi')} (Kubernetes {KUBERNETES_VERSION})\n"
    assert "record, replay" in str(build_parser().description)  # the tool, not only serve
