"""`--runtime-config` (kube-apiserver's syntax and refusals) and the off-by-default versions it
serves: resource.k8s.io/v1beta2 and scheduling.k8s.io/v1alpha3, stored once at v1 and v1beta1
and converted both ways, over HTTP (reads, lists, watches, writes and discovery)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fakeapi.cli.main import build_parser
from fakeapi.machinery.features import parse_feature_gates
from fakeapi.machinery.runtimeconfig import RuntimeConfigError, parse_runtime_config
from fakeapi.registry.kinds import served_kinds
from fakeapi.schema import structural
from fakeapi.schema.schemas import get_schemas
from tests.support.httpapi import Serve, call, next_event, ok, open_watch
from tests.support.paths import ROOT
from tests.support.seeds import SEED_GATES

Obj = dict[str, Any]
DRA = "/apis/resource.k8s.io"
TAINT_DEMO = (ROOT / "tests" / "data" / "dra-example-driver" / "examples"
              / "device-taints-tolerations" / "device-taint-pod-noschedule"
              / "3-device-taint-rule.yaml")
BETA2 = {"resource.k8s.io/v1beta2": "true"}
GATES = {"GenericWorkload": True}


def _served(config: str, gates: dict[str, bool] | None = None) -> list[str]:
    table = served_kinds(gates or {}, parse_runtime_config(config))
    return sorted(f"{k.api_version}/{k.plural}" for k in table.kinds
                  if k.group in ("resource.k8s.io", "scheduling.k8s.io"))


V1 = ["resource.k8s.io/v1/deviceclasses", "resource.k8s.io/v1/devicetaintrules",
      "resource.k8s.io/v1/resourceclaims", "resource.k8s.io/v1/resourceclaimtemplates",
      "resource.k8s.io/v1/resourceslices", "scheduling.k8s.io/v1/priorityclasses"]
V1BETA2 = [v.replace("/v1/", "/v1beta2/") for v in V1 if v.startswith("resource")]
V1BETA1 = [v.replace("/v1beta2/", "/v1beta1/") for v in V1BETA2 if "taint" not in v]
SERVED = [
    # --runtime-config, what resource.k8s.io and scheduling.k8s.io serve
    ("", V1),
    ("resource.k8s.io/v1beta2=true", sorted(V1 + V1BETA2)),
    ("resource.k8s.io/v1beta2", sorted(V1 + V1BETA2)),  # a bare key is true
    (" resource.k8s.io/v1beta2 = t ,", sorted(V1 + V1BETA2)),  # blanks trimmed, ParseBool
    ("api/beta=true", sorted(V1 + V1BETA2 + V1BETA1)),
    ("api/beta=true,resource.k8s.io/v1beta2=false", sorted(V1 + V1BETA1)),  # g/v wins
    ("api/all=true,api/beta=false", V1),  # api/all first, then api/beta
    ("resource.k8s.io/v1beta2=true,resource.k8s.io/v1beta2/resourceslices=false",
     sorted(V1 + [v for v in V1BETA2 if not v.endswith("resourceslices")])),
    ("resource.k8s.io/v1beta1=true", sorted(V1 + V1BETA1)),  # no DeviceTaintRule at v1beta1
    ("resource.k8s.io/v1alpha3=true", V1),  # registered, not served here: nothing to switch
    # kind-cluster-config.yaml's resource.k8s.io entry and the device-taint READMEs' flag
    ("resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true", sorted(V1 + V1BETA1 + V1BETA2)),
    ("storagemigration.k8s.io/v1beta1=false", V1),  # a group this server doesn't know is skipped
    ("resource.k8s.io/v1=false,resource.k8s.io/v1beta2=true", V1BETA2 + [V1[-1]]),
    ("api/ga=false", []),
]


@pytest.mark.parametrize(("config", "served"), SERVED, ids=[s[0] or "none" for s in SERVED])
def test_runtime_config_switches_group_versions(config: str, served: list[str]) -> None:
    assert _served(config) == sorted(served)


def test_alpha_versions_need_their_gate_and_the_flag() -> None:
    alpha = ["scheduling.k8s.io/v1alpha3/podgroups", "scheduling.k8s.io/v1alpha3/workloads"]
    assert [v for v in _served("", GATES) if "v1alpha3" in v] == []
    assert [v for v in _served("api/alpha=true", GATES) if "v1alpha3" in v] == alpha
    assert [v for v in _served("scheduling.k8s.io/v1alpha3=true") if "v1alpha3" in v] == []


REFUSED = [
    # --runtime-config, upstream's message
    ("scheduling.k8s.io/v1alpha2=true",
     "group version scheduling.k8s.io/v1alpha2 that has not been registered"),
    ("resource.k8s.io/v1alpha2=true",
     "group version resource.k8s.io/v1alpha2 that has not been registered"),
    ("api/all=yes", "invalid value api/all=yes"),
    ("api/alpha=", "invalid value api/alpha="),
    ("resource.k8s.io/v1beta2=maybe", 'invalid value of resource.k8s.io/v1beta2: maybe, err: '
     'strconv.ParseBool: parsing "maybe": invalid syntax'),
    ("resource.k8s.io/v1beta2/DeviceClasses=true",
     "invalid key resource.k8s.io/v1beta2/DeviceClasses: group/version/resource and resource "
     'is always lowercase plural, not "DeviceClasses"'),
]


@pytest.mark.parametrize(("config", "message"), REFUSED, ids=[r[0] for r in REFUSED])
def test_runtime_config_refusals_are_upstreams(config: str, message: str) -> None:
    with pytest.raises(RuntimeConfigError) as e:
        served_kinds({}, parse_runtime_config(config))
    assert str(e.value) == message


REPEATED = [
    # the --runtime-config flags in order, what the server is given
    (["resource.k8s.io/v1beta2=true"], {"resource.k8s.io/v1beta2": "true"}),
    (["resource.k8s.io/v1beta2=true", "api/alpha=true"],
     {"resource.k8s.io/v1beta2": "true", "api/alpha": "true"}),
    (["resource.k8s.io/v1beta2=true", "resource.k8s.io/v1beta2=false"],
     {"resource.k8s.io/v1beta2": "false"}),  # a later flag's key wins
    (["api/beta=true,resource.k8s.io/v1beta2=false", "resource.k8s.io/v1beta2"],
     {"api/beta": "true", "resource.k8s.io/v1beta2": ""}),
]


@pytest.mark.parametrize(("flags", "merged"), REPEATED, ids=[" ".join(r[0]) for r in REPEATED])
def test_repeated_runtime_config_flags_merge_as_kube_apiservers(
        flags: list[str], merged: dict[str, str]) -> None:
    argv = ["serve", *(arg for flag in flags for arg in ("--runtime-config", flag))]
    assert build_parser().parse_args(argv).runtime_config == merged


WRITES = [
    # (version of the POST, version of the PUT): each entry's apiVersion is its request's
    ("v1beta2", "v1beta2"),
    ("v1", "v1beta2"),
    ("v1beta2", "v1"),
]


@pytest.mark.parametrize(("post", "put"), WRITES, ids=["-".join(w) for w in WRITES])
async def test_managed_fields_record_the_version_of_each_write(serve: Serve, post: str,
                                                               put: str) -> None:
    _, api = await serve(runtime_config=BETA2)
    rule = yaml.safe_load(TAINT_DEMO.read_text())
    await ok(api, "POST", f"{DRA}/{post}/devicetaintrules?fieldManager=creator",
             {**rule, "apiVersion": f"resource.k8s.io/{post}"})
    current = await ok(api, "GET", f"{DRA}/{put}/devicetaintrules/example")
    current["spec"]["taint"]["value"] = "false"
    updated = await ok(api, "PUT", f"{DRA}/{put}/devicetaintrules/example?fieldManager=editor",
                       current)
    entries = {e["manager"]: e for e in updated["metadata"]["managedFields"]}
    assert {m: (e["operation"], e["apiVersion"]) for m, e in entries.items()} == {
        "creator": ("Update", f"resource.k8s.io/{post}"),
        "editor": ("Update", f"resource.k8s.io/{put}")}
    assert "f:value" in entries["editor"]["fieldsV1"]["f:spec"]["f:taint"]
    assert "f:value" not in entries["creator"]["fieldsV1"]["f:spec"]["f:taint"]


async def test_a_v1beta2_taint_rule_is_stored_at_v1_and_read_at_both(serve: Serve) -> None:
    cluster, api = await serve(runtime_config=BETA2)
    rule = yaml.safe_load(TAINT_DEMO.read_text())
    created = await ok(api, "POST", f"{DRA}/v1beta2/devicetaintrules", rule)
    assert created["apiVersion"] == "resource.k8s.io/v1beta2"
    stored = cluster.store.get("devicetaintrules.resource.k8s.io", "", "example")
    assert stored is not None and stored.object["apiVersion"] == "resource.k8s.io/v1"
    at_v1 = await ok(api, "GET", f"{DRA}/v1/devicetaintrules/example")
    at_beta2 = await ok(api, "GET", f"{DRA}/v1beta2/devicetaintrules/example")
    assert at_v1 == {**at_beta2, "apiVersion": "resource.k8s.io/v1"}
    assert at_beta2["spec"]["deviceSelector"] == rule["spec"]["deviceSelector"]
    assert {k: v for k, v in at_beta2["spec"]["taint"].items() if k != "timeAdded"} == rule[
        "spec"]["taint"]  # timeAdded is defaulted
    listed = await ok(api, "GET", f"{DRA}/v1beta2/devicetaintrules")
    assert listed["apiVersion"] == "resource.k8s.io/v1beta2"
    assert [i["apiVersion"] for i in listed["items"]] == ["resource.k8s.io/v1beta2"]
    patched = await ok(api, "PATCH", f"{DRA}/v1beta2/devicetaintrules/example",
                       {"spec": {"taint": {"value": "false"}}},
                       ctype="application/merge-patch+json")
    assert patched["apiVersion"] == "resource.k8s.io/v1beta2"
    assert patched["spec"]["taint"]["value"] == "false"
    gone = await ok(api, "DELETE", f"{DRA}/v1beta2/devicetaintrules/example")
    assert gone["kind"] == "Status"  # DeviceTaintRule storage doesn't return the object
    claim = await ok(api, "POST", f"{DRA}/v1/namespaces/default/resourceclaims", {
        "metadata": {"name": "c"}, "spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}})
    gone = await ok(api, "DELETE", f"{DRA}/v1beta2/namespaces/default/resourceclaims/c")
    assert gone["apiVersion"] == "resource.k8s.io/v1beta2"
    assert gone["metadata"]["uid"] == claim["metadata"]["uid"]


async def test_a_watch_at_v1beta2_sees_claims_written_at_v1(serve: Serve) -> None:
    _, api = await serve(runtime_config=BETA2)
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "c"}, "spec": {"devices": {"requests": [
                 {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}
    path = "namespaces/default/resourceclaims"
    watch = await open_watch(api, f"{DRA}/v1beta2/{path}", resourceVersion="0")
    written = await ok(api, "POST", f"{DRA}/v1/{path}", claim)
    event = await next_event(watch)
    watch.close()
    assert event["type"] == "ADDED"
    assert event["object"] == {**written, "apiVersion": "resource.k8s.io/v1beta2"}


SEEDS = sorted((ROOT / "tests" / "data" / "seeds").glob("*.yaml"))
DEMO_FILES = sorted((ROOT / "tests" / "data" / "dra-example-driver" / "examples").rglob(
    "*.yaml"))
OLDER = {"v1beta2": BETA2, "v1beta1": {"resource.k8s.io/v1beta1": "true"}}
"""Each older resource.k8s.io version, and the runtime config that serves it."""


def _dra_objects(path: Path) -> list[Obj]:
    return [d for d in yaml.safe_load_all(path.read_text())
            if d and d.get("apiVersion") == "resource.k8s.io/v1"]


@pytest.mark.parametrize("version", OLDER)
@pytest.mark.parametrize("path", [p for p in SEEDS + DEMO_FILES if _dra_objects(p)],
                         ids=lambda p: p.stem)
async def test_seed_and_demo_objects_round_trip_through_older_versions(
        serve: Serve, path: Path, version: str) -> None:
    """Written at v1, read and written back (strictly: every field is one of the version's)
    at the older version, read at v1: the same object."""
    _, api = await serve(runtime_config=OLDER[version],
                         feature_gates=parse_feature_gates(SEED_GATES))
    for ns in yaml.safe_load_all(path.read_text()):
        if ns and ns.get("kind") == "Namespace":
            await ok(api, "POST", "/api/v1/namespaces", ns)
    for obj in _dra_objects(path):
        kind = served_kinds().by_gvk(obj["apiVersion"], obj["kind"])
        assert kind is not None
        plural = kind.plural
        if version == "v1beta1" and obj["kind"] == "DeviceTaintRule":
            continue  # v1beta1 has none
        scope = (f"namespaces/{obj['metadata'].get('namespace') or 'default'}/"
                 if kind.namespaced else "")
        first = await ok(api, "POST", f"{DRA}/v1/{scope}{plural}", obj)
        name = first["metadata"]["name"]
        older = await ok(api, "GET", f"{DRA}/{version}/{scope}{plural}/{name}")
        assert older["apiVersion"] == f"resource.k8s.io/{version}"
        if version == "v1beta2":  # the same fields
            assert older == {**first, "apiVersion": "resource.k8s.io/v1beta2"}
        schema = get_schemas().for_gvk("resource.k8s.io", version, obj["kind"])
        assert schema is not None
        structural.check(older, schema, mode="Strict")  # a 400 for a field it lacks
        older["metadata"]["labels"] = {"round": "trip"}
        put = await ok(api, "PUT",
                       f"{DRA}/{version}/{scope}{plural}/{name}?fieldValidation=Strict", older)
        assert {k: v for k, v in put.items() if k != "metadata"} == {
            k: v for k, v in older.items() if k != "metadata"}
        back = await ok(api, "GET", f"{DRA}/v1/{scope}{plural}/{name}")
        strip = ("resourceVersion", "labels", "managedFields")
        assert ({k: v for k, v in back["metadata"].items() if k not in strip}
                == {k: v for k, v in first["metadata"].items() if k not in strip})
        assert {k: v for k, v in back.items() if k != "metadata"} == {
            k: v for k, v in first.items() if k != "metadata"}


GPU = "gpu.example.com"
V1BETA1_CASES = [
    # (kind, spec written at v1beta1, read at v1, read back at v1beta1); defaulted
    ("ResourceClaim",
     {"devices": {"requests": [{"name": "gpu", "deviceClassName": GPU}]}},
     {"devices": {"requests": [{"name": "gpu", "exactly": {
         "deviceClassName": GPU, "allocationMode": "ExactCount", "count": 1}}]}},
     {"devices": {"requests": [{"name": "gpu", "deviceClassName": GPU,
                                "allocationMode": "ExactCount", "count": 1}]}}),
    ("ResourceClaim",  # adminAccess false is set (a pointer); the main fields move together
     {"devices": {"requests": [{"name": "all", "deviceClassName": GPU, "allocationMode": "All",
                                "adminAccess": False,
                                "selectors": [{"cel": {"expression": "true"}}]}]}},
     {"devices": {"requests": [{"name": "all", "exactly": {
         "deviceClassName": GPU, "allocationMode": "All", "adminAccess": False,
         "selectors": [{"cel": {"expression": "true"}}]}}]}},
     {"devices": {"requests": [{"name": "all", "deviceClassName": GPU, "allocationMode": "All",
                                "adminAccess": False,
                                "selectors": [{"cel": {"expression": "true"}}]}]}}),
    ("ResourceClaim",  # subrequests only: no exactly
     {"devices": {"requests": [{"name": "gpu", "firstAvailable": [
         {"name": "big", "deviceClassName": GPU}]}]}},
     {"devices": {"requests": [{"name": "gpu", "firstAvailable": [
         {"name": "big", "deviceClassName": GPU, "allocationMode": "ExactCount",
          "count": 1}]}]}},
     {"devices": {"requests": [{"name": "gpu", "firstAvailable": [
         {"name": "big", "deviceClassName": GPU, "allocationMode": "ExactCount",
          "count": 1}]}]}}),
    ("ResourceSlice",  # basic's fields at the device's top; a value's zero is unset
     {"driver": GPU, "nodeName": "worker-0", "allNodes": False,
      "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
      "devices": [{"name": "gpu-0", "basic": {
          "attributes": {"model": {"string": "LATEST-GPU-MODEL"}},
          "capacity": {"memory": {"value": "80Gi"}}}}, {"name": "gpu-1"}]},
     {"driver": GPU, "nodeName": "worker-0",
      "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
      "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "LATEST-GPU-MODEL"}},
                   "capacity": {"memory": {"value": "80Gi"}}}, {"name": "gpu-1"}]},
     {"driver": GPU, "nodeName": "worker-0",
      "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
      "devices": [{"name": "gpu-0", "basic": {
          "attributes": {"model": {"string": "LATEST-GPU-MODEL"}},
          "capacity": {"memory": {"value": "80Gi"}}}}, {"name": "gpu-1", "basic": {}}]}),
]


@pytest.mark.parametrize(("kind", "written", "v1", "read"), V1BETA1_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(V1BETA1_CASES)])
async def test_v1beta1_objects_convert_by_upstreams_rules(serve: Serve, kind: str,
                                                          written: Obj, v1: Obj,
                                                          read: Obj) -> None:
    _, api = await serve(runtime_config=OLDER["v1beta1"])
    plural = {"ResourceClaim": "namespaces/default/resourceclaims",
              "ResourceSlice": "resourceslices"}[kind]
    created = await ok(api, "POST", f"{DRA}/v1beta1/{plural}?fieldValidation=Strict", {
        "apiVersion": "resource.k8s.io/v1beta1", "kind": kind, "metadata": {"name": "x"},
        "spec": written})
    assert created["spec"] == read
    assert (await ok(api, "GET", f"{DRA}/v1/{plural}/x"))["spec"] == v1
    assert (await ok(api, "GET", f"{DRA}/v1beta1/{plural}/x"))["spec"] == read
    listed = await ok(api, "GET", f"{DRA}/v1beta1/{plural}")
    assert [i["spec"] for i in listed["items"] if i["metadata"]["name"] == "x"] == [read]


async def test_discovery_lists_v1beta2_only_when_enabled(serve: Serve) -> None:
    _, off = await serve()
    assert (await call(off, "GET", f"{DRA}/v1beta2")).status == 404
    _, on = await serve(runtime_config=BETA2)
    group = await ok(on, "GET", DRA)
    versions = [v["version"] for v in group["versions"]]
    assert "v1beta2" in versions and group["preferredVersion"]["version"] == "v1"
    resources = await ok(on, "GET", f"{DRA}/v1beta2")
    assert "devicetaintrules" in [r["name"] for r in resources["resources"]]
    v1 = await ok(on, "GET", f"{DRA}/v1")
    hashes = {r["name"]: r.get("storageVersionHash") for r in v1["resources"]}
    assert {r["name"]: r.get("storageVersionHash") for r in resources["resources"]
            if r["name"] in hashes} == {n: h for n, h in hashes.items()
                                        if n in {r["name"] for r in resources["resources"]}}
