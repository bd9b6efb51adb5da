"""The kubelet's PodResourcesLister (v1: List, Get, GetAllocatableResources), per emulated
node, on the unix socket `<state>/nodes/<node>/var/lib/kubelet/pod-resources/kubelet.sock`.

The messages are those of `podresources.proto` (upstream's names and field numbers). They
are built as plain dicts from what the kubelet runs (`resources_of` and friends: the DRA
`DynamicResource` entries name each claim, and per device its driver, pool, device, share
and CDI devices) and encoded here with a small table-driven protobuf codec, so serving needs
only grpcio's runtime (its generic handlers take our serializers): no generated code and no
protobuf package. Without grpcio the data layer works and the socket is not served.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import kubelet_emu.node_dirs as node_dirs
import kubelet_emu.sockets as sockets
from fakeapi.machinery import protowire as pw

log = logging.getLogger(__name__)

Msg = dict[str, Any]
SERVICE = "v1.PodResourcesLister"
SOCKET = node_dirs.POD_RESOURCES


class Field(NamedTuple):
    """One message field: its number, proto name, type, and whether it repeats."""

    number: int
    name: str
    type: str
    """string | int64 | uint64 | a message name."""
    repeated: bool = False
    optional: bool = False
    """proto3 `optional`: present (even when empty) whenever set."""


def _f(number: int, name: str, type_: str, repeated: bool = False,
       optional: bool = False) -> Field:
    return Field(number, name, type_, repeated, optional)


MESSAGES: dict[str, tuple[Field, ...]] = {
    "AllocatableResourcesRequest": (),
    "AllocatableResourcesResponse": (_f(1, "devices", "ContainerDevices", True),
                                     _f(2, "cpu_ids", "int64", True),
                                     _f(3, "memory", "ContainerMemory", True)),
    "ListPodResourcesRequest": (),
    "ListPodResourcesResponse": (_f(1, "pod_resources", "PodResources", True),),
    "PodResources": (_f(1, "name", "string"), _f(2, "namespace", "string"),
                     _f(3, "containers", "ContainerResources", True),
                     _f(4, "cpu_ids", "int64", True), _f(5, "memory", "ContainerMemory", True)),
    "ContainerResources": (_f(1, "name", "string"), _f(2, "devices", "ContainerDevices", True),
                           _f(3, "cpu_ids", "int64", True),
                           _f(4, "memory", "ContainerMemory", True),
                           _f(5, "dynamic_resources", "DynamicResource", True)),
    "ContainerMemory": (_f(1, "memory_type", "string"), _f(2, "size", "uint64"),
                        _f(3, "topology", "TopologyInfo")),
    "ContainerDevices": (_f(1, "resource_name", "string"), _f(2, "device_ids", "string", True),
                         _f(3, "topology", "TopologyInfo")),
    "TopologyInfo": (_f(1, "nodes", "NUMANode", True),),
    "NUMANode": (_f(1, "ID", "int64"),),
    "DynamicResource": (_f(2, "claim_name", "string"), _f(3, "claim_namespace", "string"),
                        _f(4, "claim_resources", "ClaimResource", True)),
    "ClaimResource": (_f(1, "cdi_devices", "CDIDevice", True), _f(2, "driver_name", "string"),
                      _f(3, "pool_name", "string"), _f(4, "device_name", "string"),
                      _f(5, "share_id", "string", optional=True)),
    "CDIDevice": (_f(1, "name", "string"),),
    "GetPodResourcesRequest": (_f(1, "pod_name", "string"), _f(2, "pod_namespace", "string")),
    "GetPodResourcesResponse": (_f(1, "pod_resources", "PodResources"),),
}
"""The messages of podresources.proto."""

_SCALARS = ("string", "int64", "uint64")


# ----- wire format -------------------------------------------------------------------------


def encode(message: str, msg: Msg) -> bytes:
    """The protobuf encoding of `msg` (a dict with proto field names) as `message`."""
    out = bytearray()
    for field in MESSAGES[message]:
        value = msg.get(field.name)
        if value is None:
            continue
        values = value if field.repeated else [value]
        if field.type in ("int64", "uint64"):
            if field.repeated:
                if values:  # proto3 packs repeated scalars
                    out += pw.delimited(field.number,
                                        b"".join(pw.varint(int(v)) for v in values))
            elif value or field.optional:
                out += pw.key(field.number, pw.VARINT) + pw.varint(int(value))
            continue
        for v in values:
            if field.type == "string":
                if not v and not field.repeated and not field.optional:
                    continue
                data = str(v).encode()
            else:
                data = encode(field.type, v)
            out += pw.delimited(field.number, data)
    return bytes(out)


def decode(message: str, data: bytes) -> Msg:
    """The dict of a `message` encoding (unknown fields skipped; absent ones left out);
    ValueError, naming the message, for bytes that are not one."""
    try:
        return _decode(message, data)
    except pw.WireError as e:
        raise ValueError(f"malformed {message}: {e}") from None


def _decode(message: str, data: bytes) -> Msg:
    fields = {f.number: f for f in MESSAGES[message]}
    out: Msg = {}
    for number, wire, value in pw.read_fields(data, message):
        field = fields.get(number)
        if field is None or wire == pw.FIXED64 or wire == pw.FIXED32:
            continue
        if wire == pw.VARINT:
            v = pw.signed(value) if field.type == "int64" else value
            if field.repeated:
                out.setdefault(field.name, []).append(v)
            else:
                out[field.name] = v
        elif field.type in ("int64", "uint64"):
            out.setdefault(field.name, []).extend(
                pw.signed(v) if field.type == "int64" else v for v in pw.read_packed(value))
        else:
            item = value.decode() if field.type == "string" else _decode(field.type, value)
            if field.repeated:
                out.setdefault(field.name, []).append(item)
            else:
                out[field.name] = item
    return out


# ----- what the kubelet runs, as messages ------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True, order=True)
class DeviceView:
    """One prepared device of a container's claim."""

    driver: str
    pool: str
    device: str
    share_id: str | None
    cdi_devices: tuple[str, ...]


