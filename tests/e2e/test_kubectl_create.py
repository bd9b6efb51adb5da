"""`kubectl create <kind>` sends protobuf bodies; the objects must land with the fields set."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.kubectl import Kubectl

NS = "pbuf-objs"
BINARY = b"\x00\xff\xfe binary \x80"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


@pytest.fixture(scope="module")
def objs_ns(kubectl: Kubectl) -> str:
    """One namespace for the namespaced objects, itself made by `kubectl create namespace`."""
    assert kubectl("create", "namespace", NS).strip() == f"namespace/{NS} created"
    return NS


def _get(kubectl: Kubectl, *args: str) -> dict[str, Any]:
    return json.loads(kubectl("get", *args, "-o", "json"))


def _at(obj: Any, path: str) -> Any:
    """`a.b.0.c` → obj["a"]["b"][0]["c"]; a missing step gives None."""
    for step in path.split("."):
        if isinstance(obj, list):
            obj = obj[int(step)] if int(step) < len(obj) else None
        elif isinstance(obj, dict):
            obj = obj.get(step)
        else:
            return None
    return obj


RBAC = "rbac.authorization.k8s.io"
# (id, create args, get args, {path: expected value})
CASES: list[tuple[str, list[str], list[str], dict[str, Any]]] = [
    ("namespace", ["namespace", "pbuf-ns"], ["namespace", "pbuf-ns"],
     {"kind": "Namespace", "metadata.name": "pbuf-ns"}),
    ("configmap",
     ["configmap", "pbuf-cm", "-n", NS, "--from-literal=a=1", "--from-literal=b=two words",
      "--from-file=bin={binary}", "--save-config"],
     ["configmap", "pbuf-cm", "-n", NS],
     {"data.a": "1", "data.b": "two words",
      "binaryData.bin": base64.b64encode(BINARY).decode(), "metadata.namespace": NS}),
    ("serviceaccount", ["serviceaccount", "pbuf-sa", "-n", NS],
     ["serviceaccount", "pbuf-sa", "-n", NS],
     {"kind": "ServiceAccount", "metadata.name": "pbuf-sa", "metadata.namespace": NS}),
    ("priorityclass",
     ["priorityclass", "pbuf-pc", "--value=4242", "--description=for e2e",
      "--preemption-policy=Never"],
     ["priorityclass", "pbuf-pc"],
     {"value": 4242, "description": "for e2e", "preemptionPolicy": "Never",
      "globalDefault": None}),
    ("priorityclass-zero", ["priorityclass", "pbuf-pc-zero", "--value=0"],
     ["priorityclass", "pbuf-pc-zero"], {"value": 0}),
    ("role",
     ["role", "pbuf-role", "-n", NS, "--verb=get,list", "--resource=pods,configmaps",
      "--resource-name=a"],
     ["role", "pbuf-role", "-n", NS],
     {"rules.0.verbs": ["get", "list"], "rules.0.apiGroups": [""],
      "rules.0.resources": ["pods", "configmaps"], "rules.0.resourceNames": ["a"]}),
    ("clusterrole", ["clusterrole", "pbuf-cr", "--verb=get", "--non-resource-url=/healthz"],
     ["clusterrole", "pbuf-cr"],
     {"rules.0.verbs": ["get"], "rules.0.nonResourceURLs": ["/healthz"]}),
    ("clusterrole-aggregation", ["clusterrole", "pbuf-agg", "--aggregation-rule=team=gpu"],
     ["clusterrole", "pbuf-agg"],
     {"aggregationRule.clusterRoleSelectors.0.matchLabels": {"team": "gpu"}}),
    ("rolebinding",
     ["rolebinding", "pbuf-rb", "-n", NS, "--role=pbuf-role", "--user=alice", "--group=devs",
      f"--serviceaccount={NS}:pbuf-sa"],
     ["rolebinding", "pbuf-rb", "-n", NS],
     {"roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "pbuf-role"},
      "subjects": [{"kind": "User", "apiGroup": RBAC, "name": "alice"},
                   {"kind": "Group", "apiGroup": RBAC, "name": "devs"},
                   {"kind": "ServiceAccount", "name": "pbuf-sa", "namespace": NS}]}),
    ("clusterrolebinding",
     ["clusterrolebinding", "pbuf-crb", "--clusterrole=pbuf-cr", "--user=bob"],
     ["clusterrolebinding", "pbuf-crb"],
     {"roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "pbuf-cr"},
      "subjects": [{"kind": "User", "apiGroup": RBAC, "name": "bob"}]}),
]


@pytest.mark.parametrize(("create", "get", "expected"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_create_then_get(kubectl: Kubectl, objs_ns: str, tmp_path: Path, create: list[str],
                         get: list[str], expected: dict[str, Any]) -> None:
    binary = tmp_path / "bin.dat"
    binary.write_bytes(BINARY)
    args = [a.replace("{binary}", str(binary)) for a in create]
    out = kubectl("create", *args)
    assert out.strip().endswith(" created"), out
    obj = _get(kubectl, *get)
    assert obj["metadata"]["uid"] and obj["metadata"]["creationTimestamp"]
    for path, value in expected.items():
        assert _at(obj, path) == value, (path, obj)


def test_save_config_annotation_round_trips(kubectl: Kubectl, objs_ns: str) -> None:
    kubectl("create", "configmap", "pbuf-saved", "-n", objs_ns, "--from-literal=k=v",
            "--save-config")
    obj = _get(kubectl, "configmap", "pbuf-saved", "-n", objs_ns)
    applied = json.loads(obj["metadata"]["annotations"][LAST_APPLIED])
    assert (applied["kind"], applied["data"]) == ("ConfigMap", {"k": "v"})


def test_dry_run_server_returns_object_without_persisting(kubectl: Kubectl) -> None:
    obj = json.loads(kubectl("create", "namespace", "pbuf-dry", "--dry-run=server",
                             "-o", "json"))
    assert (obj["kind"], obj["metadata"]["name"]) == ("Namespace", "pbuf-dry")
    res = kubectl.run("get", "namespace", "pbuf-dry", check=False)
    assert res.returncode != 0 and "NotFound" in res.stderr


def test_create_twice_is_already_exists(kubectl: Kubectl, objs_ns: str) -> None:
    kubectl("create", "serviceaccount", "pbuf-twice", "-n", objs_ns)
    res = kubectl.run("create", "serviceaccount", "pbuf-twice", "-n", objs_ns, check=False)
    assert res.returncode != 0
    assert 'serviceaccounts "pbuf-twice" already exists' in res.stderr


def test_invalid_object_is_rejected_by_validation(kubectl: Kubectl) -> None:
    res = kubectl.run("create", "namespace", "Not_A_DNS_Label", check=False)
    assert res.returncode != 0
    assert "Invalid" in res.stderr or "invalid" in res.stderr
