"""Device taints from ResourceSlices and DeviceTaintRules, as the DRA controllers see them.

Pure functions over wire dicts. A DeviceTaintRule (resource.k8s.io/v1) selects devices by
driver, pool and device name; same as upstream ruleMatchesDevice, a rule without a selector
selects nothing and an empty selector selects every device. The pool-status controller
counts devices with a blocking taint as unavailable; the eviction controller evicts the
users of devices with an untolerated NoExecute taint.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from fakeapi.kube import taints

Obj = dict[str, Any]


def rule_selects(rule: Obj, driver: str, pool: str, device: str) -> bool:
    """Same as upstream ruleMatchesDevice: every field the selector sets must match."""
    selector = (rule.get("spec") or {}).get("deviceSelector")
    if selector is None:
        return False
    return all(selector.get(field) is None or selector[field] == value
               for field, value in (("driver", driver), ("pool", pool), ("device", device)))


def rule_taint(rule: Obj) -> Obj:
    """The taint a rule applies."""
    return (rule.get("spec") or {}).get("taint") or {}


def device_taints(device: Obj, driver: str, pool: str, rules: Iterable[Obj]) -> Iterator[Obj]:
    """Every taint of a published device: its own, then those of the rules selecting it."""
    yield from device.get("taints") or []
    for rule in rules:
        if rule_selects(rule, driver, pool, device.get("name", "")):
            yield rule_taint(rule)


def blocked(device: Obj, driver: str, pool: str, rules: Iterable[Obj]) -> bool:
    """Whether the device has a NoSchedule or NoExecute taint (it cannot be allocated)."""
    return any(t.get("effect") in taints.BLOCKING
               for t in device_taints(device, driver, pool, rules))
