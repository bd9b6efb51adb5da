"""Strategies of the resource.k8s.io kinds (DRA), after upstream's pkg/registry/resource.

Defaulting, validation and immutability live here; the rules themselves are the pure
functions of `fakeapi.registry.validation` (`claims`, `classes`, `slices`, `poolstatus`).
Feature-gate field dropping is not done here.
"""

from __future__ import annotations

from fakeapi.auth import authz
from fakeapi.machinery import names
from fakeapi.machinery.errors import Cause
from fakeapi.machinery.errors import invalid as invalid_error
from fakeapi.machinery.field import immutable, invalid
from fakeapi.machinery.timestamps import rfc3339
from fakeapi.registry.context import RequestContext
from fakeapi.registry.rest import Obj, SpecStrategy, StatusStrategy
from fakeapi.registry.validation import claims, classes, poolstatus, slices


class _ResourceStrategy(SpecStrategy):
    """Common bits: gate lookups, defaulting on every write, the metadata (finalizer) rules."""

    def enabled(self, gate: str) -> bool:
        """Whether a feature gate is on."""
        return self.env.gates.enabled(gate)

    def now(self) -> str:
        """The time for defaulted timestamps, from the cluster clock."""
        return rfc3339(self.env.now())

    def prepare_for_create(self, obj: Obj, ctx: RequestContext) -> None:
        """Status reset (where /status exists), then the kind's defaults."""
        super().prepare_for_create(obj, ctx)
        self.default(obj, None)

    def prepare_for_update(self, new: Obj, old: Obj, ctx: RequestContext) -> None:
        """Status from the stored object, then the kind's defaults."""
        super().prepare_for_update(new, old, ctx)
        self.default(new, old)

    def default(self, obj: Obj, old: Obj | None) -> None:
        """Same as upstream: the decode-time defaults, on create and on every update (`old` is
        the stored object, None on create)."""
        self.kind.defaulter(obj)


class _ResourceStatusStrategy(StatusStrategy):
    """Common bits of the `/status` strategies: the metadata is the stored one."""

    def enabled(self, gate: str) -> bool:
        """Whether a feature gate is on."""
        return self.env.gates.enabled(gate)


# ----- DeviceClass ---------------------------------------------------------------------------


class DeviceClassStrategy(_ResourceStrategy):
    """Same as upstream deviceclass strategy: selectors compile, configs are JSON objects."""

    def validate_spec(self, obj: Obj) -> list[Cause]:
        """A new class."""
        return classes.validate_device_class_spec(obj.get("spec"), None, self.enabled)

    def validate_spec_update(self, new: Obj, old: Obj) -> list[Cause]:
        """Unchanged selectors/configs are not re-validated (same as upstream "stored")."""
        return classes.validate_device_class_spec(new.get("spec"), old.get("spec") or {},
                                                self.enabled)


# ----- ResourceClaim -------------------------------------------------------------------------


class ResourceClaimStrategy(_ResourceStrategy):
    """Same as upstream resourceclaim strategy: request defaults (ExactCount, count 1,
    toleration operator Equal), admin access, immutable spec."""

    def validate_spec(self, obj: Obj) -> list[Cause]:
        """Same as upstream: AuthorizedForAdmin, then ValidateResourceClaim."""
        causes = claims.admin_access_causes(obj.get("spec"), obj["metadata"].get("namespace", ""),
                                           self.env.lookup)
        return causes + claims.validate_claim_spec(obj.get("spec"), "spec", self.enabled)

    def validate_spec_update(self, new: Obj, old: Obj) -> list[Cause]:
        """Same as upstream: the new claim is valid and its spec is unchanged."""
        causes = claims.validate_claim_spec(new.get("spec"), "spec", self.enabled)
        if new.get("spec") != old.get("spec"):
            causes.append(immutable("spec", new.get("spec")))
        return causes


class ResourceClaimStatusStrategy(_ResourceStatusStrategy):
    """Same as upstream resourceclaim status strategy."""

    def prepare_for_update(self, new: Obj, old: Obj, ctx: RequestContext) -> None:
        """Spec and metadata from the stored claim; drop status of deallocated devices."""
        super().prepare_for_update(new, old, ctx)
        claims.drop_deallocated_devices(new, old)

    def validate_update(self, new: Obj, old: Obj, ctx: RequestContext) -> list[Cause]:
        """Same as upstream: AuthorizedForAdminStatus, then the status rules."""
        causes = claims.admin_access_status_causes(
            new.get("status") or {}, old.get("status") or {},
            new["metadata"].get("namespace", ""), self.env.lookup)
        return causes + claims.validate_claim_status_update(new, old)

    def admit(self, new: Obj, old: Obj, ctx: RequestContext) -> None:
        """Same as upstream's granular status authorization (behind its gate): allocation,
        reservedFor and per-driver device status need extra permissions (422 when missing)."""
        if not self.enabled(authz.GRANULAR_GATE):
            return
        causes = authz.claim_status_causes(self.env.authorizer, ctx.requester,
                                           ctx.verb or "update", self.kind, new, old)
        if causes:
            raise invalid_error(self.kind.kind, self.kind.group, new["metadata"].get("name", ""),
                                causes)


