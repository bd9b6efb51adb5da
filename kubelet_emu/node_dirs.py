"""The folders of an emulated node below its root (`<state>/nodes/<node>/`), laid out as on a
real node, so a driver's kubelet plugin runs against them with its usual flags:

- `var/lib/kubelet/plugins_registry/`: plugins' registration sockets
  (`--kubelet-registrar-directory-path`);
- `var/lib/kubelet/plugins/`: plugins' own folders and service sockets
  (`--kubelet-plugins-directory-path`);
- `var/run/cdi/`: the CDI spec files the container runtime reads (`--cdi-root`);
- `var/lib/kubelet/pod-resources/kubelet.sock`: the PodResources API;
- `var/log/pods/`: the containers' logs.
"""

from __future__ import annotations

from pathlib import Path

REGISTRY = Path("var") / "lib" / "kubelet" / "plugins_registry"
PLUGINS = Path("var") / "lib" / "kubelet" / "plugins"
CDI = Path("var") / "run" / "cdi"
POD_RESOURCES = Path("var") / "lib" / "kubelet" / "pod-resources" / "kubelet.sock"
LOGS = Path("var") / "log" / "pods"


def registration_socket(registry: Path, driver: str) -> Path:
    """Where a driver's plugin registers: `<registry>/<driver>-reg.sock`."""
    return registry / f"{driver}-reg.sock"


def service_socket(plugins: Path, driver: str) -> Path:
    """Where a driver's plugin serves DRA and health: `<plugins>/<driver>/dra.sock`."""
    return plugins / driver / "dra.sock"
