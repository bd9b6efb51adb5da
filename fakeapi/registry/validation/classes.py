"""Validation of DeviceClasses and DeviceTaintRules, after upstream's
pkg/apis/resource/validation: a class's selectors, configs and extended resource name; a taint
rule's device selector, taint and status conditions (and the taint's `timeAdded` default).
"""

from __future__ import annotations

from typing import Any

from fakeapi.machinery.errors import Cause
from fakeapi.machinery.field import (
    child,
    invalid,
    too_many,
)
from fakeapi.registry.validation import common
from fakeapi.registry.validation.claims import (
    CONFIGS_MAX,
    SELECTORS_MAX,
    device_selector,
    opaque_config,
)
from fakeapi.registry.validation.common import (
    Enabled,
    driver_name,
    pool_name,
    validate_slice,
)
from fakeapi.registry.validation.slices import device_name, taint

TAINT_RULE_CONDITIONS_MAX = 8  # same as upstream (1.37)


# ===== DeviceClass ==========================================================================

def validate_device_class_spec(spec: Any, old_spec: Any, enabled: Enabled) -> list[Cause]:
    """Same as upstream validateDeviceClassSpec (unchanged selectors count as stored)."""
    spec = spec or {}
    path = "spec"
    stored = old_spec is not None and (old_spec or {}).get("selectors") == spec.get("selectors")
    causes = validate_slice(spec.get("selectors"), SELECTORS_MAX,
                            lambda s, p: device_selector(s or {}, p, enabled, stored),
                            child(path, "selectors"))
    stored_config = old_spec is not None and (old_spec or {}).get("config") == spec.get("config")
    causes += validate_slice(spec.get("config"), CONFIGS_MAX,
                             lambda c, p: opaque_config(c or {}, p, stored_config),
                             child(path, "config"))
    name = spec.get("extendedResourceName")
    if name is not None and not is_extended_resource_name(name):
        causes.append(invalid(child(path, "extendedResourceName"), name,
                              "must be a valid extended resource name"))
    return causes


def is_extended_resource_name(name: str) -> bool:
    """Same as upstream IsExtendedResourceName: domain-prefixed, not kubernetes.io, quotable."""
    from fakeapi.machinery import names

    if "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    if domain == "kubernetes.io" or domain.endswith(".kubernetes.io"):
        return False
    return not names.label_key_errors("requests." + name)


# ===== DeviceTaintRule ========================================================================

def default_rule_taint(spec: Any, old_spec: Any, now: str) -> None:
    """SetDefaults_DeviceTaint for a DeviceTaintRule, plus upstream's update rule: a changed
    effect with an unchanged `timeAdded` restarts the clock (so it tracks the effect)."""
    if not isinstance(spec, dict) or not isinstance(spec.get("taint"), dict):
        return
    t = spec["taint"]
    if not t.get("timeAdded"):
        t["timeAdded"] = now
    old = (old_spec or {}).get("taint") if isinstance(old_spec, dict) else None
    if isinstance(old, dict) and old.get("effect") != t.get("effect") and \
            old.get("timeAdded") == t.get("timeAdded"):
        t["timeAdded"] = now


def validate_taint_rule_spec(spec: Any, old_spec: Any) -> list[Cause]:
    """Same as upstream validateDeviceTaintRuleSpec."""
    spec = spec or {}
    path = "spec"
    causes: list[Cause] = []
    sel = spec.get("deviceSelector")
    if sel:
        spath = child(path, "deviceSelector")
        if sel.get("driver") is not None:
            causes += driver_name(sel["driver"], child(spath, "driver"))
        if sel.get("pool") is not None:
            causes += pool_name(sel["pool"], child(spath, "pool"))
        if sel.get("device") is not None:
            causes += device_name(sel["device"], child(spath, "device"))
    old_taint = (old_spec or {}).get("taint") if old_spec is not None else None
    causes += taint(spec.get("taint"), child(path, "taint"), old_taint)
    return causes


def validate_taint_rule_status(status: Any) -> list[Cause]:
    """Same as upstream ValidateDeviceTaintRuleStatusUpdate."""
    conds = (status or {}).get("conditions") or []
    causes = common.conditions(conds, "status.conditions")
    if len(conds) > TAINT_RULE_CONDITIONS_MAX:
        causes.append(too_many("status.conditions", len(conds), TAINT_RULE_CONDITIONS_MAX))
    return causes