# ----- ResourceClaimTemplate -----------------------------------------------------------------


class ResourceClaimTemplateStrategy(_ResourceStrategy):
    """Same as upstream resourceclaimtemplate strategy: request defaults of the embedded claim
    spec; the spec never changes."""

    def validate_spec(self, obj: Obj) -> list[Cause]:
        """Same as upstream: AuthorizedForAdmin, template metadata, the claim spec."""
        spec = obj.get("spec") or {}
        causes = claims.admin_access_causes(spec.get("spec"), obj["metadata"].get("namespace", ""),
                                           self.env.lookup)
        causes += _template_meta(spec.get("metadata") or {}, "spec.metadata")
        return causes + claims.validate_claim_spec(spec.get("spec"), "spec.spec", self.enabled)

    def validate_spec_update(self, new: Obj, old: Obj) -> list[Cause]:
        """Same as upstream ValidateResourceClaimTemplateUpdate: only immutability."""
        if new.get("spec") != old.get("spec"):
            return [immutable("spec", new.get("spec"))]
        return []


def _template_meta(meta: Obj, path: str) -> list[Cause]:
    """Same as upstream ValidateTemplateObjectMeta: valid label keys and values."""
    causes: list[Cause] = []
    for k, v in (meta.get("labels") or {}).items():
        causes += [invalid(f"{path}.labels", k, m) for m in names.label_key_errors(k)]
        causes += [invalid(f"{path}.labels", v, m) for m in names.label_value_errors(str(v))]
    for k in meta.get("annotations") or {}:
        causes += [invalid(f"{path}.annotations", k, m) for m in names.label_key_errors(k)]
    return causes


# ----- ResourceSlice -------------------------------------------------------------------------


class ResourceSliceStrategy(_ResourceStrategy):
    """Same as upstream resourceslice strategy: limits, node selection, immutable identity."""

    def default(self, obj: Obj, old: Obj | None) -> None:
        """Device taints get `timeAdded`."""
        super().default(obj, old)
        slices.default_slice_taints(obj.get("spec"), self.now())

    def validate_spec(self, obj: Obj) -> list[Cause]:
        """A new slice."""
        return slices.validate_slice_spec(obj.get("spec"), None, self.enabled)

    def validate_spec_update(self, new: Obj, old: Obj) -> list[Cause]:
        """driver, pool.name and nodeName never change; unchanged parts aren't re-checked."""
        return slices.validate_slice_spec(new.get("spec"), old.get("spec") or {}, self.enabled)


# ----- DeviceTaintRule -----------------------------------------------------------------------


class DeviceTaintRuleStrategy(_ResourceStrategy):
    """Same as upstream devicetaintrule strategy."""

    def default(self, obj: Obj, old: Obj | None) -> None:
        """The taint gets `timeAdded`; a new effect restarts it."""
        super().default(obj, old)
        classes.default_rule_taint(obj.get("spec"), None if old is None else old.get("spec"),
                                 self.now())

    def validate_spec(self, obj: Obj) -> list[Cause]:
        """A new rule."""
        return classes.validate_taint_rule_spec(obj.get("spec"), None)

    def validate_spec_update(self, new: Obj, old: Obj) -> list[Cause]:
        """The effect is only re-checked when it changes."""
        return classes.validate_taint_rule_spec(new.get("spec"), old.get("spec") or {})


class DeviceTaintRuleStatusStrategy(_ResourceStatusStrategy):
    """Same as upstream devicetaintrule status strategy: at most 8 valid conditions."""

    def validate_update(self, new: Obj, old: Obj, ctx: RequestContext) -> list[Cause]:
        """Conditions only."""
        return classes.validate_taint_rule_status(new.get("status"))


# ----- ResourcePoolStatusRequest -------------------------------------------------------------


class ResourcePoolStatusRequestStrategy(_ResourceStrategy):
    """KEP-5677: `limit` defaults to 100; spec immutable; the whole request frozen once status
    is set."""

    def validate_spec(self, obj: Obj) -> list[Cause]:
        """A new request."""
        return poolstatus.validate_rpsr_spec(obj.get("spec"))

    def validate_spec_update(self, new: Obj, old: Obj) -> list[Cause]:
        """Nothing in the spec changes; nothing at all once status is set."""
        return poolstatus.validate_rpsr_update(new, old)


class ResourcePoolStatusRequestStatusStrategy(_ResourceStatusStrategy):
    """Status is written once by the pool-status controller, then frozen."""

    def validate_update(self, new: Obj, old: Obj, ctx: RequestContext) -> list[Cause]:
        """A first status must be valid; a set status never changes."""
        return poolstatus.validate_rpsr_status_update(new.get("status"), old.get("status"))
