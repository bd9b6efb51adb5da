"""Upstream's decode-time defaults (`SetDefaults_*`) by resource: the DRA kinds here, the
everyday kinds in `workload_defaults`.

Upstream applies these while decoding any request body, apply configurations included, so
two managers applying the same manifest share the defaulted fields instead of conflicting.
The strategies call `decode_defaults` too; a decoder may call it earlier on request bodies.
"""

from __future__ import annotations

from typing import Any

from fakeapi.registry.validation import claims, poolstatus
from fakeapi.registry.workload_defaults import DEFAULTERS

CLAIMS = "resourceclaims.resource.k8s.io"
TEMPLATES = "resourceclaimtemplates.resource.k8s.io"
POOL_STATUS = "resourcepoolstatusrequests.resource.k8s.io"


def decode_defaults(resource_id: str, obj: Any) -> None:
    """Default `obj` (a JSON object of kind `resource_id`) in place; other kinds unchanged."""
    if not isinstance(obj, dict):
        return
    spec = obj.get("spec")
    if resource_id == CLAIMS:
        claims.default_claim_spec(spec)
    elif resource_id == TEMPLATES and isinstance(spec, dict):
        claims.default_claim_spec(spec.get("spec"))
    elif resource_id == POOL_STATUS:
        poolstatus.default_rpsr_spec(spec)
    else:
        defaulter = DEFAULTERS.get(resource_id)
        if defaulter is not None:
            defaulter(obj)
