"""Typed models: exact wire round trips, the generator's stability, and parity with the
official `kubernetes` client 37.x models and the 1.37 schemas."""

from __future__ import annotations

import importlib.util
import inspect
import json
import re
import shutil
import subprocess
import sys
import types
import typing
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeGuard

import kubernetes.client.models as client_models
import pydantic
import pytest
import yaml

import tests.support.models as m
from fakeapi.registry.kinds import KINDS as SERVED_KINDS
from fakeapi.schema.schemas import Schemas, get_schemas
from fakeapi.schema.structural import check
from tests.support.models import resource_v1 as rv1
from tests.support.models import resource_v1alpha3 as rv1a3
from tests.support.models import scheduling_v1beta1 as sv1b1

ROOT = Path(__file__).resolve().parents[2]
SEEDS = sorted((ROOT / "tests" / "data" / "seeds").glob("*.yaml"))
RICH = ROOT / "tests" / "data" / "models" / "roundtrip.yaml"
MODELS_DIR = ROOT / "tests" / "support" / "models"


def _load_generator() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("gen_models", ROOT / "scripts" / "gen_models.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_models", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


gen_models = _load_generator()


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _label(doc: dict[str, Any]) -> str:
    return f"{doc['kind']}/{doc.get('metadata', {}).get('name', '-')}"


SEED_DOCS = [
    pytest.param(doc, id=f"{path.stem}:{_label(doc)}")
    for path in SEEDS
    for doc in _docs(path)
    if m.model_for(doc["apiVersion"], doc["kind"])
]
RICH_DOCS = [pytest.param(doc, id=_label(doc)) for doc in _docs(RICH)]


def _rich(kind: str, index: int = 0) -> dict[str, Any]:
    return [d for d in _docs(RICH) if d["kind"] == kind][index]


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("doc", SEED_DOCS + RICH_DOCS)
def test_wire_round_trip_is_exact(doc: dict[str, Any]) -> None:
    model = m.parse(doc)
    assert type(model) is m.model_for(doc["apiVersion"], doc["kind"])
    assert model.model_dump(by_alias=True, exclude_none=True) == doc
    assert m.to_wire(model) == doc
    assert json.loads(model.model_dump_json(exclude_none=True)) == doc
    assert m.unknown_fields(model) == []


@pytest.mark.parametrize("doc", RICH_DOCS)
def test_rich_examples_are_valid_wire_objects(doc: dict[str, Any]) -> None:
    """The hand-made objects decode strictly against the 1.37 schema (no typos, no extras)."""
    group, _, version = doc["apiVersion"].rpartition("/")
    schema = get_schemas().for_gvk(group, version, doc["kind"])
    assert schema is not None
    check(doc, schema, mode="Strict")


def test_seeds_cover_every_root_kind_but_lists() -> None:
    kinds = {(d["apiVersion"], d["kind"]) for p in SEEDS for d in _docs(p)}
    kinds |= {(d["apiVersion"], d["kind"]) for d in _docs(RICH)}
    missing = {k for k in m.KINDS if k not in kinds and not k[1].endswith("List")}
    assert missing == set()


def _get(obj: Any, path: str) -> Any:
    """Follow a Python attribute path like `spec.devices[0].attributes["x"].bool_`."""
    for attr, index, key in re.findall(r'\.?(\w+)|\[(\d+)\]|\["([^"]+)"\]', path):
        obj = getattr(obj, attr) if attr else obj[int(index)] if index else obj[key]
    return obj


TYPED_ACCESS = [
    ("ResourceClaim", "status.allocation.devices.results[0].share_id",
     "0b5c6d7e-0000-4000-8000-000000000003"),
    ("ResourceClaim", 'status.allocation.devices.results[0].consumed_capacity["memory"]', "8Gi"),
    ("ResourceClaim", "status.allocation.devices.results[0].binding_conditions",
     ["gpu.example.com/attached"]),
    ("ResourceClaim", "status.allocation.devices.results[0].tolerations[0].toleration_seconds",
     300),
    ("ResourceClaim", "status.allocation.allocation_timestamp", "2025-06-01T10:00:01Z"),
    ("ResourceClaim",
     "status.allocation.node_selector.node_selector_terms[0].match_fields[0].values",
     ["worker-1"]),
    ("ResourceClaim", "status.allocation.devices.config[1].opaque.parameters",
     {"apiVersion": "gpu.example.com/v1", "kind": "GpuConfig"}),
    ("ResourceClaim", "status.devices[1].network_data.interface_name", "net1"),
    ("ResourceClaim", "status.devices[1].network_data.ips[1]", "2001:db8::5/64"),
    ("ResourceClaim", "status.devices[0].conditions[0].last_transition_time",
     "2025-06-01T10:00:05Z"),
    ("ResourceClaim", 'status.devices[0].data["uuid"]', "GPU-0000"),
    ("ResourceClaim", "status.reserved_for[1].api_group", "scheduling.k8s.io"),
    ("ResourceClaim", "spec.devices.requests[0].exactly.device_class_name", "gpu.example.com"),
    ("ResourceClaim", "spec.devices.requests[0].exactly.derived_attributes[0].name",
     "derived/numa"),
    ("ResourceClaim", 'spec.devices.requests[0].exactly.capacity.requests["memory"]', "8Gi"),
    ("ResourceClaim", "spec.devices.requests[1].first_available[1].allocation_mode", "All"),
    ("ResourceClaim", "spec.devices.constraints[0].match_attribute", "derived/numa"),
    ("ResourceClaim", "spec.devices.constraints[1].distinct_attribute", "gpu.example.com/uuid"),
    ("ResourceClaim", 'spec.devices.config[0].opaque.parameters["sharing"]["replicas"]', 4),
    ("ResourceClaim", "metadata.owner_references[0].block_owner_deletion", True),
    ("ResourceClaim", 'metadata.managed_fields[1].fields_v1["f:status"]', {"f:allocation": {}}),
    ("ResourceSlice", 'spec.devices[0].attributes["gpu.example.com/healthy"].bool_', True),
    ("ResourceSlice", 'spec.devices[0].attributes["gpu.example.com/index"].int_', 0),
    ("ResourceSlice", 'spec.devices[0].attributes["gpu.example.com/numaNodes"].ints', [0, 1]),
    ("ResourceSlice", 'spec.devices[0].attributes["gpu.example.com/models"].strings',
     ["model-a", "model-b"]),
    ("ResourceSlice", 'spec.devices[0].attributes["gpu.example.com/compatible"].versions',
     ["1.0.0", "2.1.0"]),
    ("ResourceSlice", 'spec.devices[0].capacity["memory"].request_policy.valid_range.step', "1Gi"),
    ("ResourceSlice", 'spec.devices[0].capacity["slots"].request_policy.valid_values',
     ["1", "2", "4"]),
    ("ResourceSlice", "spec.devices[0].consumes_counters[0].counter_set", "gpu-0-counters"),
    ("ResourceSlice", "spec.devices[0].taints[0].time_added", "2025-06-01T09:00:00Z"),
    ("ResourceSlice", "spec.devices[0].binds_to_node", True),
    ("ResourceSlice", 'spec.devices[0].node_allocatable_resources["memory"].overhead.per_pod',
     "256Mi"),
    ("ResourceSlice", "spec.partition_type_attribute", "gpu.example.com/profile"),
    ("ResourcePoolStatusRequest", "status.pools[0].partition_summary[1].allocatable", 2),
    ("ResourcePoolStatusRequest", "status.pools[0].shareable_summary.capacity[0].available",
     "152Gi"),
    ("ResourcePoolStatusRequest", "status.pools[1].validation_error",
     "slices disagree on the pool generation"),
    ("PodGroup", "spec.scheduling_policy.gang.min_count", 4),
    ("PodGroup", "status.resource_claim_statuses[0].resource_claim_name",
     "training-group-shared-q2w3e"),
    ("Workload", "spec.pod_group_templates[1].scheduling_policy.basic",
     sv1b1.BasicSchedulingPolicy()),
    ("ResourceClaimList", "metadata.continue_", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NDgwMH0"),
    ("ResourceClaimList", "items[0].spec.devices.requests[0].exactly.device_class_name",
     "gpu.example.com"),
]


@pytest.mark.parametrize(("kind", "path", "expected"), TYPED_ACCESS,
                         ids=[f"{k}:{p}" for k, p, _ in TYPED_ACCESS])
def test_typed_access_by_python_names(kind: str, path: str, expected: Any) -> None:
    assert _get(m.parse(_rich(kind)), path) == expected


def test_list_items_are_typed_and_keep_their_wire_shape() -> None:
    claims = m.parse(_rich("ResourceClaimList"), m.ResourceClaimList)
    assert all(isinstance(item, m.ResourceClaim) for item in claims.items)
    assert "apiVersion" not in m.to_wire(claims.items[0])["metadata"]
    assert m.to_wire(claims)["items"][0] == _rich("ResourceClaimList")["items"][0]


# --------------------------------------------------------------------------- construction


def test_build_with_python_names_writes_json_names() -> None:
    claim = m.ResourceClaim(
        metadata=m.ObjectMeta(name="c", namespace="ns"),
        spec=rv1.ResourceClaimSpec(devices=rv1.DeviceClaim(requests=[
            rv1.DeviceRequest(name="gpu", exactly=rv1.ExactDeviceRequest(
                device_class_name="gpu.example.com", allocation_mode="ExactCount", count=1)),
        ])),
        status=rv1.ResourceClaimStatus(devices=[rv1.AllocatedDeviceStatus(
            driver="d.example.com", pool="p", device="dev", share_id="s",
            network_data=rv1.NetworkDeviceData(interface_name="eth0", ips=["10.0.0.1/24"]),
        )]),
    )
    assert m.to_wire(claim) == {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}}]}},
        "status": {"devices": [{"driver": "d.example.com", "pool": "p", "device": "dev",
                                "shareID": "s",
                                "networkData": {"interfaceName": "eth0",
                                                "ips": ["10.0.0.1/24"]}}]},
    }
    assert list(m.to_wire(claim))[:2] == ["apiVersion", "kind"]


