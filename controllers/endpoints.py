"""The endpoints controllers: for every Service with a selector, the EndpointSlice (and the
legacy Endpoints) of the pods it selects that have an IP, ready or not, as
kube-controller-manager's endpointslice and endpoints controllers do."""

from __future__ import annotations

from typing import Any

from controllers.owners import reference_to
from fakeapi.machinery.errors import ApiError
from fakeapi.registry.kinds import ENDPOINT_SLICES, ENDPOINTS, PODS, SERVICES
from fakeapi.runtime.component import ComponentContext, Controller

Obj = dict[str, Any]
SERVICE_NAME = "kubernetes.io/service-name"
MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
MANAGER = "endpointslice-controller.k8s.io"


def _ready(pod: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def _target_port(port: Obj, pod: Obj) -> int | None:
    """Same as upstream's FindPort: a number, or the pod's container port of that name."""
    target = port.get("targetPort", port.get("port"))
    if isinstance(target, int):
        return target
    for container in (pod.get("spec") or {}).get("containers") or []:
        for cport in container.get("ports") or []:
            if cport.get("name") == target:
                return int(cport["containerPort"])
    return None


def _ip(pod: Obj) -> str:
    status = pod.get("status") or {}
    ips = status.get("podIPs") or []
    return str((ips[0].get("ip") if ips else None) or status.get("podIP") or "")


class EndpointsController(Controller[str]):
    """Keys are `namespace/name` of Services; a pod's change wakes the Services of its
    namespace."""

    def __init__(self, ctx: ComponentContext) -> None:
        super().__init__(ctx)
        self.services = self.watch(SERVICES.resource_id)
        self.pods = self.watch(PODS.resource_id, self._services_of)

    def _services_of(self, type_: str, pod: Obj, old: Obj | None) -> list[str]:
        namespace = pod["metadata"].get("namespace", "")
        return [f"{namespace}/{s['metadata']['name']}" for s in self.services.cache.list(
            namespace) if (s.get("spec") or {}).get("selector")]

    async def reconcile(self, key: str) -> None:
        """Write the Service's EndpointSlice and Endpoints from its pods."""
        namespace, _, name = key.partition("/")
        service = self.services.cache.get(name, namespace)
        if service is None or not (service.get("spec") or {}).get("selector"):
            return  # the garbage collector removes what a deleted Service owned
        selector = service["spec"]["selector"]
        pods = [p for p in self.pods.cache.list(namespace)
                if all((p["metadata"].get("labels") or {}).get(k) == v
                       for k, v in selector.items())
                and _ip(p) and not p["metadata"].get("deletionTimestamp")
                and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        ports = [p for p in service["spec"].get("ports") or [] if isinstance(p, dict)]
        await self._write_slice(service, pods, ports)
        await self._write_endpoints(service, pods, ports)

    async def _write_slice(self, service: Obj, pods: list[Obj], ports: list[Obj]) -> None:
        meta = service["metadata"]
        endpoints = [{"addresses": [_ip(p)], "conditions": {
            "ready": _ready(p), "serving": _ready(p), "terminating": False},
            **({"nodeName": p["spec"]["nodeName"]} if (p.get("spec") or {}).get("nodeName")
               else {}),
            "targetRef": {"kind": "Pod", "namespace": meta["namespace"],
                          "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]}}
            for p in sorted(pods, key=lambda p: p["metadata"]["name"])]
        slice_ports = []
        for port in ports:
            number = _target_port(port, pods[0]) if pods else None
            entry: Obj = {"name": port.get("name", ""), "protocol": port.get("protocol", "TCP")}
            if number is not None:
                entry["port"] = number
            slice_ports.append(entry)
        body: Obj = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                     "metadata": {"name": meta["name"], "namespace": meta["namespace"],
                                  "labels": {SERVICE_NAME: meta["name"], MANAGED_BY: MANAGER},
                                  "ownerReferences": [reference_to(service, "v1", "Service")]},
                     "addressType": "IPv4", "endpoints": endpoints, "ports": slice_ports}
        await self._put(ENDPOINT_SLICES.resource_id, body, ("endpoints", "ports"))

    async def _write_endpoints(self, service: Obj, pods: list[Obj], ports: list[Obj]) -> None:
        meta = service["metadata"]
        subsets = []
        ready = [p for p in pods if _ready(p)]
        not_ready = [p for p in pods if not _ready(p)]
        if pods:
            subset: Obj = {"ports": [{"name": port.get("name", ""),
                                      "port": _target_port(port, pods[0]) or port.get("port"),
                                      "protocol": port.get("protocol", "TCP")}
                                     for port in ports]}
            for field, group in (("addresses", ready), ("notReadyAddresses", not_ready)):
                if group:
                    subset[field] = [{"ip": _ip(p), "targetRef": {
                        "kind": "Pod", "namespace": meta["namespace"],
                        "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]}}
                        for p in sorted(group, key=lambda p: p["metadata"]["name"])]
            subsets.append(subset)
        body: Obj = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {
            "name": meta["name"], "namespace": meta["namespace"],
            "labels": dict(meta.get("labels") or {})}}
        if subsets:
            body["subsets"] = subsets
        await self._put(ENDPOINTS.resource_id, body, ("subsets",))

    async def _put(self, resource: str, body: Obj, fields: tuple[str, ...]) -> None:
        """Create the object, or update it when those fields differ."""
        meta = body["metadata"]
        try:
            current = await self.client.get(resource, meta["name"], meta["namespace"])
        except ApiError as e:
            if e.code != 404:
                raise
            await self.client.create(resource, body)
            return
        if all(current.get(f) == body.get(f) for f in fields):
            return
        meta["resourceVersion"] = current["metadata"]["resourceVersion"]
        await self.client.update(resource, body)
