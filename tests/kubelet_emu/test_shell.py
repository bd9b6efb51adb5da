"""The container shell interpreter, case by case (tests/data/kubelet_emu/shell.yaml): what a
real bash prints, how long it blocks on the virtual clock, what SIGTERM does; and which
commands it runs."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kubelet_emu import shell
from kubelet_emu.process import Process
from tests.support.paths import ROOT

NOW = "2026-03-01T12:34:56Z"
CASES = yaml.safe_load((ROOT / "tests" / "data" / "kubelet_emu" / "shell.yaml").read_text())


def run(case: dict[str, Any]
        ) -> tuple[list[str], list[str], list[str], int | None, float, Process]:
    """Run a case's script on a virtual clock: stdout, stderr, sleeps, exit, seconds."""
    files = case.get("files") or {}
    fs = shell.FileSystem({p: p for p in files}, files.get)
    sh = shell.Shell(env=dict(case.get("env") or {}), fs=fs, now=lambda: NOW)
    proc = Process(script=case["script"], sh=sh, view=[])
    out: list[str] = []
    err: list[str] = []
    steps: list[str] = []
    elapsed = 0.0
    progress = proc.resume()
    while True:
        for o in progress.output:
            (err if o.stderr else out).append(o.text)
        if progress.exit_code is not None:
            break
        wake = progress.wake_after
        if "until" in case and (wake is None or elapsed + wake > case["until"]):
            break
        steps.append(f"sleep {wake:g}" if wake is not None else "sleep -")
        if wake is None or ("term" in case and len(steps) == len(case.get("steps") or [])):
            break
        elapsed += wake
        progress = proc.resume()
    return out, err, steps, progress.exit_code, elapsed, proc


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_scripts_print_block_and_exit_as_bash_does(case: dict[str, Any]) -> None:
    out, err, steps, code, elapsed, proc = run(case)
    assert out == case.get("out", [])
    assert err == case.get("err", [])
    if "until" not in case or "steps" in case:
        assert steps == case.get("steps", [])
    if "elapsed" in case:
        assert elapsed == case["elapsed"]
    if "exit" in case:
        assert code == case["exit"]
    if "term" in case:
        answer = proc.terminate()
        if case["term"] == "ignored":
            assert answer is None
            assert proc.kill().exit_code == 137
        else:
            assert answer is not None and answer.exit_code == case["term"]


@pytest.mark.parametrize(("argv", "script"), [
    (["bash", "-c", "export"], "export"),
    (["/bin/sh", "-c", "exit 0"], "exit 0"),
    (["sleep", "3600"], "sleep 3600"),
    (["echo", "hello world"], "echo 'hello world'"),
    (["nginx", "-g", "daemon off;"], None),
    (["bash"], None),
])
def test_which_commands_the_interpreter_runs(argv: list[str], script: str | None) -> None:
    assert shell.script_of(argv) == script


def test_a_service_prints_its_view_and_exits_zero_on_term() -> None:
    sh = shell.Shell(env={}, fs=shell.FileSystem({}, lambda p: None), now=lambda: "now")
    proc = Process(script=None, sh=sh, view=["declare -x A=\"1\""], run_seconds=None)
    first = proc.resume()
    assert [o.text for o in first.output] == ['declare -x A="1"']
    assert first.wake_after is None and first.exit_code is None
    answer = proc.terminate()
    assert answer is not None and answer.exit_code == 0
    timed = Process(script=None, sh=sh, view=[], run_seconds=5)
    assert timed.resume().wake_after == 5
    assert timed.resume().exit_code == 0
