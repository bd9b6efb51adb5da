"""What the scheduler's tests share: the nodes they make, and reading a pod once the control
plane has settled."""

from __future__ import annotations

from typing import Any

from fakeapi.client import Client
from fakeapi.controlplane import ControlPlane
from fakeapi.registry.kinds import RESOURCE_CLAIMS

Obj = dict[str, Any]
CLAIMS = RESOURCE_CLAIMS.resource_id
NS = "default"


def node(name: str, *, cpu: str = "4", labels: dict[str, str] | None = None) -> Obj:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  **(labels or {})}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


async def scheduled(plane: ControlPlane, admin: Client, name: str) -> Obj:
    await plane.settle()
    return await admin.get("pods", name, NS)


def condition(p: Obj) -> Obj | None:
    """The pod's PodScheduled condition, or None."""
    return next((c for c in (p.get("status") or {}).get("conditions") or []
                 if c["type"] == "PodScheduled"), None)
