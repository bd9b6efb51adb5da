"""Consumable capacity, as upstream's consumable_capacity.go computes it.

A request's amount of each device capacity is rounded by the capacity's request policy
(validRange: up to `min`, then up to `min + k*step`; validValues: up to the smallest value
not below it), an unrequested capacity consumes the policy's default or else all of it, and
a device fits when what is allocated, in flight and newly consumed stays within its value.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from fakeapi.machinery.quantity import Quantity, binary

from .devices import Capacity, Device

Consumed = dict[str, Fraction]


def consumed_amount(requested: Quantity | None, cap: Capacity) -> Quantity:
    """Same as upstream's calculateConsumedCapacity."""
    if requested is None:
        if cap.default is not None:
            return cap.default
        return cap.value
    if not cap.has_policy:
        return requested
    if cap.min is not None:
        if requested.value < cap.min.value:
            return cap.min
        if cap.step is None:
            return requested
        step, low = cap.step.int_value(), cap.min.int_value()
        added = requested.int_value() - low
        n = -(-added // step) if step else 0
        return binary(low + step * n)
    if cap.valid_values is not None:
        for valid in cap.valid_values:
            if requested.value <= valid.value:
                return valid
    return requested


def violates_policy(amount: Quantity, cap: Capacity) -> bool:
    """Same as upstream's violatesPolicy: the default always passes; then above `max`,
    off-step (counted from `min`), or not one of the valid values."""
    if not cap.has_policy:
        return False
    if cap.default is not None and amount.value == cap.default.value:
        return False
    if cap.has_range:
        if cap.max is not None and amount.value > cap.max.value:
            return True
        if cap.step is not None and cap.min is not None:
            step = cap.step.int_value()
            return bool(step) and (amount.int_value() - cap.min.int_value()) % step != 0
        return False
    if cap.valid_values:
        return all(amount.value != v.value for v in cap.valid_values)
    return False


def fits(device: Device, requests: Mapping[str, Quantity] | None, allocated: Consumed | None,
         allocating: Consumed | None) -> bool | None:
    """Same as upstream's CmpRequestOverCapacity: None when the request names a capacity the
    device lacks, else whether every capacity still fits."""
    caps = device.capacity
    if requests:
        for name in requests:
            if name not in caps:
                return None
    for name, cap in caps.items():
        amount = consumed_amount(requests.get(name) if requests else None, cap)
        if violates_policy(amount, cap):
            return False
        total = amount.value
        if allocated:
            total += allocated.get(name, 0)
        if allocating:
            total += allocating.get(name, 0)
        if total > cap.value.value:
            return False
    return True


def consumption(device: Device, requests: Mapping[str, Quantity] | None) -> dict[str, Quantity]:
    """Same as upstream's GetConsumedCapacityFromRequest: the amount of every capacity."""
    return {name: consumed_amount(requests.get(name) if requests else None, cap)
            for name, cap in device.capacity.items()}


def fits_alone(device: Device) -> bool:
    """Whether a request without capacity requests fits the device when nothing else uses
    it (each capacity's default, or all of it, within its policy): computed once per device."""
    known = device.fits_alone
    if known is None:
        known = device.fits_alone = bool(fits(device, None, None, None))
    return known
