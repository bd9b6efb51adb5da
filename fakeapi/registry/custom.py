"""Strategies of CustomResourceDefinitions and of the custom resources they serve, and the
facts a custom resource's row carries from its CRD (schema, scale paths) for the registry and
OpenAPI.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import orjson

from fakeapi.machinery.errors import Cause, bad_request, invalid
from fakeapi.machinery.field import immutable
from fakeapi.machinery.timestamps import rfc3339
from fakeapi.registry.context import RequestContext
from fakeapi.registry.rest import Kind, Obj, StatusStrategy, Strategy, ViewStrategy
from fakeapi.registry.validation import meta as meta_rules
from fakeapi.registry.workloads import ScaleStrategy
from fakeapi.schema import crd

OBJECT_META = "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


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


def _schema(kind: Kind) -> Obj:
    return custom(kind).get("schema") or {}


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
        spec_path, status_path, selector_path = scale_paths(self.kind)
        meta = obj["metadata"]
        keep = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
        scale: Obj = {"kind": "Scale", "apiVersion": "autoscaling/v1",
                      "metadata": {k: meta[k] for k in keep if k in meta},
                      "spec": {"replicas": int(jsonpath_get(obj, spec_path) or 0)},
                      "status": {"replicas": int(jsonpath_get(obj, status_path) or 0)}}
        if selector_path:
            scale["status"]["selector"] = str(jsonpath_get(obj, selector_path) or "")
        return scale

    def unview(self, body: Obj, old: Obj) -> Obj:
        """The object with the Scale's replicas at the CRD's spec path."""
        replicas = (body.get("spec") or {}).get("replicas", 0)
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise invalid("Scale", "autoscaling", old["metadata"]["name"], [Cause(
                "spec.replicas", f"Invalid value: {replicas}: must be greater than or equal "
                "to 0")])
        spec_path = scale_paths(self.kind)[0]
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


# ----- what a custom kind's row carries ----------------------------------------------------


def custom(kind: Kind) -> Obj:
    """What a custom kind's row carries: its `schema`, `scale` paths and `singular` name."""
    return _parsed(kind.custom_schema)


@functools.lru_cache(maxsize=256)
def _parsed(text: str) -> Obj:
    loaded = orjson.loads(text)
    return loaded if isinstance(loaded, dict) else {}


def wire_schema(kind: Kind) -> Obj:
    """The schema of a custom kind as served in OpenAPI (metadata is an ObjectMeta)."""
    schema = dict(custom(kind).get("schema") or {})
    props = dict(schema.get("properties") or {})
    props["metadata"] = {"$ref": OBJECT_META}
    props.setdefault("apiVersion", {"type": "string"})
    props.setdefault("kind", {"type": "string"})
    schema["properties"] = props
    schema["x-kubernetes-group-version-kind"] = [
        {"group": kind.group, "version": kind.version, "kind": kind.kind}]
    return schema


def jsonpath_get(obj: Any, path: str) -> Any:
    """The value at a simple JSONPath (`.spec.replicas`, `.status.conditions[0].type`)."""
    cur = obj
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path.strip().lstrip("{").rstrip("}")):
        if part.startswith("["):
            index = int(part[1:-1])
            cur = cur[index] if isinstance(cur, list) and index < len(cur) else None
        else:
            cur = cur.get(part) if isinstance(cur, dict) else None
        if cur is None:
            return None
    return cur


def scale_paths(kind: Kind) -> tuple[str, str, str]:
    """The CRD's scale subresource paths (spec replicas, status replicas, label selector)."""
    scale = custom(kind).get("scale") or {}
    return (str(scale.get("specReplicasPath") or ".spec.replicas"),
            str(scale.get("statusReplicasPath") or ".status.replicas"),
            str(scale.get("labelSelectorPath") or ""))
