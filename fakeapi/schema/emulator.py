"""The emulator's own API group, `emulator.fakeapi.dev/v1alpha1`: fault injection and the clock.

- DeviceFault: one device of one driver on one node becomes Unhealthy (with a message), or
  its driver stops reporting it so the kubelet's health timeout turns it Unknown.
- NodeFault: the node's kubelet stops heartbeating (no Lease renewals, no status), so the
  node lifecycle controller marks it NotReady (Unknown) and taints it unreachable.

Both are cluster-scoped, optionally limited in time (`durationSeconds` from creation), and
healed by deleting them. They are ordinary objects, so they are events in the log and a
replay reproduces them.

- Clock: the cluster's clock, one object named `cluster` that the server creates. Its
  `advance` subresource takes a ClockAdvance (a Go duration) and moves a virtual clock; the
  status written after it is the advance's event in the log.

The schemas below (in the shape of the 1.37 JSON schemas) make them part of discovery,
OpenAPI and `kubectl explain`.
"""

from __future__ import annotations

from typing import Any

GROUP = "emulator.fakeapi.dev"
VERSION = "v1alpha1"
PREFIX = "dev.fakeapi.emulator.v1alpha1."
DEVICE_MODES = ("Unhealthy", "StopReporting")
NODE_MODES = ("StopHeartbeat",)
CLOCK_NAME = "cluster"
"""The one Clock object's name."""
CLOCK_ADVANCE = "ClockAdvance"
"""The kind of the body POSTed to `clocks/cluster/advance`."""

Schema = dict[str, Any]
_META = "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1."


def _s(description: str, type_: str = "string", **kw: Any) -> Schema:
    return {"description": description, "type": [type_, "null"], **kw}


def _type_meta(kind: str, what: str = "object") -> dict[str, Schema]:
    return {"apiVersion": _s(f"APIVersion of the {what}.", enum=[f"{GROUP}/{VERSION}"]),
            "kind": _s(f"Kind of the {what}.", enum=[kind])}


def _kind(kind: str, description: str, part: str, ref: str, what: str,
          status: str = "") -> dict[str, Schema]:
    """An object kind with one part (`spec` or `status`, of definition `ref`), a `status` of
    definition `status` too when given, and its List."""
    gvk = {"group": GROUP, "version": VERSION}
    also = ({"status": {"$ref": "#/$defs/" + PREFIX + status,
                        "description": "What the emulator made of it."}} if status else {})
    return {
        PREFIX + kind: {
            "description": description,
            "properties": {
                **_type_meta(kind),
                "metadata": {"$ref": _META + "ObjectMeta",
                             "description": "Standard object metadata."},
                part: {"$ref": "#/$defs/" + PREFIX + ref, "description": what},
                **also,
            },
            **({"required": [part]} if part == "spec" else {}),
            "type": ["object", "null"],
            "x-kubernetes-group-version-kind": [{**gvk, "kind": kind}],
        },
        PREFIX + kind + "List": {
            "description": f"A list of {kind} objects.",
            "properties": {
                **_type_meta(kind + "List", "list"),
                "items": {"description": f"The {kind} objects.",
                          "items": {"$ref": "#/$defs/" + PREFIX + kind}, "type": "array"},
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
            "spec", "DeviceFaultSpec", "What the DeviceFault does.", status="FaultStatus"),
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
            "spec", "NodeFaultSpec", "What the NodeFault does.", status="FaultStatus"),
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
    PREFIX + "FaultStatus": {
        "description": "Whether the fault is in force, as the kubelet of its node applies it.",
        "properties": {
            "conditions": {
                "description": "Applied: True while the fault acts (reason Applied); False "
                               "when it names no device of the emulator's fake drivers "
                               "(NotApplied) or its duration is over (Expired).",
                "items": {"$ref": _META + "Condition"}, "type": ["array", "null"],
                "x-kubernetes-list-map-keys": ["type"], "x-kubernetes-list-type": "map"},
        },
        "type": ["object", "null"],
    },
    **_kind("Clock", "Clock is the cluster's clock: one object, named cluster, that the server "
            "creates. On a virtual clock (fakeapi serve --clock virtual or virtual:auto) POST a "
            "ClockAdvance to its advance subresource to move time on; every timer due on the "
            "way fires at its own time. Read-only otherwise.",
            "status", "ClockStatus", "The clock's mode and reading."),
    PREFIX + "ClockStatus": {
        "description": "The clock's mode and its reading when this status was written (at "
                       "the server's start and after each advance).",
        "properties": {
            "now": _s("The clock's time when the status was written (RFC 3339 with "
                      "microseconds). kubectl get clock shows the time now.", format="date-time"),
            "mode": _s("real: the system clock. virtual: time moves only when advanced. "
                       "virtual:auto: also, whenever the cluster has settled, it jumps to the "
                       "next timer.", enum=["real", "virtual", "virtual:auto"]),
        },
        "type": ["object", "null"],
    },
    PREFIX + CLOCK_ADVANCE: {
        "description": "ClockAdvance moves a virtual clock on: the body POSTed to "
                       "clocks/cluster/advance.",
        "properties": {
            **_type_meta(CLOCK_ADVANCE),
            "duration": _s("How far to move the clock, in Go duration syntax (300ms, 1.5h, "
                           "2h45m); not negative."),
        },
        "required": ["duration"],
        "type": ["object", "null"],
        "x-kubernetes-group-version-kind": [{"group": GROUP, "version": VERSION,
                                             "kind": CLOCK_ADVANCE}],
    },
}
"""The group's schema definitions, merged into the 1.37 definitions (`fakeapi.schema.schemas`)."""
