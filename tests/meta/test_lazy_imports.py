"""What a process loads is what it uses: `fakeapi --help` loads no server, component or
heavy dependency; a server loads only the CEL engine it runs, and grpcio, pydantic and the
jsonschema validator only when a node or a request needs them (protobuf when a kubelet
plugin registers).

Each case runs in a fresh interpreter and reads `sys.modules`, so it checks what was
imported, not how long it took (the timings are bench/bench_startup.py's).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.paths import ROOT

HEAVY = ("aiohttp", "pydantic", "grpc", "cryptography", "celpy", "cel_expr_python", "yaml",
         "jsonschema", "kubernetes_validate")
COMPONENT_CODE = ("scheduler.scheduler", "kubelet_emu.kubelet", "kubelet_emu.profile",
                  "controllers.resourceclaim", "controllers.namespace")
CORE = ("fakeapi.cluster", "fakeapi.registry.generic", "fakeapi.http.app")


def loaded_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running `code`."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_the_command_line_loads_no_server_and_no_component() -> None:
    modules = loaded_after("import fakeapi.cli.main as m; m.build_parser().format_help()")
    assert {m for m in (*HEAVY, *COMPONENT_CODE, *CORE) if m in modules} == set()


def test_listing_the_components_builds_none() -> None:
    modules = loaded_after("from fakeapi.catalog import ALL_COMPONENTS; "
                           "names = [s.name for s in ALL_COMPONENTS]")
    assert {m for m in COMPONENT_CODE if m in modules} == set()


@pytest.mark.parametrize(("components", "absent"), [
    pytest.param("*", ("celpy", "grpc", "google.protobuf", "pydantic", "jsonschema",
                       "kubernetes_validate", "yaml"),
                 id="the default cluster before its nodes register"),
    pytest.param("scheduler", ("kubelet_emu.kubelet", "controllers.resourceclaim", "celpy"),
                 id="only the scheduler"),
    pytest.param("-kubelet", ("kubelet_emu.kubelet", "kubelet_emu.profile", "pydantic"),
                 id="no kubelet"),
])
def test_a_control_plane_loads_what_it_runs(components: str, absent: tuple[str, ...]) -> None:
    modules = loaded_after(
        "from fakeapi.controlplane import ControlPlane\n"
        f"plane = ControlPlane(components={components!r})")
    assert {m for m in absent if m in modules} == set()
    assert "fakeapi.cluster" in modules


def test_the_other_engine_loads_when_chosen() -> None:
    modules = loaded_after("from fakeapi import cel\ncel.set_default_engine('cel-python')\n"
                           "cel.compile('device.driver == \"x\"')")
    assert "celpy" in modules
