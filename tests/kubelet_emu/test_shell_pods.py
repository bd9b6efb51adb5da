"""The container shell inside a pod on an emulated node, on the virtual clock: a script that
loops keeps its container running and logs as it goes; a script the shell refuses is a real
Error exit that restarts with CrashLoopBackOff and never makes the pod Ready."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fakeapi.machinery.clock import VirtualClock
from tests.support.emulated_nodes import emulated_plane, kubelet_of, present_condition

TICKS = "i=0; while true; do echo tick $i; i=$((i+1)); sleep 1; done"


def shell_pod(name: str, script: str) -> dict[str, Any]:
    """A pod on worker-0 whose one container runs `bash -c script`."""
    return {"metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": "worker-0", "containers": [
                {"name": "ctr0", "image": "busybox", "command": ["bash", "-c", script]}]}}


async def test_the_tick_loop_runs_and_logs_on_the_clock(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1) as plane:
        c = plane.cluster.client("test-admin")
        await c.create("pods", shell_pod("ticker", TICKS))
        await plane.settle()
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(2)
        await plane.settle()
        log = kubelet_of(plane).container_log("default", "ticker", "ctr0")
        assert log is not None and log.splitlines() == ["tick 0", "tick 1", "tick 2"]
        status = (await c.get("pods", "ticker", "default"))["status"]
        cs = status["containerStatuses"][0]
        assert "running" in cs["state"] and cs["restartCount"] == 0
        assert present_condition({"status": status}, "Ready")["status"] == "True"


@pytest.mark.parametrize(("script", "code", "message"), [
    ("echo up; coproc cat", 2, "bash: line 1: coproc: not supported by fakeapi's container shell"),
    ("i=0; echo $((i / 0))", 1, 'bash: line 1: i / 0: division by 0 (error token is "0")'),
    ("nvidia-smi", 127, "bash: line 1: nvidia-smi: command not found"),
])
async def test_a_refused_script_crashes_and_backs_off(tmp_path: Path, script: str, code: int,
                                                       message: str) -> None:
    async with emulated_plane(tmp_path, nodes=1) as plane:
        c = plane.cluster.client("test-admin")
        await c.create("pods", shell_pod("crash", script))
        await plane.settle()
        log = kubelet_of(plane).container_log("default", "crash", "ctr0")
        assert log is not None and message in log.splitlines()
        status = (await c.get("pods", "crash", "default"))["status"]
        cs = status["containerStatuses"][0]
        assert cs["state"] == {"waiting": {"reason": "CrashLoopBackOff"}}
        assert cs["lastState"]["terminated"]["exitCode"] == code
        assert cs["lastState"]["terminated"]["reason"] == "Error"
        assert not cs["ready"]
        assert present_condition({"status": status}, "Ready")["status"] == "False"