@pytest.mark.parametrize("data", [
    {"bool": True}, {"bool_": True}, {"int": 3}, {"int_": 3}, {"versions": ["1.0.0"]},
], ids=str)
def test_fields_accept_json_and_python_names(data: dict[str, Any]) -> None:
    attr = rv1.DeviceAttribute.model_validate(data)
    wire = {k.rstrip("_"): v for k, v in data.items()}
    assert attr.to_wire() == wire


def test_attribute_names_never_shadow_builtins_or_pydantic() -> None:
    reserved = set(dir(pydantic.BaseModel)) | {"bool", "int", "str", "float", "list", "dict"}
    for model in m.all_models():
        clash = reserved & set(model.model_fields)
        assert not clash, f"{model.__name__}: {clash}"


# --------------------------------------------------------------------------- wire scalars


@pytest.mark.parametrize(("wire", "kept"), [
    ("10Gi", "10Gi"), ("500m", "500m"), (8, "8"), (2.0, "2"), (1.5, "1.5"), ("1e3", "1e3"),
])
def test_quantities_are_wire_strings(wire: Any, kept: str) -> None:
    assert rv1.Counter.model_validate({"value": wire}).value == kept


@pytest.mark.parametrize("bad", [True, None, [], {"a": 1}], ids=repr)
def test_quantity_rejects_non_scalars(bad: Any) -> None:
    with pytest.raises(pydantic.ValidationError):
        rv1.Counter.model_validate({"value": bad})


