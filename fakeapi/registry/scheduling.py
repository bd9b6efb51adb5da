"""Strategies of scheduling.k8s.io/v1beta1 PodGroup and Workload."""

from __future__ import annotations

from fakeapi.machinery.errors import Cause
from fakeapi.registry.context import RequestContext
from fakeapi.registry.rest import Obj, SpecStrategy, StatusStrategy
from fakeapi.registry.validation import scheduling as rules


class PodGroupStrategy(SpecStrategy):
    """A PodGroup's spec is fixed at creation except `schedulingPolicy.gang.minCount`."""

    def validate_spec(self, obj: Obj) -> list[Cause]:
        """Policy and claims of a new group."""
        return rules.validate_pod_group_spec(obj.get("spec"))

    def validate_spec_update(self, new: Obj, old: Obj) -> list[Cause]:
        """Immutable spec fields, then the create rules."""
        return rules.validate_pod_group_update(new.get("spec"), old.get("spec"))


class PodGroupStatusStrategy(StatusStrategy):
    """Same as upstream ValidatePodGroupStatusUpdate: conditions and claim statuses."""

    def validate_update(self, new: Obj, old: Obj, ctx: RequestContext) -> list[Cause]:
        """Claim statuses must name an entry of spec.resourceClaims."""
        return rules.validate_pod_group_status(new)


class WorkloadStrategy(SpecStrategy):
    """Workload templates: fixed in number and name once created."""

    def validate_spec(self, obj: Obj) -> list[Cause]:
        """Templates of a new workload."""
        return rules.validate_workload_spec(obj.get("spec"))

    def validate_spec_update(self, new: Obj, old: Obj) -> list[Cause]:
        """Template count, names and controllerRef are immutable."""
        return rules.validate_workload_update(new.get("spec"), old.get("spec"))
