"""DRA API rules as a kubectl v1.37 user meets them (a real `fakeapi serve`, real kubectl).

Claim spec edits, device status for unallocated devices, ResourcePoolStatusRequest spec edits
and frozen completed requests are refused with upstream's messages; admin access follows the
namespace label. The session server runs with the gates the seed examples need.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.kubectl import Kubectl

DATA = Path(__file__).resolve().parent.parent / "data"
ADMIN = ("admin access to devices requires the `resource.kubernetes.io/admin-access: true` "
         "label on the containing namespace")
_COUNTER = itertools.count()


def _unique(prefix: str) -> str:
    return f"{prefix}-{next(_COUNTER)}"


def _docs(rel: str) -> list[dict[str, Any]]:
    """The documents of a YAML file under tests/data."""
    return [d for d in yaml.safe_load_all((DATA / rel).read_text()) if d]


def _apply(kubectl: Kubectl, obj: object, check: bool = True) -> tuple[int, str]:
    res = kubectl.run("apply", "-f", "-", input=yaml.safe_dump(obj), check=check)
    return res.returncode, res.stdout + res.stderr


@pytest.fixture
def ns(kubectl: Kubectl) -> str:
    """A fresh namespace without labels."""
    name = _unique("dra-rules")
    kubectl("create", "namespace", name)
    return name


def _claim(kubectl: Kubectl, ns: str) -> str:
    claim = _docs("seeds/08-macvlan-claim.yaml")[0]
    claim["metadata"] = {"name": "macvlan-eth0", "namespace": ns}
    _apply(kubectl, claim)
    return "macvlan-eth0"


def test_claim_spec_edit_is_refused(kubectl: Kubectl, ns: str) -> None:
    name = _claim(kubectl, ns)
    patch = json.dumps({"spec": {"devices": {"requests": [
        {"name": "macvlan-eth0", "exactly": {"deviceClassName": "other.example.com"}}]}}})
    res = kubectl.run("patch", "resourceclaim", name, "-n", ns, "--type=merge", "-p", patch,
                      check=False)
    assert res.returncode != 0
    assert f'The ResourceClaim "{name}" is invalid: spec: Invalid value:' in res.stderr
    assert "field is immutable" in res.stderr
    # the defaulted fields are what the server stores
    stored = json.loads(kubectl("get", "resourceclaim", name, "-n", ns, "-o", "json"))
    assert stored["spec"]["devices"]["requests"][0]["exactly"] == {
        "deviceClassName": "resource-driver.example.com", "allocationMode": "ExactCount",
        "count": 1}


def test_device_status_for_unallocated_device_is_refused(kubectl: Kubectl, ns: str) -> None:
    name = _claim(kubectl, ns)
    patch = json.dumps({"status": {"devices": [{"driver": "resource-driver.example.com",
                                                "pool": "nic-worker-a", "device": "eth0"}]}})
    res = kubectl.run("patch", "resourceclaim", name, "-n", ns, "--subresource=status",
                      "--type=merge", "-p", patch, check=False)
    assert res.returncode != 0
    assert ("status.devices[0]: Invalid value: resource-driver.example.com/nic-worker-a/eth0: "
            "must be an allocated device in the claim") in res.stderr
    # once the device is allocated, the same status is accepted
    allocated = _docs("invalid/_fixtures/macvlan-allocated.yaml")[0]
    status = {"status": {"allocation": allocated["status"]["allocation"]}}
    kubectl("patch", "resourceclaim", name, "-n", ns, "--subresource=status", "--type=merge",
            "-p", json.dumps(status))
    kubectl("patch", "resourceclaim", name, "-n", ns, "--subresource=status", "--type=merge",
            "-p", json.dumps({"status": {"devices": [{
                "driver": "resource-driver.example.com", "pool": "nic-worker-a",
                "device": "eth0", "shareID": "8e7acdf9-0290-4ecd-a801-a654b021d2b7"}]}}))
    devices = kubectl("get", "resourceclaim", name, "-n", ns, "-o",
                      "jsonpath={.status.devices[*].device}")
    assert devices == "eth0"


def _rpsr(kubectl: Kubectl) -> str:
    request = _docs("seeds/09-check-gpus-rpsr.yaml")[0]
    name = _unique("check-gpus")
    request["metadata"] = {"name": name}
    _apply(kubectl, request)
    return name


def test_resource_pool_status_request_spec_edit_is_refused(kubectl: Kubectl) -> None:
    name = _rpsr(kubectl)
    assert kubectl("get", "resourcepoolstatusrequest", name, "-o",
                   "jsonpath={.spec.limit}") == "100"
    res = kubectl.run("patch", "resourcepoolstatusrequest", name, "--type=merge", "-p",
                      '{"spec":{"limit":5}}', check=False)
    assert res.returncode != 0
    assert "spec: Forbidden: field is immutable" in res.stderr


def test_resource_pool_status_request_is_frozen_after_status(kubectl: Kubectl) -> None:
    name = _rpsr(kubectl)
    # the pool-status controller answers at once; from then on nothing changes
    kubectl("wait", "--for=condition=Complete", f"resourcepoolstatusrequest/{name}",
            "--timeout=30s")
    res = kubectl.run("label", "--overwrite", "resourcepoolstatusrequest", name, "team=infra",
                      check=False)
    assert res.returncode != 0
    assert "metadata.labels: Forbidden: may not be changed once status is set" in res.stderr
    res = kubectl.run("patch", "resourcepoolstatusrequest", name, "--subresource=status",
                      "--type=merge", "-p", '{"status":{"poolCount":3}}', check=False)
    assert res.returncode != 0
    assert "status: Forbidden: field is immutable" in res.stderr
    kubectl("delete", "resourcepoolstatusrequest", name)  # delete and recreate to re-run


def test_admin_access_follows_the_namespace_label(kubectl: Kubectl, ns: str) -> None:
    template = _docs("seeds/04-admin-access-claim-template.yaml")[1]
    template["metadata"]["namespace"] = ns
    code, out = _apply(kubectl, template, check=False)
    assert code != 0
    assert f"spec.devices.requests[0].adminAccess: Forbidden: {ADMIN}" in out

    kubectl("label", "namespace", ns, "resource.kubernetes.io/admin-access=True")
    code, out = _apply(kubectl, template, check=False)
    assert code != 0, "the label value is case-sensitive"
    assert ADMIN in out

    kubectl("label", "--overwrite", "namespace", ns, "resource.kubernetes.io/admin-access=true")
    _apply(kubectl, template)
    got = kubectl("get", "resourceclaimtemplate", "large-black-cat-claim-template", "-n", ns,
                  "-o", "jsonpath={.spec.spec.devices.requests[0].exactly.adminAccess}")
    assert got == "true"

    kubectl("label", "namespace", ns, "resource.kubernetes.io/admin-access-")
    claim = _docs("seeds/08-macvlan-claim.yaml")[0]
    claim["metadata"] = {"name": "admin-claim", "namespace": ns}
    claim["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    code, out = _apply(kubectl, claim, check=False)
    assert code != 0 and ADMIN in out
