"""What upstream's admission plugins add to a new pod, through a real store: the
ServiceAccount plugin's API access volume, mounted into every container that has nothing at
its path (unless the pod or its ServiceAccount opts out)."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.machinery.clock import VirtualClock
from fakeapi.registry.core import TOKEN_MOUNT_PATH

Obj = dict[str, Any]


def pod(**spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"initContainers": [{"name": "init", "image": "busybox"}],
                     "containers": [{"name": "a", "image": "busybox"},
                                    {"name": "b", "image": "busybox"}], **spec}}


OWN_MOUNT = {"name": "mine", "mountPath": TOKEN_MOUNT_PATH}


@pytest.mark.parametrize(("spec", "account", "mounted"), [
    ({}, {}, {"init", "a", "b"}),
    ({"automountServiceAccountToken": False}, {}, set()),
    ({}, {"automountServiceAccountToken": False}, set()),
    ({"automountServiceAccountToken": True}, {"automountServiceAccountToken": False},
     {"init", "a", "b"}),
    ({"containers": [{"name": "a", "image": "busybox", "volumeMounts": [OWN_MOUNT]},
                     {"name": "b", "image": "busybox"}]}, {}, {"init", "b"}),
], ids=["default", "pod opts out", "account opts out", "pod overrides account",
        "a container mounts its own"])
async def test_the_service_account_admission_mounts_the_api_access_volume(
        spec: Obj, account: Obj, mounted: set[str]) -> None:
    cluster = Cluster(ClusterConfig(seed=1), clock=VirtualClock())
    admin = cluster.client("admin")
    await admin.create("serviceaccounts", {"metadata": {"name": "default"}, **account},
                       "default")
    created = await admin.create("pods", pod(**spec), "default")
    volumes = [v for v in created["spec"].get("volumes") or []
               if v["name"].startswith("kube-api-access-")]
    have = {c["name"] for key in ("initContainers", "containers")
            for c in created["spec"][key]
            for m in c.get("volumeMounts") or [] if m["name"].startswith("kube-api-access-")}
    assert have == mounted
    if not mounted:
        assert volumes == []
        return
    [volume] = volumes
    assert len(volume["name"]) == len("kube-api-access-") + 5
    assert [next(iter(s)) for s in volume["projected"]["sources"]] == [
        "serviceAccountToken", "configMap", "downwardAPI"]
    assert volume["projected"]["sources"][0]["serviceAccountToken"] == {
        "expirationSeconds": 3607, "path": "token"}
    assert all(m == {"name": volume["name"], "readOnly": True, "mountPath": TOKEN_MOUNT_PATH}
               for key in ("initContainers", "containers") for c in created["spec"][key]
               for m in c.get("volumeMounts") or [] if m["name"] == volume["name"])
