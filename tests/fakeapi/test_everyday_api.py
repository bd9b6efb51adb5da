"""The everyday endpoints over HTTP, with their upstream Status errors: /version/,
namespaces/NS/bindings, the scale subresource, evictions, tokens and TokenReview, a
strategic merge patch on a custom resource, and the structs Go always sends."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.http.app import create_app

Obj = dict[str, Any]
PODS = "/api/v1/namespaces/default/pods"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


@pytest.fixture
async def api(aiohttp_client: Any) -> Any:
    return await aiohttp_client(create_app(Cluster(ClusterConfig())))


async def _send(api: Any, method: str, path: str, body: Any = None,
                content_type: str = "application/json") -> tuple[int, Obj]:
    import orjson

    resp = await api.request(method, path, data=None if body is None else orjson.dumps(body),
                             headers={"Content-Type": content_type})
    return resp.status, await resp.json()


async def _pod(api: Any, name: str, **spec: Any) -> None:
    code, body = await _send(api, "POST", PODS, {"metadata": {"name": name}, "spec": {
        "containers": [{"name": "c", "image": "x"}], **spec}})
    assert code == 201, body


async def test_version_with_and_without_a_slash(api: Any) -> None:
    for path in ("/version", "/version/"):
        code, body = await _send(api, "GET", path)
        assert code == 200 and body["major"] == "1" and body["minor"] == "37"


async def test_a_binding_posted_to_the_namespace_binds_the_pod(api: Any) -> None:
    await _pod(api, "p")
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}
    code, body = await _send(api, "POST", "/api/v1/namespaces/default/bindings", binding)
    assert (code, body["status"]) == (201, "Success")
    _, pod = await _send(api, "GET", PODS + "/p")
    assert pod["spec"]["nodeName"] == "n1"
    code, body = await _send(api, "POST", "/api/v1/namespaces/default/bindings", binding)
    assert (code, body["reason"]) == (409, "Conflict")
    assert body["message"].endswith('pod p is already assigned to node "n1"')
    code, body = await _send(api, "POST", "/api/v1/namespaces/default/bindings",
                             {**binding, "metadata": {"name": "ghost"}})
    assert (code, body["reason"], body["message"]) == (404, "NotFound", 'pods "ghost" not found')


async def test_scale_reads_and_writes_replicas(api: Any) -> None:
    code, body = await _send(api, "POST", DEPLOYMENTS, {
        "metadata": {"name": "web"}, "spec": {"replicas": 2, "selector": {"matchLabels": {
            "app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                "containers": [{"name": "c", "image": "x"}]}}}})
    assert code == 201, body
    code, scale = await _send(api, "GET", DEPLOYMENTS + "/web/scale")
    assert (code, scale["kind"], scale["apiVersion"]) == (200, "Scale", "autoscaling/v1")
    assert (scale["spec"], scale["status"]) == ({"replicas": 2},
                                                {"replicas": 0, "selector": "app=web"})
    code, scale = await _send(api, "PATCH", DEPLOYMENTS + "/web/scale",
                              {"spec": {"replicas": 5}}, "application/merge-patch+json")
    assert (code, scale["spec"]["replicas"]) == (200, 5)
    code, body = await _send(api, "PUT", DEPLOYMENTS + "/web/scale",
                             {**scale, "spec": {"replicas": -1}})
    assert (code, body["reason"]) == (422, "Invalid")
    assert body["details"]["causes"] == [{"field": "spec.replicas", "reason":
                                          "FieldValueInvalid", "message": "Invalid value: -1: "
                                          "must be greater than or equal to 0"}]
    code, body = await _send(api, "PUT", DEPLOYMENTS + "/web/scale", {
        **scale, "metadata": {**scale["metadata"], "resourceVersion": "1"}})
    assert (code, body["reason"]) == (409, "Conflict")
    _, deployment = await _send(api, "GET", DEPLOYMENTS + "/web")
    assert (deployment["spec"]["replicas"], deployment["metadata"]["generation"]) == (5, 2)


async def test_evicting_a_missing_pod_is_not_found(api: Any) -> None:
    code, body = await _send(api, "POST", PODS + "/ghost/eviction", {
        "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "ghost"}})
    assert (code, body["reason"]) == (404, "NotFound")


async def test_a_token_authenticates_through_token_review(api: Any) -> None:
    code, _ = await _send(api, "POST", "/api/v1/namespaces/default/serviceaccounts",
                          {"metadata": {"name": "bot"}})
    assert code == 201
    code, answer = await _send(api, "POST",
                               "/api/v1/namespaces/default/serviceaccounts/bot/token",
                               {"apiVersion": "authentication.k8s.io/v1",
                                "kind": "TokenRequest", "spec": {"expirationSeconds": 600}})
    assert code == 201 and answer["kind"] == "TokenRequest"
    token = answer["status"]["token"]
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
              "spec": {"token": token}}
    code, result = await _send(api, "POST", "/apis/authentication.k8s.io/v1/tokenreviews",
                               review)
    assert code == 201 and result["status"]["authenticated"] is True
    assert result["status"]["user"]["username"] == "system:serviceaccount:default:bot"
    resp = await api.get(PODS, headers={"Authorization": f"Bearer {token}"})
    assert resp.status == 403  # authenticated as the account, which may not list pods
    assert 'User "system:serviceaccount:default:bot" cannot list' in (await resp.json())[
        "message"]
    code, result = await _send(api, "POST", "/apis/authentication.k8s.io/v1/tokenreviews",
                               {**review, "spec": {"token": token[:-4] + "AAAA"}})
    assert result["status"]["authenticated"] is False
    code, body = await _send(api, "POST",
                             "/api/v1/namespaces/default/serviceaccounts/bot/token",
                             {"spec": {"expirationSeconds": 60}})
    assert (code, body["details"]["causes"][0]["field"]) == (422, "spec.expirationSeconds")
    resp = await api.get(PODS, headers={"Authorization": "Bearer not-a-token"})
    assert resp.status == 401


async def test_custom_resources_take_no_strategic_merge_patch(api: Any) -> None:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "kind": "Widget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                        "openAPIV3Schema": {"type": "object",
                                            "x-kubernetes-preserve-unknown-fields": True}}}]}}
    code, _ = await _send(api, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                          crd)
    assert code == 201
    path = "/apis/example.com/v1/namespaces/default/widgets"
    code, _ = await _send(api, "POST", path, {"apiVersion": "example.com/v1", "kind": "Widget",
                                              "metadata": {"name": "w"}, "spec": {"a": 1}})
    assert code == 201
    code, body = await _send(api, "PATCH", path + "/w", {"spec": {"a": 2}},
                             "application/strategic-merge-patch+json")
    assert (code, body["reason"]) == (415, "UnsupportedMediaType")
    code, body = await _send(api, "PATCH", path + "/w", {"spec": {"a": 2}},
                             "application/merge-patch+json")
    assert (code, body["spec"]) == (200, {"a": 2})


async def test_structs_are_always_sent(api: Any) -> None:
    code, node = await _send(api, "POST", "/api/v1/nodes", {"metadata": {"name": "bare"}})
    assert (code, node["spec"], node["status"]) == (201, {}, {})
    code, rs = await _send(api, "POST", "/apis/apps/v1/namespaces/default/replicasets", {
        "metadata": {"name": "rs"}, "spec": {"selector": {"matchLabels": {"a": "b"}},
                                             "template": {"metadata": {"labels": {"a": "b"}},
                                                          "spec": {"containers": [
                                                              {"name": "c", "image": "x"}]}}}})
    assert (code, rs["status"]) == (201, {"replicas": 0})
