"""Other real clients against a real `fakeapi serve` process: kr8s, lightkube (with the 1.37
models), the official client's typed, dynamic and utility APIs, and a tiny kopf operator.

Per client: version and discovery, CRUD on the DRA kinds, watch (with bookmarks where the
client asks for them), patches, status, list pagination.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.kubectl import Kubectl
from tests.support.processes import ServerProcess
from tests.support.waiting import poll

CLAIM_SPEC = {"devices": {"requests": [
    {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}


def _unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


@pytest.fixture
def ns(fresh_namespace: str) -> str:
    return fresh_namespace


def _claim(name: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "labels": {"suite": "compat"}}, "spec": CLAIM_SPEC}


# ----- the official client: version, typed status, dynamic and utility APIs -------------------


def test_official_client_version_dynamic_and_utils(server: ServerProcess, ns: str,
                                                   tmp_path: Path) -> None:
    from kubernetes import client, config, dynamic, utils

    api = config.new_client_from_config(config_file=str(server.kubeconfig))
    try:
        assert client.VersionApi(api).get_code().git_version.startswith("v1.37.0")
        resource = client.ResourceV1Api(api)
        claim = resource.create_namespaced_resource_claim(
            ns, client.ResourceV1ResourceClaim.model_validate(_claim("typed")))
        assert claim.status is not None and claim.status.allocation is None
        dyn = dynamic.DynamicClient(api)
        claims = dyn.resources.get(api_version="resource.k8s.io/v1", kind="ResourceClaim")
        claims.create(body=_claim("dynamic"), namespace=ns)
        names = sorted(c.metadata.name for c in claims.get(namespace=ns).items)
        assert names == ["dynamic", "typed"]
        patched = claims.patch(name="dynamic", namespace=ns, body={
            "metadata": {"labels": {"patched": "yes"}}},
            content_type="application/merge-patch+json")
        assert patched.metadata.labels["patched"] == "yes"
        manifest = tmp_path / "deploy.yaml"
        manifest.write_text(yaml.safe_dump({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "util"},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "util"}},
                     "template": {"metadata": {"labels": {"app": "util"}},
                                  "spec": {"containers": [{"name": "c", "image": "x"}]}}}}))
        utils.create_from_yaml(api, str(manifest), namespace=ns)
        deployment = client.AppsV1Api(api).read_namespaced_deployment("util", ns)
        assert deployment.spec and deployment.spec.strategy
        assert deployment.spec.strategy.type == "RollingUpdate"
        # a fresh object's status has its required fields (Go's zero values), so the typed
        # models load it
        hpa = client.AutoscalingV2Api(api).create_namespaced_horizontal_pod_autoscaler(
            ns, client.V2HorizontalPodAutoscaler.model_validate({
                "metadata": {"name": "util"}, "spec": {"maxReplicas": 2, "scaleTargetRef": {
                    "apiVersion": "apps/v1", "kind": "Deployment", "name": "util"}}}))
        assert hpa.status and hpa.status.desired_replicas == 0
        assert hpa.spec and hpa.spec.min_replicas == 1
        node = client.CoreV1Api(api).create_node(
            client.V1Node.model_validate({"metadata": {"name": _unique("bare")}}))
        assert node.spec is not None and node.status is not None
    finally:
        api.close()


# ----- lightkube ---------------------------------------------------------------------------


def test_lightkube(server: ServerProcess, ns: str) -> None:
    from lightkube import Client, KubeConfig
    from lightkube.generic_resource import load_in_cluster_generic_resources
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.core_v1 import Node
    from lightkube.resources.resource_v1 import ResourceClaim
    from lightkube.types import PatchType

    def claim_of(doc: dict[str, Any]) -> ResourceClaim:
        """`doc` as lightkube's ResourceClaim (its from_dict is typed as its base class's)."""
        claim = ResourceClaim.from_dict(doc)
        assert isinstance(claim, ResourceClaim), claim
        return claim

    def name_of(obj: Node | ResourceClaim) -> str:
        """The name of an object the server returned (it always has one)."""
        assert obj.metadata and obj.metadata.name, obj
        return obj.metadata.name

    lk = Client(config=KubeConfig.from_file(str(server.kubeconfig)), field_manager="compat")
    try:
        node = lk.create(Node(metadata=ObjectMeta(name=_unique("lk-node"))))
        assert node.spec is not None and node.status is not None  # {} on the wire
        lk.delete(Node, name_of(node))
        for i in range(5):
            lk.create(claim_of(_claim(f"c{i}")), namespace=ns)
        fresh = lk.get(ResourceClaim, "c0", namespace=ns)
        assert fresh.status is not None and fresh.status.allocation is None
        paged = list(lk.list(ResourceClaim, namespace=ns, chunk_size=2))
        assert sorted(name_of(c) for c in paged) == [f"c{i}" for i in range(5)]
        merged = lk.patch(ResourceClaim, "c1", {"metadata": {"labels": {"a": "b"}}},
                          namespace=ns, patch_type=PatchType.MERGE)
        assert merged.metadata and merged.metadata.labels
        assert merged.metadata.labels["a"] == "b"
        applied = lk.apply(claim_of({**_claim("c2"), "metadata": {
            "name": "c2", "namespace": ns, "labels": {"applied": "yes"}}}), field_manager="lk")
        assert applied.metadata and applied.metadata.labels
        assert applied.metadata.labels["applied"] == "yes"
        status = lk.patch(ResourceClaim.Status, "c3", {"status": {"allocation": {"devices": {
            "results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "p",
                         "device": "d0"}]}}}}, namespace=ns, patch_type=PatchType.MERGE)
        assert status.status and status.status.allocation
        assert status.status.allocation.devices and status.status.allocation.devices.results
        assert status.status.allocation.devices.results[0].device == "d0"
        seen = []
        assert fresh.metadata is not None
        version = fresh.metadata.resourceVersion
        lk.delete(ResourceClaim, "c4", namespace=ns)
        for event, obj in lk.watch(ResourceClaim, namespace=ns, resource_version=version,
                                   server_timeout=3):
            seen.append((event, name_of(obj)))
            if (event, name_of(obj)) == ("DELETED", "c4"):
                break
        assert ("DELETED", "c4") in seen
        load_in_cluster_generic_resources(lk)  # reads apiextensions.k8s.io/v1 CRDs
    finally:
        lk.close()


# ----- kr8s --------------------------------------------------------------------------------


async def test_kr8s(server: ServerProcess, ns: str) -> None:
    import kr8s.asyncio
    from kr8s.asyncio.objects import APIObject, new_class

    api = await kr8s.asyncio.api(kubeconfig=str(server.kubeconfig))
    version = await api.version()
    assert version["gitVersion"].startswith("v1.37.0")
    resources = await api.api_resources()
    assert any(r["name"] == "resourceclaims" for r in resources)
    claim_cls = new_class(kind="ResourceClaim", version="resource.k8s.io/v1", namespaced=True)
    claim = await claim_cls({**_claim("k1"), "metadata": {"name": "k1", "namespace": ns}},
                            api=api)
    await claim.create()
    assert claim.raw["status"] == {}
    await claim.label({"touched": "yes"})
    await claim.refresh()
    assert claim.labels["touched"] == "yes"
    await claim.patch({"metadata": {"annotations": {"a": "b"}}}, type="merge")
    found = []
    async for c in api.get("resourceclaims.resource.k8s.io", namespace=ns):
        assert isinstance(c, APIObject), c  # dicts only with raw=True
        found.append(c.name)
    assert found == ["k1"]

    watching = asyncio.Event()

    async def first_delete() -> str:
        # closed on return, so the stream's response is closed on this loop
        async with contextlib.aclosing(api.watch("resourceclaims.resource.k8s.io",
                                                 namespace=ns)) as events:
            async for event, obj in events:
                if event == "ADDED":  # a watch from now starts with the state: it is open
                    watching.set()
                if event == "DELETED":
                    return str(obj.name)
        return ""

    watcher = asyncio.create_task(first_delete())
    await asyncio.wait_for(watching.wait(), 20)
    await claim.delete()
    assert await asyncio.wait_for(watcher, 20) == "k1"


# ----- kopf: a tiny operator that reconciles ResourceClaims --------------------------------

OPERATOR = textwrap.dedent('''
    import kopf

    @kopf.on.startup()
    def configure(settings, **_):
        settings.watching.server_timeout = 10
        settings.persistence.finalizer = "compat.example.com/kopf"

    @kopf.on.create("resource.k8s.io", "v1", "resourceclaims")
    def claimed(name, namespace, patch, **_):
        patch.metadata.annotations["compat.example.com/seen-by"] = "kopf"
        return {"handled": name}
''')


def test_a_kopf_operator_reconciles_claims(server: ServerProcess, kubectl: Kubectl, ns: str,
                                           tmp_path: Path) -> None:
    script = tmp_path / "operator.py"
    script.write_text(OPERATOR)
    env = {**os.environ, "KUBECONFIG": str(server.kubeconfig)}
    proc = subprocess.Popen([sys.executable, "-m", "kopf", "run", "--standalone",
                             "--namespace", ns, str(script)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        kubectl("create", "-n", ns, "-f", "-", input=yaml.safe_dump(_claim("by-kopf")))

        def seen_by() -> str | None:
            """The claim's seen-by annotation ('' while there is none; None once the
            operator has exited, which ends the wait)."""
            if proc.poll() is not None:
                return None
            return kubectl("get", "resourceclaim", "by-kopf", "-n", ns, "-o",
                           "jsonpath={.metadata.annotations.compat\\.example\\.com/seen-by}")

        seen = poll(seen_by, until=lambda value: value != "", timeout=60, interval=0.2,
                    what="kopf's annotation on the claim")
        assert proc.stdout is not None
        assert seen == "kopf", proc.stdout.read() if proc.poll() is not None else seen
    finally:
        proc.terminate()
        try:
            out, _ = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
    assert "Traceback" not in out, out
