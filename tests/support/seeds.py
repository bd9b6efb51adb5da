"""What the seed examples need: the feature gates they use, and a claim manifest like theirs."""

from __future__ import annotations

from typing import Any

import yaml

SEED_GATES = ("DRAResourcePoolStatus=true,DRAPartitionableDevicesType=true,GenericWorkload=true,"
              "DRAWorkloadResourceClaims=true,DRAListTypeAttributes=true,DRADerivedAttributes=true")
"""The 1.37 gates off by default that the seed examples use (RPSR, PodGroup claims, list and
derived attributes, partition types), as `--feature-gates` takes them."""
SEED_GATE_MAP = {item.split("=")[0]: item.split("=")[1] == "true"
                 for item in SEED_GATES.split(",")}
"""The same gates as a `ClusterConfig.feature_gates` mapping."""


def claim_manifest(name: str, **metadata: Any) -> str:
    """A ResourceClaim for one device of class gpu.example.com, as YAML for `kubectl -f -`;
    `metadata` adds fields (namespace, labels) next to the name."""
    return yaml.safe_dump({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, **metadata},
        "spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
    }, sort_keys=False)