@pytest.mark.parametrize(("text", "moment"), [
    ("2025-06-01T10:00:01Z", datetime(2025, 6, 1, 10, 0, 1, tzinfo=UTC)),
    ("2025-06-01T12:00:01+02:00", datetime(2025, 6, 1, 10, 0, 1, tzinfo=UTC)),
    ("2025-06-01T10:00:01.250000Z", datetime(2025, 6, 1, 10, 0, 1, 250000, tzinfo=UTC)),
])
def test_parse_time(text: str, moment: datetime) -> None:
    assert m.parse_time(text) == moment


@pytest.mark.parametrize(("moment", "text", "micro"), [
    (datetime(2025, 6, 1, 10, 0, 1, 999, tzinfo=UTC), "2025-06-01T10:00:01Z",
     "2025-06-01T10:00:01.000999Z"),
    (datetime(2025, 6, 1, 12, 0, 1, tzinfo=timezone(timedelta(hours=2))),
     "2025-06-01T10:00:01Z", "2025-06-01T10:00:01.000000Z"),
    (datetime(2025, 6, 1, 10, 0, 1), "2025-06-01T10:00:01Z", "2025-06-01T10:00:01.000000Z"),
])
def test_format_time(moment: datetime, text: str, micro: str) -> None:
    assert m.format_time(moment) == text
    assert m.format_micro_time(moment) == micro
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    assert m.parse_time(text) == aware.replace(microsecond=0)
    assert m.parse_time(micro) == aware


