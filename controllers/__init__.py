"""In-process controllers, each a client of the API with its own service account."""

from __future__ import annotations

from controllers.devicetainteviction import NAME as TAINT_EVICTION
from controllers.devicetainteviction import DeviceTaintEvictionController
from controllers.garbage_collector import GarbageCollector
from controllers.namespace import NamespaceController
from controllers.resourceclaim import ResourceClaimController
from controllers.resourcepoolstatus import GATE as POOL_STATUS_GATE
from controllers.resourcepoolstatus import ResourcePoolStatusRequestController
from fakeapi.runtime.component import ComponentSpec

COMPONENTS: tuple[ComponentSpec, ...] = (
    ComponentSpec(name="namespace-controller", build=NamespaceController,
                  help="empties a Terminating namespace, then finalizes it"),
    ComponentSpec(name="garbage-collector", build=GarbageCollector,
                  service_account="generic-garbage-collector",
                  help="follows ownerReferences: Background, Foreground and Orphan deletion"),
    ComponentSpec(name="resource-claim-controller", build=ResourceClaimController,
                  help="claims from templates for Pods and PodGroups; frees unused claims"),
    ComponentSpec(name="resourcepoolstatusrequest-controller",
                  build=ResourcePoolStatusRequestController,
                  required_gates=(POOL_STATUS_GATE,),
                  help="answers ResourcePoolStatusRequests once; deletes them after 1 h / 24 h"),
    ComponentSpec(name=TAINT_EVICTION, build=DeviceTaintEvictionController,
                  required_gates=("DRADeviceTaints",),
                  help="evicts the users of devices with a NoExecute taint; rule conditions"),
)
"""The controllers this package offers (names as kube-controller-manager's --controllers)."""
