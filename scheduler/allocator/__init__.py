"""The structured allocator: pure (no I/O, no asyncio), upstream's semantics.

`Inventory` is the scheduler's device cache (slices, classes, taint rules), `AllocatedState`
the devices in use, and `allocate` finds the devices for a pod's claims on one node, the
way `k8s.io/dynamic-resource-allocation/structured` does in Kubernetes 1.37.

Imports: `fakeapi.machinery`, `fakeapi.cel`, `fakeapi.kube` (pure helpers only).
"""

from fakeapi.kube.nodeselector import NodeSelector, NodeSelectorError

from .allocate import INVALID_POOLS, allocate
from .diagnostics import CAUSES, Diagnostics, RequestDiagnostics
from .errors import AllocationError, AllocationTimeout, ClaimUnschedulable, NodeUnschedulable
from .extended import (
    CLAIM_ANNOTATION,
    ExtendedResourceRequest,
    extended_resource_claim,
    extended_resource_request,
    is_dra_extended_resource_name,
)
from .features import AllocatorFeatures
from .inventory import DEVICE_CLASS_PREFIX, Inventory
from .state import AllocatedState

__all__ = [
    "CAUSES",
    "CLAIM_ANNOTATION",
    "DEVICE_CLASS_PREFIX",
    "INVALID_POOLS",
    "AllocatedState",
    "AllocationError",
    "AllocationTimeout",
    "AllocatorFeatures",
    "ClaimUnschedulable",
    "Diagnostics",
    "ExtendedResourceRequest",
    "Inventory",
    "NodeSelector",
    "NodeSelectorError",
    "NodeUnschedulable",
    "RequestDiagnostics",
    "allocate",
    "extended_resource_claim",
    "extended_resource_request",
    "is_dra_extended_resource_name",
]
