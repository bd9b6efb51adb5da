"""Devices in use, from allocated claims and in-flight ones (upstream's AllocatedState, as
the scheduler's claim tracker builds it: adminAccess results never count; a result with a
shareID is one share of a device, whose consumed capacity adds up)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from fakeapi.machinery.quantity import parse

Obj = Mapping[str, Any]


class AllocatedState:
    """What is allocated, keyed by claim UID so a claim can be added and removed as its
    allocation appears, changes or goes (or is in flight between Reserve and PreBind)."""

    def __init__(self) -> None:
        self._claims: dict[str, list[tuple[str, str | None, dict[str, Fraction] | None]]] = {}
        self.dedicated: Counter[str] = Counter()
        """Devices allocated without a shareID: in use, nobody else gets them."""
        self.shared: Counter[str] = Counter()
        """Devices with at least one share (consumable capacity)."""
        self.capacity: dict[str, dict[str, Fraction]] = {}
        """Capacity consumed by the shares of each device."""
        self.version = 0
        """Bumped on every change, so caches derived from the state know when to refresh."""
        self._pool_versions: Counter[str] = Counter()
        """Per pool (`driver/pool`): bumped whenever a device of the pool is taken or freed,
        so a cache of one node's outcome can tell whether its pools changed."""

    def add(self, claim_uid: str, allocation: Obj | None) -> None:
        """Record a claim's `status.allocation` (replacing what it had); None removes it."""
        self.remove(claim_uid)
        if not allocation:
            return
        entries = []
        for result in (allocation.get("devices") or {}).get("results") or []:
            if result.get("adminAccess"):
                continue
            key = f"{result.get('driver')}/{result.get('pool')}/{result.get('device')}"
            share = result.get("shareID")
            consumed = None
            if share is not None and result.get("consumedCapacity") is not None:
                consumed = {name: parse(q).value
                            for name, q in result["consumedCapacity"].items()}
            entries.append((key, share, consumed))
            self._pool_versions[key.rpartition("/")[0]] += 1
            if share is None:
                self.dedicated[key] += 1
            else:
                self.shared[key] += 1
                if consumed is not None:
                    total = self.capacity.setdefault(key, {})
                    for name, value in consumed.items():
                        total[name] = total.get(name, 0) + value
        self._claims[claim_uid] = entries
        self.version += 1

    def remove(self, claim_uid: str) -> None:
        """Forget a claim's allocation (deallocated, deleted, or no longer in flight)."""
        entries = self._claims.pop(claim_uid, None)
        if entries is None:
            return
        for key, share, consumed in entries:
            self._pool_versions[key.rpartition("/")[0]] += 1
            counter = self.dedicated if share is None else self.shared
            counter[key] -= 1
            if counter[key] <= 0:
                del counter[key]
            if consumed is not None and key in self.capacity:
                total = self.capacity[key]
                for name, value in consumed.items():
                    total[name] = total.get(name, 0) - value
                if all(v == 0 for v in total.values()):
                    del self.capacity[key]
        self.version += 1

    def pool_version(self, pool_id: str) -> int:
        """How often devices of the pool `driver/pool` were taken or freed (0: never)."""
        return self._pool_versions.get(pool_id, 0)

    def __contains__(self, claim_uid: object) -> bool:
        return claim_uid in self._claims

    def allocated(self, key: str) -> bool:
        """Same as upstream's IsDeviceAllocated: dedicated, shared, or with consumed capacity."""
        return key in self.dedicated or key in self.shared or key in self.capacity
