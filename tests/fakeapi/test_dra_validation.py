"""DRA validation, defaulting and immutability over HTTP (fakeapi.registry.validation,
registry.resource).

The table `tests/data/invalid/*.yaml` holds one invalid object per file, each a seed example
with one thing broken. Its comment header names the upstream rule and the expectation:

    # rule: <upstream rule>            # from: <base object, relative to tests/data>
    # op: create|update|status         # setup: <file created first> (repeatable)
    # setup-status: <file whose status is PUT after the base is created>
    # repeat: <JSON path> <n>          # grow the list/map/string at path to n items
    # expect: 422 Invalid   # field: <cause field>   # reason: <cause reason>
    # message: <text the cause message contains>

Every case goes through `create_app(Cluster(...))` and checks code, reason, field path and
that nothing was stored. The other tests walk the status rules with PUT/PATCH on `/status`.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp.test_utils import TestClient

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.http.app import create_app
from fakeapi.machinery.features import parse_feature_gates
from tests.support.seeds import SEED_GATES

Obj = dict[str, Any]
DATA = Path(__file__).resolve().parent.parent / "data"
INVALID = sorted((DATA / "invalid").glob("*.yaml"))
SEEDS = sorted((DATA / "seeds").glob("*.yaml"))
GATES = parse_feature_gates(SEED_GATES)
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
CLAIMS = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
ADMIN = ("admin access to devices requires the `resource.kubernetes.io/admin-access: true` "
         "label on the containing namespace")
UID = "5f0ad3d4-8d1b-4b0e-9bb5-9a2d7b1f0c11"


# ----- the table ---------------------------------------------------------------------------


@dataclasses.dataclass
class Case:
    """One row of the invalid-objects table."""

    name: str
    header: dict[str, list[str]]
    obj: Obj

    def one(self, key: str, default: str = "") -> str:
        """A header value that appears at most once."""
        values = self.header.get(key, [])
        assert len(values) <= 1, f"{self.name}: {key} given {len(values)} times"
        return values[0] if values else default


def load_case(path: Path) -> Case:
    """Parse the comment header and the object, and apply `repeat`."""
    header: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        k, _, v = line[1:].strip().partition(": ")
        header.setdefault(k, []).append(v.strip())
    obj = yaml.safe_load(path.read_text())
    case = Case(path.stem, header, obj)
    if case.one("repeat"):
        spec, _, count = case.one("repeat").rpartition(" ")
        grow(obj, json.loads(spec), int(count))
    return case


def grow(obj: Any, path: list[Any], n: int) -> None:
    """Grow the list, map or string at `path` to `n`, copying its last entry with new names."""
    parent = obj
    for step in path[:-1]:
        parent = parent[step]
    target = parent[path[-1]]
    if isinstance(target, str):
        parent[path[-1]] = target + " " * (n - len(target))
    elif isinstance(target, list):
        last = target[-1]
        for i in range(len(target), n):
            item = copy.deepcopy(last)
            if isinstance(item, str):
                item = f"{item}-{i}"
            elif isinstance(item, dict):
                for key in ("name", "counterSet"):
                    if key in item:
                        item[key] = f"{item[key]}-{i}"
            target.append(item)
    else:
        last_key = list(target)[-1]
        for i in range(len(target), n):
            target[f"{last_key}-{i}"] = copy.deepcopy(target[last_key])


def documents(rel: str) -> list[Obj]:
    """The objects of a file under tests/data."""
    return [d for d in yaml.safe_load_all((DATA / rel).read_text()) if d]


def test_every_case_names_a_rule_and_an_expectation() -> None:
    assert len(INVALID) >= 80
    for path in INVALID:
        case = load_case(path)
        for key in ("rule", "from", "broken", "expect", "field", "reason", "message"):
            assert case.one(key), f"{path.name}: missing `# {key}:`"
        assert case.one("op", "create") in ("create", "update", "status"), path.name
        assert case.one("expect") == "422 Invalid", path.name


# ----- HTTP helpers ------------------------------------------------------------------------


class Api:
    """A test client plus the cluster, with object-level helpers."""

    def __init__(self, cluster: Cluster, client: TestClient) -> None:
        self.cluster = cluster
        self.client = client

    def url(self, obj: Obj, *, named: bool = False, sub: str = "") -> str:
        """The collection URL of an object (or the object's own URL, or a subresource)."""
        kind = self.cluster.kinds.by_gvk(obj["apiVersion"], obj["kind"])
        assert kind is not None, obj["kind"]
        prefix = f"/apis/{kind.api_version}" if kind.group else f"/api/{kind.api_version}"
        if kind.namespaced:
            prefix += f"/namespaces/{obj['metadata'].get('namespace') or 'default'}"
        url = f"{prefix}/{kind.plural}"
        if named or sub:
            url += f"/{obj['metadata']['name']}"
        return url + (f"/{sub}" if sub else "")

    async def send(self, method: str, url: str, body: Any = None,
                   ctype: str = "application/json") -> tuple[int, Obj]:
        """One request; the status code and the JSON body."""
        data = None if body is None else json.dumps(body)
        resp = await self.client.request(method, url, data=data,
                                         headers={"Content-Type": ctype} if data else {})
        return resp.status, await resp.json()

    async def create(self, obj: Obj) -> Obj:
        """POST, which must succeed."""
        code, body = await self.send("POST", self.url(obj), obj)
        assert code == 201, body
        return body

    async def get(self, obj: Obj) -> Obj | None:
        """The stored object, or None."""
        code, body = await self.send("GET", self.url(obj, named=True))
        return body if code == 200 else None

    async def put_status(self, obj: Obj) -> tuple[int, Obj]:
        """PUT on `/status`."""
        return await self.send("PUT", self.url(obj, sub="status"), obj)


@pytest.fixture
async def api(aiohttp_client: Any) -> Api:
    """A fresh cluster with the gates the seed examples need."""
    cluster = Cluster(ClusterConfig(feature_gates=GATES))
    return Api(cluster, await aiohttp_client(create_app(cluster)))


def causes(body: Obj) -> list[Obj]:
    """The causes of a Status."""
    return (body.get("details") or {}).get("causes") or []


def cause_at(body: Obj, field: str) -> Obj:
    """The one cause at `field` (fails listing all causes otherwise)."""
    found = [c for c in causes(body) if c.get("field") == field]
    assert found, f"no cause at {field}: {json.dumps(causes(body), indent=1)[:3000]}"
    return found[0]


# ----- the table, through HTTP ----------------------------------------------------------------


@pytest.mark.parametrize("path", INVALID, ids=[p.stem for p in INVALID])
async def test_invalid_object_is_rejected(api: Api, path: Path) -> None:
    case = load_case(path)
    for rel in case.header.get("setup", []):
        for doc in documents(rel):
            await api.create(doc)
    op = case.one("op", "create")
    if op != "create":
        for doc in documents(case.one("from")):
            await api.create(doc)
    if case.one("setup-status"):
        status_obj = documents(case.one("setup-status"))[-1]
        code, body = await api.put_status(status_obj)
        assert code == 200, body
    revision = api.cluster.store.revision
    before = await api.get(case.obj)

    if op == "create":
        code, body = await api.send("POST", api.url(case.obj), case.obj)
    elif op == "update":
        code, body = await api.send("PUT", api.url(case.obj, named=True), case.obj)
    else:
        code, body = await api.put_status(case.obj)

    assert code == 422, body
    assert body["reason"] == "Invalid", body
    assert body["details"]["kind"] == case.obj["kind"]
    found = cause_at(body, case.one("field"))
    assert found["reason"] == case.one("reason"), found
    assert case.one("message") in found["message"], found
    assert f"{case.one('field')}: {found['message']}" in body["message"]
    assert api.cluster.store.revision == revision, "a rejected write committed an event"
    assert await api.get(case.obj) == before


# ----- valid objects and defaults ------------------------------------------------------------


@pytest.mark.parametrize("path", SEEDS, ids=[p.stem for p in SEEDS])
async def test_seed_examples_are_accepted(api: Api, path: Path) -> None:
    for doc in documents(f"seeds/{path.name}"):
        created = await api.create(doc)
        assert created["metadata"]["name"] == doc["metadata"]["name"]


async def test_defaults_of_claims_templates_and_requests(api: Api) -> None:
    claim = documents("seeds/08-macvlan-claim.yaml")[0]
    claim["spec"]["devices"]["requests"][0]["exactly"]["tolerations"] = [
        {"key": "example.com/maintenance"}]
    exactly = (await api.create(claim))["spec"]["devices"]["requests"][0]["exactly"]
    assert exactly["allocationMode"] == "ExactCount"
    assert exactly["count"] == 1
    assert exactly["tolerations"] == [{"key": "example.com/maintenance", "operator": "Equal"}]

    template = documents("seeds/01-prioritized-list-claim-template.yaml")[0]
    subs = (await api.create(template))["spec"]["spec"]["devices"]["requests"][0][
        "firstAvailable"]
    assert [(s["allocationMode"], s["count"]) for s in subs] == [("ExactCount", 1),
                                                                ("ExactCount", 2)]

    all_mode = documents("seeds/04-admin-access-claim-template.yaml")
    await api.create(all_mode[0])
    exactly = (await api.create(all_mode[1]))["spec"]["spec"]["devices"]["requests"][0][
        "exactly"]
    assert exactly["allocationMode"] == "All" and "count" not in exactly

    rpsr = await api.create(documents("seeds/09-check-gpus-rpsr.yaml")[0])
    assert rpsr["spec"]["limit"] == 100


async def test_reapplying_an_unchanged_claim_is_not_a_spec_change(api: Api) -> None:
    claim = documents("seeds/08-macvlan-claim.yaml")[0]
    await api.create(claim)
    code, body = await api.send("PUT", api.url(claim, named=True), claim)
    assert code == 200, body  # defaults make the omitted count equal to the stored one


async def test_admin_access_follows_the_namespace_label(api: Api) -> None:
    ns, template = documents("seeds/04-admin-access-claim-template.yaml")
    ns["metadata"]["labels"] = {"resource.kubernetes.io/admin-access": "false"}
    await api.create(ns)
    code, body = await api.send("POST", api.url(template), template)
    assert code == 422
    assert cause_at(body, "spec.devices.requests[0].adminAccess")["message"] == (
        f"Forbidden: {ADMIN}")
    code, body = await api.send("PATCH", api.url(ns, named=True),
                                {"metadata": {"labels": {
                                    "resource.kubernetes.io/admin-access": "true"}}}, MERGE)
    assert code == 200, body
    await api.create(template)


# ----- status rules through /status ------------------------------------------------------------


async def _allocated_claim(api: Api) -> Obj:
    allocated = documents("invalid/_fixtures/macvlan-allocated.yaml")[0]
    await api.create(allocated)
    code, body = await api.put_status(allocated)
    assert code == 200, body
    return body


async def test_status_write_sets_allocation_and_device_status(api: Api) -> None:
    claim = await _allocated_claim(api)
    assert claim["status"]["allocation"]["devices"]["results"][0]["device"] == "eth0"
    assert claim["status"]["devices"][0]["networkData"]["interfaceName"] == "net1"


async def test_status_devices_patch_for_unallocated_device_is_refused(api: Api) -> None:
    claim = documents("seeds/08-macvlan-claim.yaml")[0]
    await api.create(claim)
    patch = {"status": {"devices": [{"driver": "resource-driver.example.com",
                                     "pool": "nic-worker-a", "device": "eth0"}]}}
    code, body = await api.send("PATCH", api.url(claim, sub="status"), patch, MERGE)
    assert code == 422
    assert cause_at(body, "status.devices[0]")["message"] == (
        "Invalid value: resource-driver.example.com/nic-worker-a/eth0: must be an allocated "
        "device in the claim")
    assert (await api.get(claim) or {})["status"] == {}  # nothing of the patch kept


async def test_deallocation_drops_device_status_automatically(api: Api) -> None:
    claim = await _allocated_claim(api)
    code, body = await api.send("PATCH", api.url(claim, sub="status"),
                                {"status": {"allocation": None}}, MERGE)
    assert code == 200, body
    assert "allocation" not in body["status"]
    assert "devices" not in body["status"], "device status of a deallocated device was kept"


async def test_allocation_can_be_cleared_but_not_changed(api: Api) -> None:
    claim = await _allocated_claim(api)
    patch = [{"op": "replace", "path": "/status/allocation/devices/results/0/pool",
              "value": "nic-worker-b"}]
    code, body = await api.send("PATCH", api.url(claim, sub="status"), patch, JSON_PATCH)
    assert code == 422
    assert cause_at(body, "status.allocation")["message"].endswith("field is immutable")
    code, body = await api.send("PATCH", api.url(claim, sub="status"),
                                {"status": {"allocation": None, "devices": None}}, MERGE)
    assert code == 200 and body.get("status", {}) == {}, body


async def test_reserved_for_needs_allocation_and_freezes_on_deletion(api: Api) -> None:
    claim = await _allocated_claim(api)
    url = api.url(claim, sub="status")
    first = {"resource": "pods", "name": "p1", "uid": UID}
    code, body = await api.send("PATCH", url, {"status": {"reservedFor": [first]}}, MERGE)
    assert code == 200, body
    # the scheduler's finalizer keeps the claim while it is in use
    code, body = await api.send("PATCH", api.url(claim, named=True), {"metadata": {
        "finalizers": ["resource.kubernetes.io/delete-protection"]}}, MERGE)
    assert code == 200, body
    code, body = await api.send("DELETE", api.url(claim, named=True))
    assert code == 200 and body["metadata"]["deletionTimestamp"], body
    second = {"resource": "pods", "name": "p2", "uid": UID.replace("5f0", "6f0")}
    code, body = await api.send("PATCH", url, {"status": {"reservedFor": [first, second]}},
                                MERGE)
    assert code == 422
    assert cause_at(body, "status.reservedFor")["message"] == (
        "Forbidden: new entries may not be added while `deallocationRequested` or "
        "`deletionTimestamp` are set")
    code, body = await api.send("PATCH", url, {"status": {"reservedFor": None}}, MERGE)
    assert code == 200, body  # removing entries is always allowed


async def test_no_finalizer_may_be_added_while_deleting(api: Api) -> None:
    claim = documents("seeds/08-macvlan-claim.yaml")[0]
    claim["metadata"]["finalizers"] = ["example.com/keep"]
    await api.create(claim)
    code, body = await api.send("DELETE", api.url(claim, named=True))
    assert code == 200, body
    code, body = await api.send("PATCH", api.url(claim, named=True), {"metadata": {
        "finalizers": ["example.com/keep", "resource.kubernetes.io/delete-protection"]}}, MERGE)
    assert code == 422
    assert cause_at(body, "metadata.finalizers")["message"] == (
        "Forbidden: no new finalizers can be added if the object is being deleted, found new "
        'finalizers []string{"resource.kubernetes.io/delete-protection"}')


async def test_spec_and_status_writes_stay_apart(api: Api) -> None:
    claim = await _allocated_claim(api)
    changed_status = copy.deepcopy(claim)
    changed_status["status"] = {}
    code, body = await api.send("PUT", api.url(claim, named=True), changed_status)
    assert code == 200, body
    assert body["status"] == claim["status"], "a spec write changed status"
    changed_spec = copy.deepcopy(body)
    changed_spec["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = "other"
    code, body = await api.put_status(changed_spec)
    assert code == 200, body
    assert body["spec"] == claim["spec"], "a status write changed the spec"


async def test_admin_access_results_need_the_label_too(api: Api) -> None:
    ns, template = documents("seeds/04-admin-access-claim-template.yaml")
    await api.create(ns)
    claim = documents("invalid/_fixtures/macvlan-allocated.yaml")[0]
    claim["metadata"]["namespace"] = "admin-ns"
    del claim["status"]["devices"]
    claim["status"]["allocation"]["devices"]["results"][0]["adminAccess"] = True
    await api.create(claim)
    code, body = await api.put_status(claim)
    assert code == 200, body


async def test_resource_pool_status_request_is_frozen_once_complete(api: Api) -> None:
    done = documents("invalid/_fixtures/rpsr-completed.yaml")[0]
    await api.create(documents("seeds/09-check-gpus-rpsr.yaml")[0])
    code, body = await api.send("PATCH", api.url(done, named=True),
                                {"metadata": {"labels": {"team": "gpu"}}}, MERGE)
    assert code == 200, body  # metadata may change while the request is pending
    code, body = await api.put_status(done)
    assert code == 200, body
    code, body = await api.send("PATCH", api.url(done, named=True),
                                {"metadata": {"labels": {"team": "infra"}}}, MERGE)
    assert code == 422
    assert cause_at(body, "metadata.labels")["reason"] == "FieldValueForbidden"
    code, body = await api.put_status(done)
    assert code == 200, body  # writing the same status again changes nothing
    code, body = await api.send("DELETE", api.url(done, named=True))
    assert code == 200, body


async def test_pod_group_min_count_stays_mutable(api: Api) -> None:
    await api.create(documents("invalid/_fixtures/ns-some-ns.yaml")[0])
    group = documents("seeds/02-podgroup-and-pod.yaml")[1]
    group["spec"]["schedulingPolicy"] = {"gang": {"minCount": 2}}
    await api.create(group)
    code, body = await api.send("PATCH", api.url(group, named=True), {"spec": {
        "schedulingPolicy": {"gang": {"minCount": 3}}}}, MERGE)
    assert code == 200, body
    status = {"resourceClaimStatuses": [{"name": "pg-claim-template",
                                         "resourceClaimName": "training-group-pg-x2v5b"}]}
    code, body = await api.send("PATCH", api.url(group, sub="status"), {"status": status},
                                MERGE)
    assert code == 200, body


async def test_device_class_keeps_stored_selectors_valid(api: Api) -> None:
    cls = documents("seeds/07-extended-resource-device-class.yaml")[0]
    await api.create(cls)
    code, body = await api.send("PATCH", api.url(cls, named=True),
                                {"metadata": {"labels": {"tier": "gold"}}}, MERGE)
    assert code == 200, body
    code, body = await api.send("PATCH", api.url(cls, named=True), {"spec": {"selectors": [
        {"cel": {"expression": "device.driver"}}]}}, MERGE)
    assert code == 422
    assert "must evaluate to bool" in cause_at(body, "spec.selectors[0].cel.expression")[
        "message"]


async def test_list_attribute_functions_follow_the_gate(aiohttp_client: Any) -> None:
    cluster = Cluster(ClusterConfig(feature_gates={**GATES, "DRAListTypeAttributes": False}))
    api = Api(cluster, await aiohttp_client(create_app(cluster)))
    claim = documents("seeds/08-macvlan-claim.yaml")[0]
    claim["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [{"cel": {
        "expression": 'device.attributes["dra.example.com"].models.includes("model-a")'}}]
    code, body = await api.send("POST", CLAIMS, claim)
    assert code == 422
    assert "undeclared reference to 'includes'" in cause_at(
        body, "spec.devices.requests[0].exactly.selectors[0].cel.expression")["message"]