class ContainerView(NamedTuple):
    """One container and its claims: (claim name, claim namespace, devices) each."""

    name: str
    claims: tuple[tuple[str, str, tuple[DeviceView, ...]], ...]


@dataclasses.dataclass(frozen=True, kw_only=True, order=True)
class PodView:
    """One pod the kubelet runs (ordered by name, then namespace)."""

    name: str
    namespace: str
    containers: tuple[ContainerView, ...]


def pod_resources(pod: PodView) -> Msg:
    """A PodResources message."""
    containers = []
    for c in pod.containers:
        dynamic = [{"claim_name": name, "claim_namespace": ns, "claim_resources": [
            {"cdi_devices": [{"name": cdi} for cdi in d.cdi_devices], "driver_name": d.driver,
             "pool_name": d.pool, "device_name": d.device,
             **({"share_id": d.share_id} if d.share_id else {})} for d in devices]}
            for name, ns, devices in c.claims]
        containers.append({"name": c.name, **({"dynamic_resources": dynamic} if dynamic else {})})
    return {"name": pod.name, "namespace": pod.namespace, "containers": containers}


class NotFound(LookupError):
    """Get of a pod the node doesn't run."""


class Lister:
    """The service's answers for one node, from a view of what it runs."""

    def __init__(self, pods: Callable[[], Iterable[PodView]], cpus: Callable[[], int]) -> None:
        self._pods = pods
        self._cpus = cpus

    def list(self, request: Msg) -> Msg:
        """List: every pod on the node."""
        return {"pod_resources": [pod_resources(p) for p in self._pods()]}

    def get(self, request: Msg) -> Msg:
        """Get: one pod (NotFound with upstream's text when the node doesn't run it)."""
        name, ns = request.get("pod_name", ""), request.get("pod_namespace", "")
        for p in self._pods():
            if (p.name, p.namespace) == (name, ns):
                return {"pod_resources": pod_resources(p)}
        raise NotFound(f"pod {name} in namespace {ns} not found")

    def allocatable(self, request: Msg) -> Msg:
        """GetAllocatableResources: the node's CPU ids (no device plugins; DRA devices are
        not part of it upstream either)."""
        return {"cpu_ids": list(range(self._cpus()))}


# ----- the gRPC server (grpcio's runtime with our codec) ----------------------------------------


METHODS: Sequence[tuple[str, str, str, str]] = (
    ("List", "ListPodResourcesRequest", "ListPodResourcesResponse", "list"),
    ("Get", "GetPodResourcesRequest", "GetPodResourcesResponse", "get"),
    ("GetAllocatableResources", "AllocatableResourcesRequest", "AllocatableResourcesResponse",
     "allocatable"))


async def serve(socket: Path, lister: Lister) -> Any:
    """Serve `lister` on a unix socket (`sockets.bind_path`); returns the started grpc.aio server
    (stop it with `await server.stop(None)`). grpcio is imported here, when a node first
    serves the API, not when the emulator is loaded."""
    import grpc

    def handler(method: str) -> Callable[[Msg, Any], Any]:
        answer = getattr(lister, method)

        async def call(request: Msg, context: Any) -> Msg:
            try:
                return answer(request)
            except NotFound as e:
                await context.abort(grpc.StatusCode.NOT_FOUND, str(e))
                raise
        return call

    handlers = {name: grpc.unary_unary_rpc_method_handler(
        handler(method), request_deserializer=lambda b, m=req: decode(m, b),
        response_serializer=lambda msg, m=resp: encode(m, msg))
        for name, req, resp, method in METHODS}
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    sockets.listen(server, socket)
    await server.start()
    sockets.link(socket)
    return server
