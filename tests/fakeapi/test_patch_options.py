"""PatchOptions as upstream's ValidatePatchOptions checks them (issue 18): an apply patch
needs a fieldManager, `force` is only for apply patches; each refusal is one 422 about
`PatchOptions.meta.k8s.io ""`, and nothing is written."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestClient

from fakeapi.cluster import Cluster
from tests.support.httpapi import CM, MERGE, call, check_status, cm, committed, ok

APPLY = "application/apply-patch+yaml"
JSON_PATCH = "application/json-patch+json"
BODY = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}}
PREFIX = 'PatchOptions.meta.k8s.io "" is invalid: '

CASES = [
    (APPLY, {}, BODY, "fieldManager: Required value: is required for apply patch",
     [("fieldManager", "FieldValueRequired")]),
    (MERGE, {"force": "true"}, {"data": {"k": "w"}},
     "force: Forbidden: may not be specified for non-apply patch",
     [("force", "FieldValueForbidden")]),
    (JSON_PATCH, {"force": "false"}, [{"op": "add", "path": "/data/k", "value": "w"}],
     "force: Forbidden: may not be specified for non-apply patch",
     [("force", "FieldValueForbidden")]),
]


@pytest.mark.parametrize(("ctype", "params", "body", "message", "causes"), CASES,
                         ids=["apply-without-manager", "force-on-merge", "force-false-on-json"])
async def test_bad_patch_options_are_refused(served: tuple[Cluster, TestClient], ctype: str,
                                             params: dict[str, str], body: object,
                                             message: str,
                                             causes: list[tuple[str | None, str]]) -> None:
    cluster, api = served
    await ok(api, "POST", CM, cm("a"))
    before = committed(cluster)
    reply = await call(api, "PATCH", f"{CM}/a", body, ctype=ctype, params=params)
    check_status(reply, 422, "Invalid", PREFIX + message, causes=causes,
                 details={"group": "meta.k8s.io", "kind": "PatchOptions", "name": None})
    assert committed(cluster) == before


async def test_apply_with_a_manager_and_force_is_fine(served: tuple[Cluster, TestClient]) -> None:
    _, api = served
    got = await ok(api, "PATCH", f"{CM}/a", BODY, ctype=APPLY,
                   params={"fieldManager": "me", "force": "true"})
    assert got["data"] == {"k": "v"}