# --------------------------------------------------------------------------- unknown fields


def _future_slice() -> dict[str, Any]:
    doc = _rich("ResourceSlice")
    doc["spec"]["futureSpec"] = {"x": [1, None]}
    doc["spec"]["devices"][0]["futureDevice"] = True
    doc["spec"]["devices"][0]["attributes"]["gpu.example.com/index"]["float"] = 0.5
    doc["spec"]["devices"][0]["capacity"]["memory"]["requestPolicy"]["futurePolicy"] = "x"
    doc["status"] = {"observed": 1}
    return doc


UNKNOWN = [
    (_future_slice, [
        "spec.devices[0].attributes[gpu.example.com/index].float",
        "spec.devices[0].capacity[memory].requestPolicy.futurePolicy",
        "spec.devices[0].futureDevice",
        "spec.futureSpec",
        "status",
    ]),
    (lambda: {**_rich("PodGroup"), "spec": {**_rich("PodGroup")["spec"], "newPolicy": {}}},
     ["spec.newPolicy"]),
    (lambda: {**_rich("ResourceClaimList"), "extra": 1}, ["extra"]),
]


@pytest.mark.parametrize(("make", "paths"), UNKNOWN, ids=["slice", "podgroup", "list"])
def test_unknown_fields_are_kept_and_listed(make: Any, paths: list[str]) -> None:
    """Objects from newer clients survive a read-modify-write untouched."""
    doc = make()
    model = m.parse(doc)
    assert m.to_wire(model) == doc
    assert sorted(m.unknown_fields(model)) == sorted(paths)


# --------------------------------------------------------------------------- parse errors


