"""Strategies of CustomResourceDefinitions and of the custom resources they serve."""

from __future__ import annotations

from typing import Any

from fakeapi.machinery.errors import Cause, bad_request, invalid
from fakeapi.machinery.field import immutable
from fakeapi.machinery.timestamps import rfc3339
from fakeapi.registry import custom_kinds
from fakeapi.registry.context import RequestContext
from fakeapi.registry.strategy import Obj, StatusStrategy, Strategy, ViewStrategy
from fakeapi.registry.validation import meta as meta_rules
from fakeapi.registry.workloads import ScaleStrategy
from fakeapi.schema import crd


class CustomResourceDefinitionStrategy(Strategy):
    """Same as upstream's CRD strategy: defaults, validation, and (as its naming and
    establishing controllers would, at once) the accepted names and Established condition;
    group and scope never change."""

    def prepare_for_create(self, obj: Obj, ctx: RequestContext) -> None:
        """Defaults; established at once."""
        crd.default_crd(obj)
        obj["status"] = crd.established_status({**obj, "status": {}},
                                               rfc3339(self.env.now()))

    def prepare_for_update(self, new: Obj, old: Obj, ctx: RequestContext) -> None:
        """Defaults; the status follows the new names and stored versions."""
        crd.default_crd(new)
        new["status"] = crd.established_status({**new, "status": old.get("status") or {}},
                                               rfc3339(self.env.now()))

    def validate(self, obj: Obj, ctx: RequestContext) -> list[Cause]:
        """Finalizer names and the CRD rules."""
        return meta_rules.finalizer_names(obj["metadata"]) + crd.crd_causes(obj)

    def validate_update(self, new: Obj, old: Obj, ctx: RequestContext) -> list[Cause]:
        """The CRD rules; group and scope are immutable."""
        causes = meta_rules.update_rules(new["metadata"], old["metadata"]) + crd.crd_causes(new)
        for field in ("group", "scope"):
            value = (new.get("spec") or {}).get(field)
            if value != (old.get("spec") or {}).get(field):
                causes.append(immutable(f"spec.{field}", value))
        return causes


def _schema(kind: Any) -> Obj:
    return custom_kinds.custom(kind).get("schema") or {}


class CustomResourceStrategy(Strategy):
    """A custom resource: its CRD's OpenAPI value rules and CEL rules (transition rules
    against the stored object on update)."""

    def validate(self, obj: Obj, ctx: RequestContext) -> list[Cause]:
        """The schema's rules."""
        return (meta_rules.finalizer_names(obj["metadata"])
                + crd.validate(_body(obj), _schema(self.kind)))

    def validate_update(self, new: Obj, old: Obj, ctx: RequestContext) -> list[Cause]:
        """The schema's rules, transition rules included."""
        return (meta_rules.update_rules(new["metadata"], old["metadata"])
                + crd.validate(_body(new), _schema(self.kind), old=_body(old)))


def _body(obj: Obj) -> Obj:
    """What the schema validates: the object without its ObjectMeta (checked elsewhere)."""
    return {k: v for k, v in obj.items() if k != "metadata"}


class CustomResourceStatusStrategy(StatusStrategy):
    """`/status` of a custom resource: the status changes, validated by the schema."""

    def validate_update(self, new: Obj, old: Obj, ctx: RequestContext) -> list[Cause]:
        """The schema's rules of the new status."""
        status_schema = (_schema(self.kind).get("properties") or {}).get("status")
        if not isinstance(status_schema, dict) or "status" not in new:
            return []
        return crd.validate(new["status"], status_schema, old=old.get("status"),
                            path="status")


class CustomResourceScaleStrategy(ViewStrategy):
    """`/scale` of a custom resource, at the paths its CRD names."""

    view_kind = "Scale"

    def view(self, obj: Obj) -> Obj:
        """The Scale: replicas and selector read at the CRD's paths."""
        spec_path, status_path, selector_path = custom_kinds.scale_paths(self.kind)
        meta = obj["metadata"]
        keep = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
        scale: Obj = {"kind": "Scale", "apiVersion": "autoscaling/v1",
                      "metadata": {k: meta[k] for k in keep if k in meta},
                      "spec": {"replicas": int(custom_kinds.jsonpath_get(obj, spec_path) or 0)},
                      "status": {"replicas": int(custom_kinds.jsonpath_get(obj, status_path) or 0)}}
        if selector_path:
            scale["status"]["selector"] = str(custom_kinds.jsonpath_get(obj, selector_path) or "")
        return scale

    def unview(self, body: Obj, old: Obj) -> Obj:
        """The object with the Scale's replicas at the CRD's spec path."""
        replicas = (body.get("spec") or {}).get("replicas", 0)
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise invalid("Scale", "autoscaling", old["metadata"]["name"], [Cause(
                "spec.replicas", f"Invalid value: {replicas}: must be greater than or equal "
                "to 0")])
        spec_path = custom_kinds.scale_paths(self.kind)[0]
        parts = [p for p in spec_path.split(".") if p]
        if not parts:
            raise bad_request(f"invalid specReplicasPath {spec_path!r}")
        new = {**old, "metadata": {**old["metadata"], "resourceVersion": (
            body.get("metadata") or {}).get("resourceVersion", "")}}
        cur = new
        for part in parts[:-1]:
            cur[part] = dict(cur.get(part) or {})
            cur = cur[part]
        cur[parts[-1]] = replicas
        return new

    prepare_for_update = ScaleStrategy.prepare_for_update
