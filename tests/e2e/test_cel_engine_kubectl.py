"""`fakeapi serve --cel-engine`: admission compiles CEL selectors with the chosen engine.

A real server per engine and the real kubectl v1.37: a good DeviceClass is created, a
selector that compares the string `device.driver` with an int is refused at admission with
upstream's 422 message on both engines, and an unknown engine stops the server at start.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from fakeapi import cel
from tests.support.kubectl import Kubectl
from tests.support.paths import ROOT
from tests.support.processes import ServerProcess, start_server


@pytest.fixture(params=cel.ENGINES, scope="module")
def engine_server(request: pytest.FixtureRequest,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server running the engine of this parameter."""
    if request.param not in cel.available_engines():
        pytest.skip(f"{request.param} is not installed")
    srv = start_server(tmp_path_factory.mktemp("cel-engine"), "--cel-engine", request.param)
    yield srv
    assert srv.stop() == 0


def _class(name: str, expression: str) -> str:
    return yaml.safe_dump({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                           "metadata": {"name": name},
                           "spec": {"selectors": [{"cel": {"expression": expression}}]}})


def test_admission_compiles_with_the_chosen_engine(kubectl_binary: str,
                                                    engine_server: ServerProcess) -> None:
    kubectl = Kubectl(kubectl_binary, engine_server.kubeconfig)
    good = _class("gpu", 'device.driver == "gpu.example.com" && device.attributes['
                         '"gpu.example.com"].memory.compareTo(quantity("1Gi")) > 0')
    assert "deviceclass.resource.k8s.io/gpu created" in kubectl("create", "-f", "-", input=good)
    bad = kubectl.run("create", "-f", "-", input=_class("bad", "device.driver == 1"),
                      check=False)
    assert bad.returncode == 1
    assert ('The DeviceClass "bad" is invalid: spec.selectors[0].cel.expression: Invalid value: '
            '"device.driver == 1": compilation failed: ERROR: <input>:1:15: found no matching '
            "overload for '_==_' applied to '(string, int)'") in bad.stderr
    assert "deviceclass.resource.k8s.io/bad" not in kubectl("get", "deviceclasses", "-o", "name")


def test_an_unknown_engine_is_refused_at_start(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "fakeapi.cli", "serve", "--port", "0",
                          "--data-dir", str(tmp_path), "--cel-engine", "cel-rust"],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert res.returncode == 2
    assert "argument --cel-engine: unknown CEL engine 'cel-rust'" in res.stderr