PARSE_ERRORS = [
    ({"apiVersion": "v1", "kind": "Pod"}, None, m.KindError),
    ({"kind": "ResourceClaim"}, None, m.KindError),
    ({"apiVersion": "resource.k8s.io/v1beta2", "kind": "ResourceClaim", "spec": {}}, None,
     m.KindError),
    (_rich("ResourceClaim"), m.ResourceSlice, m.KindError),
    ({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
      "spec": {"pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}}}, None,
     pydantic.ValidationError),
    ({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
      "spec": {"devices": {"requests": "gpu"}}}, None, pydantic.ValidationError),
    ({"apiVersion": "resource.k8s.io/v1alpha3", "kind": "ResourcePoolStatusRequest",
      "metadata": {"name": "r"}, "spec": {"limit": 5}}, None, pydantic.ValidationError),
]


@pytest.mark.parametrize(("obj", "expect", "error"), PARSE_ERRORS,
                         ids=["unknown-kind", "no-apiversion", "other-version", "wrong-expect",
                              "missing-required", "wrong-type", "rpsr-without-driver"])
def test_parse_errors(obj: dict[str, Any], expect: type[m.K8sModel] | None,
                      error: type[Exception]) -> None:
    with pytest.raises(error):
        m.parse(obj, expect) if expect else m.parse(obj)


@pytest.mark.parametrize(("obj", "expect"), [
    (_rich("ResourceClaimList")["items"][0], m.ResourceClaim),
    (_rich("ResourceClaim")["spec"], rv1.ResourceClaimSpec),
    (_rich("ResourcePoolStatusRequest")["status"]["pools"][0], rv1a3.PoolStatus),
    (_rich("ResourceClaim"), m.ResourceClaim),
], ids=["list-item", "nested-spec", "nested-status", "full"])
def test_parse_with_expected_type(obj: dict[str, Any], expect: type[m.K8sModel]) -> None:
    model = m.parse(obj, expect)
    assert isinstance(model, expect)
    assert model.model_dump(by_alias=True, exclude_none=True) == obj


# --------------------------------------------------------------------------- kind table


EXPECTED_KINDS = [
    ("resource.k8s.io/v1", "DeviceClass"), ("resource.k8s.io/v1", "ResourceClaim"),
    ("resource.k8s.io/v1", "ResourceClaimTemplate"), ("resource.k8s.io/v1", "ResourceSlice"),
    ("resource.k8s.io/v1", "DeviceTaintRule"),
    ("resource.k8s.io/v1alpha3", "ResourcePoolStatusRequest"),
    ("scheduling.k8s.io/v1beta1", "PodGroup"), ("scheduling.k8s.io/v1beta1", "Workload"),
]


def test_kind_table() -> None:
    expected = {(v, k) for v, k in EXPECTED_KINDS} | {(v, k + "List") for v, k in EXPECTED_KINDS}
    assert set(m.KINDS) == expected
    for (api_version, kind), model in m.KINDS.items():
        assert (model.API_VERSION, model.KIND, model.__name__) == (api_version, kind, kind)


def test_every_served_dra_kind_has_a_model() -> None:
    served = [k for k in SERVED_KINDS
              if k.group == "resource.k8s.io" or (k.group, k.version) == ("scheduling.k8s.io",
                                                                          "v1beta1")]
    assert served
    for k in served:
        api_version = f"{k.group}/{k.version}"
        assert m.model_for(api_version, k.kind), f"{api_version} {k.kind}"
        assert m.model_for(api_version, k.kind + "List"), f"{api_version} {k.kind}List"


# --------------------------------------------------------------------------- generator


def test_generated_modules_are_current() -> None:
    """Re-running scripts/gen_models.py reproduces the committed files byte for byte."""
    rendered = gen_models.render_all()
    assert set(rendered) == {f"{mod.__name__.rsplit('.', 1)[1]}.py" for mod in m.MODULES}
    for name, text in rendered.items():
        assert (MODELS_DIR / name).read_text() == text, f"{name} is stale: run gen_models.py"


def test_generator_output_ignores_schema_order() -> None:
    defs = get_schemas().definitions
    shuffled = Schemas(dict(reversed(list(defs.items()))))
    assert gen_models.Generator(shuffled).render() == gen_models.render_all()


@pytest.mark.skipif(shutil.which("ruff", path=str(Path(sys.executable).parent)) is None,
                    reason="ruff not installed in the venv")
def test_generated_modules_are_ruff_clean() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    assert ruff is not None
    files = [str(MODELS_DIR / f"{mod.__name__.rsplit('.', 1)[1]}.py") for mod in m.MODULES]
    result = subprocess.run([ruff, "check", "--no-cache", *files], capture_output=True,
                            text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize(("name", "snake"), [
    ("deviceClassName", "device_class_name"), ("shareID", "share_id"), ("podIPs", "pod_ips"),
    ("fieldsV1", "fields_v1"), ("apiVersion", "api_version"), ("ips", "ips"), ("int", "int_"),
    ("bool", "bool_"), ("continue", "continue_"), ("from", "from_"), ("schema", "schema_"),
    ("CELDeviceSelector", "cel_device_selector"), ("modelName", "model_name_"),
])
def test_snake_case(name: str, snake: str) -> None:
    assert gen_models.snake(name) == snake


@pytest.mark.parametrize(("description", "names", "summary"), [
    ("Driver identifies the DRA driver. More text.", ("driver",),
     "Identifies the DRA driver."),
    ("IntValue is a number.", ("int",), "A number."),
    ("ShareID uniquely identifies a share.", ("shareID",), "Identifies a share."),
    ("The taint key to be applied to a device.", ("key",),
     "The taint key to be applied to a device."),
    ("Required. A list of terms.", ("x",), "Required. A list of terms."),
    ("IntValues is a list.\n\nThis is an alpha field and requires enabling the "
     "DRAListTypeAttributes feature gate.", ("ints",),
     "A list.\n\nFeature gate: DRAListTypeAttributes (alpha)."),
    ("Flag is set.\n\nThis is a beta field and requires enabling the DRAOne and DRATwo "
     "feature gates.", ("flag",), "Set.\n\nFeature gates: DRAOne, DRATwo (beta)."),
    ("Mode sets the mode. When the DRAListTypeAttributes feature gate is enabled, lists work.",
     ("mode",), "Sets the mode."),
    ("Time is the period of time the toleration (which must be of effect NoExecute, otherwise "
     "this field is ignored) tolerates the taint.", ("time",),
     "The period of time the toleration tolerates the taint."),
])
def test_docstring_summaries(description: str, names: tuple[str, ...], summary: str) -> None:
    assert gen_models.summarize(description, *names) == summary


def test_every_model_has_a_docstring() -> None:
    for model in m.all_models():
        assert model.__doc__ and model.__doc__ != m.K8sModel.__doc__, model.__name__


# --------------------------------------------------------------------------- parity


class ClientModel(Protocol):
    """A model class of the kubernetes client: its generated field tables."""

    attribute_map: ClassVar[dict[str, str]]
    """Python attribute name to JSON name."""
    openapi_types: ClassVar[dict[str, str]]
    """Python attribute name to the client's type expression (`List[V1Pod]`)."""


def _is_client_model(obj: object) -> TypeGuard[type[ClientModel]]:
    return inspect.isclass(obj) and hasattr(obj, "attribute_map") and hasattr(
        obj, "openapi_types")


def _client_classes() -> dict[str, type[ClientModel]]:
    """The client's model classes by name."""
    return {name: cls for name, cls in inspect.getmembers(client_models)
            if _is_client_model(cls)}


CLIENT = _client_classes()


def _client_name(model: type[m.K8sModel]) -> str | None:
    """The client class generated from the same definition: `ResourceV1ResourceClaim` when
    the client disambiguates by group, else `V1ResourceClaim`."""
    prefix = m.schema_name(model).removesuffix(model.__name__)
    parts = prefix.rstrip(".").split(".")
    group = "Meta" if parts[-2] == "meta" else parts[-2].capitalize()
    version = parts[-1].capitalize()
    for candidate in (f"{group}{version}{model.__name__}", f"{version}{model.__name__}"):
        if candidate in CLIENT:
            return candidate
    return None


PAIRS = [(model, name) for model in m.all_models() if (name := _client_name(model))]
OURS_BY_CLIENT = {name: model for model, name in PAIRS}

EXPECTED_UNMATCHED = {
    # Empty structs: the client types the fields holding them as plain `object`.
    "scheduling_v1beta1.AllCompositeDisruptionMode",
    "scheduling_v1beta1.AllDisruptionMode",
    "scheduling_v1beta1.BasicSchedulingPolicy",
    "scheduling_v1beta1.CompositeBasicSchedulingPolicy",
    "scheduling_v1beta1.SingleCompositeDisruptionMode",
    "scheduling_v1beta1.SingleDisruptionMode",
}


def _qualname(model: type[m.K8sModel]) -> str:
    return f"{model.__module__.rsplit('.', 1)[1]}.{model.__name__}"


def _client_shape(t: str) -> Any:
    if t.startswith("List["):
        return ("list", _client_shape(t[5:-1]))
    if t.startswith("Dict[str, "):
        return ("dict", _client_shape(t[10:-1]))
    scalars = {"str": "str", "int": "int", "bool": "bool", "float": "float",
               "datetime": "str", "object": "any"}
    return scalars.get(t, "model")


def _our_shape(ann: Any) -> Any:
    if isinstance(ann, typing.NewType):  # fakeapi.machinery.ids.UID and ResourceVersion are str
        return _our_shape(ann.__supertype__)
    args = [a for a in typing.get_args(ann) if a is not type(None)]
    origin = typing.get_origin(ann)
    if origin is typing.Annotated:
        return _our_shape(args[0])
    if origin in (typing.Union, types.UnionType):
        return _our_shape(args[0]) if len(args) == 1 else "any"
    if origin is list:
        return ("list", _our_shape(args[0]))
    if origin is dict:
        return ("dict", _our_shape(args[1]))
    if isinstance(ann, type) and issubclass(ann, m.K8sModel):
        return "model"
    return {str: "str", int: "int", bool: "bool", float: "float"}.get(ann, "any")


def _shapes_agree(client: Any, ours: Any) -> bool:
    if client == "any":  # RawExtension and empty structs
        return ours in (("dict", "any"), "model", "any")
    if isinstance(client, tuple) and isinstance(ours, tuple):
        return client[0] == ours[0] and _shapes_agree(client[1], ours[1])
    return client == ours


def _aliases(model: type[m.K8sModel]) -> dict[str, str]:
    return {info.alias or name: name for name, info in model.model_fields.items()}


@pytest.mark.parametrize(("model", "client_name"), PAIRS,
                         ids=[f"{_qualname(p)}~{n}" for p, n in PAIRS])
def test_client_fields_exist_in_ours(model: type[m.K8sModel], client_name: str) -> None:
    """Every field of the kubernetes 37.x client model, same JSON name, same shape."""
    cls = CLIENT[client_name]
    ours = _aliases(model)
    for attr, json_name in cls.attribute_map.items():
        assert json_name in ours, f"{model.__name__} lacks {json_name} ({client_name})"
        assert ours[json_name].strip("_") == attr.strip("_")
        field = model.model_fields[ours[json_name]]
        client_shape = _client_shape(cls.openapi_types[attr])
        assert _shapes_agree(client_shape, _our_shape(field.annotation)), json_name


@pytest.mark.parametrize("model", m.all_models(), ids=_qualname)
def test_our_fields_exist_in_schema(model: type[m.K8sModel]) -> None:
    """Nothing of ours is missing from the 1.37 schema, nothing of the schema from ours."""
    schema = get_schemas().definitions[m.schema_name(model)]
    props = set(schema.get("properties", {}))
    assert set(_aliases(model)) == props
    required = {alias for alias, name in _aliases(model).items()
                if model.model_fields[name].is_required()}
    assert required == set(schema.get("required", ()))


def _reachable_client_models() -> list[str]:
    """Client models used (transitively) by the client models of our kinds."""
    roots = [_client_name(model) for model in m.KINDS.values()]
    seen: set[str] = set()
    todo = [r for r in roots if r]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for t in CLIENT[name].openapi_types.values():
            todo += [n for n in re.findall(r"\b[A-Z]\w+", t) if n in CLIENT]
    return sorted(seen)


@pytest.mark.parametrize("model", list(m.KINDS.values()), ids=lambda k: k.__name__)
def test_every_kind_has_a_client_model(model: type[m.K8sModel]) -> None:
    assert _client_name(model), f"kubernetes client 37.x has no model for {model.__name__}"


@pytest.mark.parametrize("client_name", _reachable_client_models())
def test_every_reachable_client_model_has_a_counterpart(client_name: str) -> None:
    assert client_name in OURS_BY_CLIENT, f"no model of ours for {client_name}"


def test_unmatched_models_are_the_known_empty_structs() -> None:
    unmatched = {_qualname(model) for model in m.all_models() if not _client_name(model)}
    assert unmatched == EXPECTED_UNMATCHED
    for model in m.all_models():
        if _qualname(model) in EXPECTED_UNMATCHED:
            assert not get_schemas().definitions[m.schema_name(model)].get("properties")


def test_parity_counts() -> None:
    """Guards against the pairing silently matching nothing."""
    assert len(PAIRS) == len(m.all_models()) - len(EXPECTED_UNMATCHED)
    assert len(PAIRS) >= 90
