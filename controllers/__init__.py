"""In-process controllers, each a client of the API with its own service account."""

from __future__ import annotations

from controllers.cronjob import CronJobController
from controllers.daemonset import DaemonSetController
from controllers.deployment import DeploymentController
from controllers.devicetainteviction import NAME as TAINT_EVICTION
from controllers.devicetainteviction import DeviceTaintEvictionController
from controllers.disruption import DisruptionController
from controllers.endpoints import EndpointsController
from controllers.garbage_collector import GarbageCollector
from controllers.job import JobController
from controllers.namespace import NamespaceController
from controllers.replicaset import ReplicaSetController
from controllers.resourceclaim import ResourceClaimController
from controllers.resourcepoolstatus import GATE as POOL_STATUS_GATE
from controllers.resourcepoolstatus import ResourcePoolStatusRequestController
from controllers.serviceaccount import ServiceAccountController
from controllers.statefulset import StatefulSetController
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
    ComponentSpec(name="serviceaccount-controller", build=ServiceAccountController,
                  help="a default ServiceAccount in every namespace"),
    ComponentSpec(name="deployment-controller", build=DeploymentController,
                  help="Deployments: ReplicaSets per template, rolling updates, revisions"),
    ComponentSpec(name="replicaset-controller", build=ReplicaSetController,
                  help="ReplicaSets: spec.replicas pods of the template"),
    ComponentSpec(name="statefulset-controller", build=StatefulSetController,
                  help="StatefulSets: ordered pods with stable names, claims, rolling updates"),
    ComponentSpec(name="daemonset-controller", build=DaemonSetController,
                  help="DaemonSets: one pod of the template per eligible node"),
    ComponentSpec(name="job-controller", build=JobController,
                  help="Jobs: completions, parallelism, backoffLimit, suspend"),
    ComponentSpec(name="cronjob-controller", build=CronJobController,
                  help="CronJobs: a Job per schedule time on the injected clock"),
    ComponentSpec(name="endpointslice-controller", build=EndpointsController,
                  help="EndpointSlices and Endpoints of Services with selectors"),
    ComponentSpec(name="disruption-controller", build=DisruptionController,
                  help="PodDisruptionBudget status, which evictions honour"),
)
"""The controllers this package offers (names as kube-controller-manager's --controllers)."""
