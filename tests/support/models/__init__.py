"""Typed pydantic models of the DRA kinds, read and written in their exact wire form.

The per-group-version modules (`meta`, `core_v1`, `resource_v1`, `resource_v1alpha3`,
`scheduling_v1beta1`) are generated from the 1.37 schemas by scripts/gen_models.py; the
conventions they follow (aliases, unknown fields kept, Quantity/Time as strings) are in
`tests.support.models.base`.

    claim = parse(obj, ResourceClaim)       # typed; `parse(obj)` dispatches on apiVersion/kind
    claim.status.allocation.devices.results[0].share_id
    to_wire(claim) == obj                   # for any object without explicit nulls
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar, overload

from tests.support.models import core_v1, meta, resource_v1, resource_v1alpha3, scheduling_v1beta1
from tests.support.models.base import (
    FieldsV1,
    IntOrString,
    K8sModel,
    MicroTime,
    Quantity,
    RawExtension,
    Time,
    format_micro_time,
    format_time,
    parse_time,
)
from tests.support.models.meta import Condition, ListMeta, ObjectMeta, OwnerReference
from tests.support.models.resource_v1 import (
    DeviceClass,
    DeviceClassList,
    DeviceTaintRule,
    DeviceTaintRuleList,
    ResourceClaim,
    ResourceClaimList,
    ResourceClaimTemplate,
    ResourceClaimTemplateList,
    ResourceSlice,
    ResourceSliceList,
)
from tests.support.models.resource_v1alpha3 import (
    ResourcePoolStatusRequest,
    ResourcePoolStatusRequestList,
)
from tests.support.models.scheduling_v1beta1 import PodGroup, PodGroupList, Workload, WorkloadList

__all__ = [
    "KINDS", "MODULES", "Condition", "DeviceClass", "DeviceClassList", "DeviceTaintRule",
    "DeviceTaintRuleList", "FieldsV1", "IntOrString", "K8sModel", "KindError", "ListMeta",
    "MicroTime", "ObjectMeta", "OwnerReference", "PodGroup", "PodGroupList", "Quantity",
    "RawExtension", "ResourceClaim", "ResourceClaimList", "ResourceClaimTemplate",
    "ResourceClaimTemplateList", "ResourcePoolStatusRequest", "ResourcePoolStatusRequestList",
    "ResourceSlice", "ResourceSliceList", "Time", "Workload", "WorkloadList", "all_models",
    "format_micro_time", "format_time", "model_for", "parse", "parse_time", "schema_name",
    "to_wire", "unknown_fields",
]

M = TypeVar("M", bound=K8sModel)

MODULES = (meta, core_v1, resource_v1, resource_v1alpha3, scheduling_v1beta1)
"""The generated modules, leaves first."""


def all_models() -> list[type[K8sModel]]:
    """Every generated model class, module by module in definition order."""
    return [
        obj
        for module in MODULES
        for obj in vars(module).values()
        if isinstance(obj, type) and issubclass(obj, K8sModel) and obj.__module__ == module.__name__
    ]


def schema_name(model: type[K8sModel]) -> str:
    """The 1.37 schema definition a generated class was made from."""
    return sys.modules[model.__module__].SCHEMA_PREFIX + model.__name__


KINDS: dict[tuple[str, str], type[K8sModel]] = {
    (m.API_VERSION, m.KIND): m
    for m in all_models()
    if m.API_VERSION is not None and m.KIND is not None
}
"""(apiVersion, kind) -> model, for every top-level kind and its List."""


class KindError(LookupError):
    """An object whose apiVersion/kind has no model, or not the one the caller expected."""


def model_for(api_version: str, kind: str) -> type[K8sModel] | None:
    """The model of an apiVersion and kind, or None."""
    return KINDS.get((api_version, kind))


@overload
def parse(obj: Mapping[str, Any]) -> K8sModel: ...
@overload
def parse(obj: Mapping[str, Any], expect: type[M]) -> M: ...
def parse(obj: Mapping[str, Any], expect: type[K8sModel] | None = None) -> K8sModel:
    """The typed model of a wire object, chosen by its apiVersion and kind.

    With `expect`, the object must be of that kind but may lack apiVersion and kind (items
    of a List do); `expect` may also be a nested type (`parse(spec, ResourceClaimSpec)`).
    Raises KindError for an unknown or unexpected kind, pydantic's ValidationError for bad
    content.
    """
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if expect is not None:
        if expect.KIND is not None and (
            api_version not in (None, expect.API_VERSION) or kind not in (None, expect.KIND)
        ):
            want = f"{expect.API_VERSION} {expect.KIND}"
            raise KindError(f"expected {want}, got {api_version} {kind}")
        return expect.model_validate(obj)
    model = KINDS.get((api_version, kind)) if api_version and kind else None
    if model is None:
        raise KindError(f"no model for apiVersion {api_version!r} kind {kind!r}")
    return model.model_validate(obj)


def to_wire(model: K8sModel) -> dict[str, Any]:
    """The JSON-ready wire dict of a model (JSON names, unset fields left out)."""
    return model.to_wire()


def unknown_fields(model: K8sModel) -> list[str]:
    """Field paths (`spec.devices.requests[0].foo`) the models do not know, in order."""
    return list(_unknown(model, ""))


def _unknown(value: Any, path: str) -> Iterator[str]:
    if isinstance(value, K8sModel):
        for name, info in type(value).model_fields.items():
            key = info.alias or name
            yield from _unknown(getattr(value, name), f"{path}.{key}" if path else key)
        for key in value.model_extra or {}:
            yield f"{path}.{key}" if path else key
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _unknown(item, f"{path}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _unknown(item, f"{path}[{key}]")
