"""The one kubectl lookup of the tests (tests.support.kubectl): found as $KUBECTL or the project's
copy; when missing, skipped locally and failed under CI. And the line reader the e2e tests wait
on instead of sleeping."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.kubectl import in_ci, kubectl_path, require_kubectl
from tests.support.processes import LineReader

MISSING = "/nonexistent/kubectl"


def _executable(path: Path) -> Path:
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize(("ci", "want"), [
    (None, False), ("", False), ("0", False), ("false", False), ("No", False),
    ("true", True), ("1", True), ("yes", True), ("TRUE", True),
])
def test_in_ci(monkeypatch: pytest.MonkeyPatch, ci: str | None, want: bool) -> None:
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    assert in_ci() is want


@pytest.mark.parametrize(("ci", "outcome"), [
    (None, pytest.skip.Exception),
    ("false", pytest.skip.Exception),
    ("true", pytest.fail.Exception),
])
def test_missing_kubectl_skips_locally_and_fails_under_ci(
        monkeypatch: pytest.MonkeyPatch, ci: str | None, outcome: type[BaseException]) -> None:
    monkeypatch.setenv("KUBECTL", MISSING)
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match=f"kubectl not found at {MISSING}"):
        require_kubectl()


def test_kubectl_from_a_path_or_a_command_on_path(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    binary = _executable(tmp_path / "kubectl-1.37")
    monkeypatch.setenv("KUBECTL", str(binary))
    assert kubectl_path() == require_kubectl() == str(binary)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("KUBECTL", "kubectl-1.37")
    assert kubectl_path() == str(binary)


@pytest.mark.parametrize("kind", ["not-executable", "directory", "unknown-command"])
def test_unusable_kubectl_is_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                     kind: str) -> None:
    target = tmp_path / "kubectl"
    if kind == "not-executable":
        target.write_text("#!/bin/sh\n")
        wanted = str(target)
    elif kind == "directory":
        target.mkdir()
        wanted = str(target)
    else:
        monkeypatch.setenv("PATH", str(tmp_path))
        wanted = "no-such-kubectl"
    monkeypatch.setenv("KUBECTL", wanted)
    assert kubectl_path() is None


def _child(code: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)


def test_line_reader_waits_for_the_expected_line() -> None:
    # the child prints "ready" only after reading a line: the wait can't be satisfied early
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; print('a', flush=True); sys.stdin.readline(); "
         "print('ready', flush=True)"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    reader = LineReader(proc.stdout)
    assert reader.wait_for(lambda lines: "a" in lines) == ["a"]
    proc.stdin.write("go\n")
    proc.stdin.flush()
    assert reader.wait_for(lambda lines: "ready" in lines) == ["a", "ready"]
    assert proc.wait(10) == 0
    assert reader.rest() == ["a", "ready"]


def test_line_reader_fails_when_the_output_ends_without_the_line() -> None:
    proc = _child("print('only')")
    assert proc.stdout is not None
    reader = LineReader(proc.stdout)
    with pytest.raises(AssertionError, match=r"output ended; lines so far: \['only'\]"):
        reader.wait_for(lambda lines: "never" in lines)
    proc.wait(10)


def test_line_reader_fails_at_the_deadline() -> None:
    proc = _child("import time; print('x', flush=True); time.sleep(60)")  # killed below
    assert proc.stdout is not None
    reader = LineReader(proc.stdout)
    try:
        with pytest.raises(AssertionError, match="nothing after 0.2 s"):
            reader.wait_for(lambda lines: "never" in lines, timeout=0.2)
    finally:
        proc.kill()
        proc.wait(10)
