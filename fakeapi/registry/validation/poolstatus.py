"""Validation and defaults of ResourcePoolStatusRequests (KEP-5677, resource.k8s.io/v1alpha3):
the request's spec, its immutability, and the status the pool-status controller writes once.
"""

from __future__ import annotations

from typing import Any

from fakeapi.machinery.errors import Cause
from fakeapi.machinery.field import (
    child,
    forbidden,
    immutable_forbidden,
    invalid,
    required,
    too_long,
    too_many,
)
from fakeapi.registry.validation import common
from fakeapi.registry.validation.common import (
    Obj,
    driver_name,
    fully_qualified_name,
    node_name,
    pool_name,
    validate_slice,
)

RPSR_LIMIT_DEFAULT = 100
RPSR_LIMIT_MAX = 1000
RPSR_POOLS_MAX = 1000
RPSR_CONDITIONS_MAX = 10
RPSR_PARTITION_SUMMARY_MAX = 32
RPSR_VALIDATION_ERROR_MAX = 256


def default_rpsr_spec(spec: Any) -> None:
    """Same as upstream: `limit` defaults to 100."""
    if isinstance(spec, dict) and spec.get("limit") is None:
        spec["limit"] = RPSR_LIMIT_DEFAULT


def default_resource_pool_status_request(obj: Obj) -> None:
    """Same as upstream's decode-time SetDefaults of a ResourcePoolStatusRequest."""
    default_rpsr_spec(obj.get("spec"))


def validate_rpsr_spec(spec: Any) -> list[Cause]:
    """Same as upstream's 1.37 ResourcePoolStatusRequest spec rules.

    Deliberate deviation: `driver` may also be `domain/name` (every segment a DNS subdomain),
    because the documented example (`driver: example.com/gpu`) must be accepted.
    """
    spec = spec or {}
    path = "spec"
    causes: list[Cause] = []
    driver = spec.get("driver") or ""
    if not driver:
        causes.append(required(child(path, "driver")))
    else:
        for part in driver.split("/", 1):
            causes += driver_name(part, child(path, "driver"))
    if spec.get("poolName") is not None:
        causes += pool_name(spec["poolName"], child(path, "poolName"))
    limit = spec.get("limit")
    if limit is not None:
        if limit < 1:
            causes.append(invalid(child(path, "limit"), limit,
                                  "must be greater than or equal to 1"))
        elif limit > RPSR_LIMIT_MAX:
            causes.append(invalid(child(path, "limit"), limit,
                                  f"must be less than or equal to {RPSR_LIMIT_MAX}"))
    if spec.get("defaultPartitionTypeAttribute") is not None:
        causes += fully_qualified_name(spec["defaultPartitionTypeAttribute"],
                                       child(path, "defaultPartitionTypeAttribute"))
    return causes


def validate_rpsr_update(obj: Obj, old: Obj) -> list[Cause]:
    """The spec never changes; nothing changes once status is set (KEP-5677)."""
    causes: list[Cause] = []
    if obj.get("spec") != old.get("spec"):
        causes.append(immutable_forbidden("spec"))
    if old.get("status"):  # set (an empty struct is unset)
        meta, old_meta = obj.get("metadata") or {}, old.get("metadata") or {}
        for f in ("labels", "annotations", "ownerReferences"):
            if (meta.get(f) or None) != (old_meta.get(f) or None):
                causes.append(forbidden(child("metadata", f), "may not be changed once status "
                                        "is set: the request is complete and immutable"))
        if set(meta.get("finalizers") or []) - set(old_meta.get("finalizers") or []):
            causes.append(forbidden("metadata.finalizers", "may not be added once status is "
                                    "set: the request is complete and immutable"))
    return causes


def validate_rpsr_status_update(status: Any, old_status: Any) -> list[Cause]:
    """Status is written once (by the controller), then frozen."""
    if old_status:  # set (an empty struct is unset)
        if status != old_status:
            return [immutable_forbidden("status")]
        return []
    if not status:
        return []
    path = "status"
    causes: list[Cause] = []
    if status.get("poolCount") is None:
        causes.append(required(child(path, "poolCount")))
    elif status["poolCount"] < 0:
        causes.append(invalid(child(path, "poolCount"), status["poolCount"],
                              "must be greater than or equal to 0"))
    causes += validate_slice(status.get("pools"), RPSR_POOLS_MAX, _pool_status,
                             child(path, "pools"))
    conds = status.get("conditions") or []
    if len(conds) > RPSR_CONDITIONS_MAX:
        causes.append(too_many(child(path, "conditions"), len(conds), RPSR_CONDITIONS_MAX))
    causes += common.conditions(conds, child(path, "conditions"))
    return causes


def _pool_status(pool: Any, path: str) -> list[Cause]:
    pool = pool or {}
    causes = driver_name(pool.get("driver"), child(path, "driver")) if pool.get("driver") else [
        required(child(path, "driver"))]
    causes += pool_name(pool.get("poolName"), child(path, "poolName"))
    if pool.get("nodeName"):
        causes += node_name(pool["nodeName"], child(path, "nodeName"))
    for f in ("generation", "totalDevices", "allocatedDevices", "availableDevices",
              "unavailableDevices"):
        if (pool.get(f) or 0) < 0:
            causes.append(invalid(child(path, f), pool[f], "must be greater than or equal to 0"))
    if pool.get("resourceSliceCount") is not None and pool["resourceSliceCount"] < 1:
        causes.append(invalid(child(path, "resourceSliceCount"), pool["resourceSliceCount"],
                              "must be greater than or equal to 1"))
    if len((pool.get("validationError") or "").encode()) > RPSR_VALIDATION_ERROR_MAX:
        causes.append(too_long(child(path, "validationError"), RPSR_VALIDATION_ERROR_MAX))
    causes += validate_slice(pool.get("partitionSummary"), RPSR_PARTITION_SUMMARY_MAX, None,
                             child(path, "partitionSummary"))
    return causes
