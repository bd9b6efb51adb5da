"""Strategies of scheduling.k8s.io/v1beta1 PodGroup and Workload."""

from __future__ import annotations

from fakeapi.errors import Cause
from fakeapi.registry.context import RequestContext
from fakeapi.registry.strategy import Obj, StatusStrategy, Strategy
from fakeapi.validation import meta as meta_rules
from fakeapi.validation import scheduling as rules


class PodGroupStrategy(Strategy):
    """A PodGroup's spec is fixed at creation except `schedulingPolicy.gang.minCount`."""

    def validate(self, obj: Obj, ctx: RequestContext) -> list[Cause]:
        """Policy and claims of a new group."""
        return meta_rules.finalizer_names(obj["metadata"]) + rules.validate_pod_group_spec(
            obj.get("spec"))

    def validate_update(self, new: Obj, old: Obj, ctx: RequestContext) -> list[Cause]:
        """Immutable spec fields, then the create rules."""
        return meta_rules.update_rules(new["metadata"], old["metadata"]) + \
            rules.validate_pod_group_update(new.get("spec"), old.get("spec"))


class PodGroupStatusStrategy(StatusStrategy):
    """Same as upstream ValidatePodGroupStatusUpdate: conditions and claim statuses."""

    def validate_update(self, new: Obj, old: Obj, ctx: RequestContext) -> list[Cause]:
        """Claim statuses must name an entry of spec.resourceClaims."""
        return rules.validate_pod_group_status(new)


class WorkloadStrategy(Strategy):
    """Workload templates: fixed in number and name once created."""

    def validate(self, obj: Obj, ctx: RequestContext) -> list[Cause]:
        """Templates of a new workload."""
        return meta_rules.finalizer_names(obj["metadata"]) + rules.validate_workload_spec(
            obj.get("spec"))

    def validate_update(self, new: Obj, old: Obj, ctx: RequestContext) -> list[Cause]:
        """Template count, names and controllerRef are immutable."""
        return meta_rules.update_rules(new["metadata"], old["metadata"]) + \
            rules.validate_workload_update(new.get("spec"), old.get("spec"))
