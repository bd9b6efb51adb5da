"""The emulator's own API group, `emulator.fakeapi.dev/v1alpha1`: fault injection.

- DeviceFault: one device of one driver on one node becomes Unhealthy (with a message), or
  its driver stops reporting it so the kubelet's health timeout turns it Unknown.
- NodeFault: the node's kubelet stops heartbeating (no Lease renewals, no status), so the
  node lifecycle controller marks it NotReady (Unknown) and taints it unreachable.

Both are cluster-scoped, optionally limited in time (`durationSeconds` from creation), and
healed by deleting them. They are ordinary objects, so they are events in the log and a
replay reproduces them. The schemas below (in the shape of the 1.37 JSON schemas) make them
part of discovery, OpenAPI and `kubectl explain`.
"""

from __future__ import annotations

from typing import Any

GROUP = "emulator.fakeapi.dev"
VERSION = "v1alpha1"
PREFIX = "dev.fakeapi.emulator.v1alpha1."
DEVICE_MODES = ("Unhealthy", "StopReporting")
NODE_MODES = ("StopHeartbeat",)

Schema = dict[str, Any]
_META = "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1."


def _s(description: str, type_: str = "string", **kw: Any) -> Schema:
    return {"description": description, "type": [type_, "null"], **kw}


def _kind(kind: str, description: str, spec: str) -> dict[str, Schema]:
    gvk = {"group": GROUP, "version": VERSION}
    return {
        PREFIX + kind: {
            "description": description,
            "properties": {
                "apiVersion": _s("APIVersion of the object.", enum=[f"{GROUP}/{VERSION}"]),
                "kind": _s("Kind of the object.", enum=[kind]),
                "metadata": {"$ref": _META + "ObjectMeta",
                             "description": "Standard object metadata."},
                "spec": {"$ref": "#/$defs/" + PREFIX + spec,
                         "description": f"What the {kind} does."},
            },
            "required": ["spec"],
            "type": ["object", "null"],
            "x-kubernetes-group-version-kind": [{**gvk, "kind": kind}],
        },
        PREFIX + kind + "List": {
            "description": f"A list of {kind} objects.",
            "properties": {
                "apiVersion": _s("APIVersion of the list.", enum=[f"{GROUP}/{VERSION}"]),
                "items": {"description": f"The {kind} objects.",
                          "items": {"$ref": "#/$defs/" + PREFIX + kind}, "type": "array"},
                "kind": _s("Kind of the list.", enum=[kind + "List"]),
                "metadata": {"$ref": _META + "ListMeta", "description": "Standard list metadata."},
            },
            "required": ["items"],
            "type": ["object", "null"],
            "x-kubernetes-group-version-kind": [{**gvk, "kind": kind + "List"}],
        },
    }


_DURATION = _s("How long the fault lasts, counted from its creation; without it, until the "
               "object is deleted.", "integer", format="int64", minimum=1)

DEFINITIONS: dict[str, Schema] = {
    **_kind("DeviceFault", "DeviceFault breaks one device of an emulated node: the driver "
            "reports it Unhealthy, or stops reporting it (the kubelet then marks it Unknown "
            "after its health check timeout). Deleting the fault heals the device.",
            "DeviceFaultSpec"),
    PREFIX + "DeviceFaultSpec": {
        "description": "Which device breaks, and how.",
        "properties": {
            "nodeName": _s("The emulated node the device is on."),
            "driver": _s("The DRA driver that manages the device (e.g. gpu.example.com)."),
            "device": _s("The device's name in the node's pool (e.g. gpu-0)."),
            "mode": _s("Unhealthy (default): the driver reports the device Unhealthy with "
                       "the message. StopReporting: the driver leaves the device out of its "
                       "health stream.", enum=list(DEVICE_MODES)),
            "message": _s("What the driver says about the device's health (Unhealthy)."),
            "durationSeconds": _DURATION,
        },
        "required": ["nodeName", "driver", "device"],
        "type": ["object", "null"],
    },
    **_kind("NodeFault", "NodeFault stops an emulated node's kubelet from heartbeating: no "
            "Lease renewals and no status, so the node lifecycle controller marks the node "
            "NotReady and taints it unreachable. Deleting the fault brings it back.",
            "NodeFaultSpec"),
    PREFIX + "NodeFaultSpec": {
        "description": "Which node fails, and how.",
        "properties": {
            "nodeName": _s("The emulated node."),
            "mode": _s("StopHeartbeat (default): the kubelet stops renewing its Lease and "
                       "posting status.", enum=list(NODE_MODES)),
            "durationSeconds": _DURATION,
        },
        "required": ["nodeName"],
        "type": ["object", "null"],
    },
}
"""The group's schema definitions, merged into the 1.37 definitions (`fakeapi.schema.schemas`)."""
