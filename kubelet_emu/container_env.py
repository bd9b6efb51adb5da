"""What an emulated container's process sees (pure: no I/O): the image's PATH, bash's own
variables, the `kubernetes` service links, the pod spec's env (fieldRefs of the downward API,
ConfigMap keys, `$(VAR)` references) and its CDI devices' edits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import kubelet_emu.cdi as cdi
import kubelet_emu.shell as shell

Obj = dict[str, Any]
SERVICE_ENV = {
    "KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443",
    "KUBERNETES_SERVICE_PORT_HTTPS": "443", "KUBERNETES_PORT": "tcp://10.96.0.1:443",
    "KUBERNETES_PORT_443_TCP": "tcp://10.96.0.1:443", "KUBERNETES_PORT_443_TCP_PROTO": "tcp",
    "KUBERNETES_PORT_443_TCP_PORT": "443", "KUBERNETES_PORT_443_TCP_ADDR": "10.96.0.1"}
"""The `kubernetes` service's environment every container gets (service links)."""
IMAGE_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}


def field_value(pod: Obj, path: str, host_ip: str, pod_ip: str) -> str:
    """An env var's fieldRef (the downward API)."""
    meta = pod["metadata"]
    simple = {"metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace"),
              "metadata.uid": meta.get("uid"), "spec.nodeName": pod["spec"].get("nodeName"),
              "spec.serviceAccountName": pod["spec"].get("serviceAccountName") or "default",
              "status.hostIP": host_ip, "status.podIP": pod_ip,
              "status.hostIPs": host_ip, "status.podIPs": pod_ip}
    if path in simple:
        return str(simple[path] or "")
    for prefix, values in (("metadata.labels", meta.get("labels")),
                           ("metadata.annotations", meta.get("annotations"))):
        if path.startswith(prefix + "['") and path.endswith("']"):
            return str((values or {}).get(path[len(prefix) + 2:-2], ""))
    return ""


def container_env(pod: Obj, container: Obj, edits: cdi.ContainerEdits, *, host_ip: str,
                  pod_ip: str, config: dict[str, dict[str, str]]) -> dict[str, str | None]:
    """What the container's process sees: the image's PATH, bash's own variables, the
    service links, the pod spec's env (with `$(VAR)` references), then the CDI edits."""
    env: dict[str, str | None] = {**IMAGE_ENV, "HOSTNAME": pod["metadata"]["name"],
                                  "HOME": "/root", "PWD": "/", "SHLVL": "1", "OLDPWD": None,
                                  **SERVICE_ENV}
    for source in container.get("envFrom") or []:
        ref = source.get("configMapRef") or source.get("secretRef") or {}
        for k, v in (config.get(ref.get("name", "")) or {}).items():
            env[(source.get("prefix") or "") + k] = v
    for var in container.get("env") or []:
        name = var.get("name")
        if not name:
            continue
        if "value" in var:
            env[name] = _dependent(str(var["value"]), env)
        elif var.get("valueFrom", {}).get("fieldRef"):
            env[name] = field_value(pod, var["valueFrom"]["fieldRef"].get("fieldPath", ""),
                                    host_ip, pod_ip)
        elif var.get("valueFrom", {}).get("configMapKeyRef"):
            ref = var["valueFrom"]["configMapKeyRef"]
            env[name] = (config.get(ref.get("name", "")) or {}).get(ref.get("key", ""), "")
        else:
            env[name] = ""
    for entry in edits.env:
        k, _, v = entry.partition("=")
        env[k] = v
    return env


def _dependent(value: str, env: dict[str, str | None]) -> str:
    """`$(VAR)` references to variables defined before, as upstream expands them."""
    out, i = "", 0
    while i < len(value):
        if value.startswith("$$", i):
            out += "$"
            i += 2
        elif value.startswith("$(", i) and ")" in value[i:]:
            end = value.index(")", i)
            name = value[i + 2:end]
            known = env.get(name)
            out += known if known is not None else value[i:end + 1]
            i = end + 1
        else:
            out += value[i]
            i += 1
    return out


def view_lines(env: dict[str, str | None], mounts: Sequence[Obj]) -> list[str]:
    """What a service container prints: its environment and its mounted metadata files."""
    lines = shell.environment_lines({k: v for k, v in env.items() if v is not None})
    lines += [f"mounted {m.get('containerPath')} (ro)" for m in mounts]
    return lines


def config_map_names(pod: Obj) -> list[str]:
    """The ConfigMaps the pod's containers take env from (envFrom and configMapKeyRef)."""
    names: set[str] = set()
    for c in (pod["spec"].get("initContainers") or []) + (pod["spec"].get("containers") or []):
        for source in c.get("envFrom") or []:
            if source.get("configMapRef"):
                names.add(source["configMapRef"].get("name", ""))
        for var in c.get("env") or []:
            ref = (var.get("valueFrom") or {}).get("configMapKeyRef")
            if ref:
                names.add(ref.get("name", ""))
    return sorted(n for n in names if n)
