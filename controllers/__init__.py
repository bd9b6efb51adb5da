"""In-process controllers, each a client of the API with its own service account.

Each is declared here with a builder that imports its module only when the controller is
built, so listing them loads none of them.

Imports (every component package): `fakeapi.client`, `fakeapi.runtime`, `fakeapi.machinery`,
`fakeapi.kube`, `fakeapi.cel` and the kind table `fakeapi.registry.kinds`; never another
component package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakeapi.runtime.spec import ComponentSpec

if TYPE_CHECKING:
    from fakeapi.runtime.component import ComponentContext
    from fakeapi.runtime.supervisor import Component


def _namespace(ctx: ComponentContext) -> Component:
    from controllers.namespace import NamespaceController
    return NamespaceController(ctx)


def _garbage_collector(ctx: ComponentContext) -> Component:
    from controllers.garbage_collector import GarbageCollector
    return GarbageCollector(ctx)


def _resource_claims(ctx: ComponentContext) -> Component:
    from controllers.resourceclaim import ResourceClaimController
    return ResourceClaimController(ctx)


def _pool_status(ctx: ComponentContext) -> Component:
    from controllers.resourcepoolstatus import ResourcePoolStatusRequestController
    return ResourcePoolStatusRequestController(ctx)


def _device_taint_eviction(ctx: ComponentContext) -> Component:
    from controllers.devicetainteviction import DeviceTaintEvictionController
    return DeviceTaintEvictionController(ctx)


def _service_accounts(ctx: ComponentContext) -> Component:
    from controllers.serviceaccount import ServiceAccountController
    return ServiceAccountController(ctx)


def _deployments(ctx: ComponentContext) -> Component:
    from controllers.deployment import DeploymentController
    return DeploymentController(ctx)


def _replica_sets(ctx: ComponentContext) -> Component:
    from controllers.replicaset import ReplicaSetController
    return ReplicaSetController(ctx)


def _replication_controllers(ctx: ComponentContext) -> Component:
    from controllers.replicaset import ReplicationManager
    return ReplicationManager(ctx)


def _stateful_sets(ctx: ComponentContext) -> Component:
    from controllers.statefulset import StatefulSetController
    return StatefulSetController(ctx)


def _daemon_sets(ctx: ComponentContext) -> Component:
    from controllers.daemonset import DaemonSetController
    return DaemonSetController(ctx)


def _jobs(ctx: ComponentContext) -> Component:
    from controllers.job import JobController
    return JobController(ctx)


def _cron_jobs(ctx: ComponentContext) -> Component:
    from controllers.cronjob import CronJobController
    return CronJobController(ctx)


def _endpoints(ctx: ComponentContext) -> Component:
    from controllers.endpoints import EndpointsController
    return EndpointsController(ctx)


def _disruption(ctx: ComponentContext) -> Component:
    from controllers.disruption import DisruptionController
    return DisruptionController(ctx)


COMPONENTS: tuple[ComponentSpec, ...] = (
    ComponentSpec(name="namespace-controller", build=_namespace,
                  help="empties a Terminating namespace, then finalizes it"),
    ComponentSpec(name="garbage-collector", build=_garbage_collector,
                  service_account="generic-garbage-collector",
                  help="follows ownerReferences: Background, Foreground and Orphan deletion"),
    ComponentSpec(name="resource-claim-controller", build=_resource_claims,
                  help="claims from templates for Pods and PodGroups; frees unused claims"),
    ComponentSpec(name="resourcepoolstatusrequest-controller", build=_pool_status,
                  required_gates=("DRAResourcePoolStatus",),
                  help="answers ResourcePoolStatusRequests once; deletes them after 1 h / 24 h"),
    ComponentSpec(name="device-taint-eviction-controller", build=_device_taint_eviction,
                  required_gates=("DRADeviceTaints",),
                  help="evicts the users of devices with a NoExecute taint; rule conditions"),
    ComponentSpec(name="serviceaccount-controller", build=_service_accounts,
                  help="a default ServiceAccount in every namespace"),
    ComponentSpec(name="deployment-controller", build=_deployments,
                  help="Deployments: ReplicaSets per template, rolling updates, revisions"),
    ComponentSpec(name="replicaset-controller", build=_replica_sets,
                  help="ReplicaSets: spec.replicas pods of the template"),
    ComponentSpec(name="replicationcontroller-controller", build=_replication_controllers,
                  service_account="replication-controller",
                  help="ReplicationControllers: spec.replicas pods of the template"),
    ComponentSpec(name="statefulset-controller", build=_stateful_sets,
                  help="StatefulSets: ordered pods with stable names, claims, rolling updates"),
    ComponentSpec(name="daemonset-controller", build=_daemon_sets,
                  help="DaemonSets: one pod of the template per eligible node"),
    ComponentSpec(name="job-controller", build=_jobs,
                  help="Jobs: completions, parallelism, backoffLimit, suspend"),
    ComponentSpec(name="cronjob-controller", build=_cron_jobs,
                  help="CronJobs: a Job per schedule time on the injected clock"),
    ComponentSpec(name="endpointslice-controller", build=_endpoints,
                  help="EndpointSlices and Endpoints of Services with selectors"),
    ComponentSpec(name="disruption-controller", build=_disruption,
                  help="PodDisruptionBudget status, which evictions honour"),
)
"""The controllers this package offers (names as kube-controller-manager's --controllers)."""
