"""A top-level field of the wrong JSON type gets what kube-apiserver answers, never a 500
(issue 18, hostile input): `null` is the field's zero value (Go decodes it so), then the
kind's own validation speaks; a `spec`, `status` or `metadata` that isn't an object is a 400
in Go's decoder's words."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestClient

from fakeapi.cluster import Cluster
from tests.support.httpapi import call, committed

NSP = "/api/v1/namespaces"
CASES = [
    (f"{NSP}/default/pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"},
                             "spec": None}, 422, "spec.containers: Required value"),
    (f"{NSP}/default/services", {"apiVersion": "v1", "kind": "Service",
                                 "metadata": {"name": "a"}, "spec": None}, 422,
     "spec.ports: Required value"),
    ("/apis/batch/v1/namespaces/default/jobs", {"apiVersion": "batch/v1", "kind": "Job",
                                               "metadata": {"name": "a"}, "spec": None}, 422,
     "Required value"),
    (NSP, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}, "spec": None},
     201, ""),
    ("/apis/authentication.k8s.io/v1/tokenreviews",
     {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": "x"}, 400,
     'TokenReview in version "v1" cannot be handled as a TokenReview: json: cannot unmarshal '
     "string into Go struct field TokenReview.spec of type v1.TokenReviewSpec"),
    ("/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews",
     {"apiVersion": "authorization.k8s.io/v1", "kind": "LocalSubjectAccessReview",
      "metadata": 7, "spec": {}}, 400,
     "json: cannot unmarshal number into Go struct field LocalSubjectAccessReview.metadata of "
     "type v1.ObjectMeta"),
    (f"{NSP}/default/configmaps", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": [],
                                  "data": {}}, 400,
     "json: cannot unmarshal array into Go struct field ConfigMap.metadata of type "
     "v1.ObjectMeta"),
]


@pytest.mark.parametrize(("path", "body", "code", "message"), CASES,
                         ids=["pod-null-spec", "service-null-spec", "job-null-spec",
                              "namespace-null-spec", "tokenreview-string-spec",
                              "lsar-number-metadata", "configmap-array-metadata"])
async def test_a_wrong_typed_top_level_field_is_answered_as_upstream(
        served: tuple[Cluster, TestClient], path: str, body: dict[str, object], code: int,
        message: str) -> None:
    cluster, api = served
    before = committed(cluster)
    reply = await call(api, "POST", path, body)
    assert reply.status == code, reply.object
    if code >= 400:
        assert message in reply.object["message"], reply.object["message"]
        assert committed(cluster) == before
