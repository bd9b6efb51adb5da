"""The official `kubernetes` Python client (37.x) against a real `fakeapi serve` process.

Every test gets a fresh namespace; cluster-scoped objects get unique names because the
server process is shared by the whole session.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import json
import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol, Self, TypeVar

import pytest
import urllib3
import yaml
from kubernetes import client, config, utils, watch
from kubernetes.client.rest import ApiException

from tests.support.processes import ServerProcess

SEEDS = Path(__file__).parent.parent / "data" / "seeds"
WAIT_SECONDS = 30.0
CLAIM_SPEC = {"devices": {"requests": [
    {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}


# ---------------------------------------------------------------------------- helpers


def _unique(prefix: str) -> str:
    """A DNS-label name nobody else in the session uses."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _status(exc: ApiException) -> dict[str, Any]:
    """The `Status` object an ApiException carries as its body."""
    assert exc.body, f"error {exc.status} without a body"
    body = json.loads(exc.body)
    assert body.get("kind") == "Status" and body.get("apiVersion") == "v1", body
    assert body.get("status") == "Failure" and body.get("code") == exc.status, body
    return body


def _expect_error(call: Callable[[], object], code: int, reason: str) -> dict[str, Any]:
    """Run `call`, expect an ApiException with this HTTP code and Status reason."""
    with pytest.raises(ApiException) as info:
        call()
    assert info.value.status == code, info.value.body
    status = _status(info.value)
    assert status["reason"] == reason, status
    return status


def _assert_subset(expected: object, actual: object, path: str = "") -> None:
    """Every field of `expected` appears in `actual` with the same value (defaults may add)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: expected an object, got {actual!r}"
        for key, value in expected.items():
            assert key in actual, f"{path}.{key} missing in {actual!r}"
            _assert_subset(value, actual[key], f"{path}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), \
            f"{path}: expected {expected!r}, got {actual!r}"
        for i, (exp, act) in enumerate(zip(expected, actual, strict=True)):
            _assert_subset(exp, act, f"{path}[{i}]")
    else:
        assert expected == actual, f"{path}: expected {expected!r}, got {actual!r}"


class KubeObject(Protocol):
    """What every object model of the client has (its generated classes share no base)."""

    @property
    def kind(self) -> str | None: ...

    @property
    def api_version(self) -> str | None: ...

    @property
    def metadata(self) -> client.V1ObjectMeta | None: ...

    @classmethod
    def from_dict(cls, obj: dict[str, Any] | None) -> Self | None: ...


def _metadata(obj: KubeObject) -> client.V1ObjectMeta:
    """The metadata of an object the server returned (it always has some)."""
    assert obj.metadata is not None, f"{type(obj).__name__} without metadata"
    return obj.metadata


def _name(obj: KubeObject) -> str:
    """The name of an object the server returned (it always has one)."""
    name = _metadata(obj).name
    assert name, f"{type(obj).__name__} without a name"
    return name


M = TypeVar("M", bound=KubeObject)


def _from_dict(model: type[M], doc: dict[str, Any]) -> M:
    """`doc` as an instance of the client's `model` (its `from_dict`, None only for None)."""
    obj = model.from_dict(doc)
    assert obj is not None
    return obj


def _raw(response: object) -> dict[str, Any]:
    """The decoded body of a call made with `_preload_content=False`: the client then returns
    urllib3's response, though its methods are typed as returning the model."""
    assert isinstance(response, urllib3.HTTPResponse), type(response)
    body = json.loads(response.data)
    assert isinstance(body, dict), body
    return body


def _rv(obj: KubeObject | dict[str, Any]) -> int:
    """resourceVersion of a model or dict as an int (fakeapi's revisions are integers)."""
    if isinstance(obj, dict):
        return int(obj["metadata"]["resourceVersion"])
    value = _metadata(obj).resource_version
    assert value is not None, f"{type(obj).__name__} without a resourceVersion"
    return int(value)


def _wait_for(list_objects: Callable[..., Any], name: str, done: Callable[[Any], bool],
              timeout: float = WAIT_SECONDS) -> None:
    """Wait on a watch until object `name` (as a dict) satisfies `done`."""
    selector = f"metadata.name={name}"
    body = _raw(list_objects(field_selector=selector, _preload_content=False))
    if any(done(o) for o in body["items"]):
        return
    w = watch.Watch()
    for event in w.stream(list_objects, field_selector=selector, deserialize=False,
                          resource_version=body["metadata"]["resourceVersion"],
                          timeout_seconds=int(timeout)):
        if done(event["object"]):  # deserialize=False: the event as decoded JSON
            w.stop()
            return
    raise AssertionError(f"{name} not there after {timeout} s")


def _wait_gone(list_objects: Callable[..., Any], name: str,
               timeout: float = WAIT_SECONDS) -> None:
    """Wait on a watch for the deletion of object `name` (`list_objects` lists its kind)."""
    selector = f"metadata.name={name}"
    listed = list_objects(field_selector=selector)
    if not listed.items:
        return
    w = watch.Watch()
    for event in w.stream(list_objects, field_selector=selector, deserialize=False,
                          resource_version=listed.metadata.resource_version,
                          timeout_seconds=int(timeout)):
        if event["type"] == "DELETED":
            w.stop()
            return
    raise AssertionError(f"{name} still present after {timeout} s")


def _seed(file: str, kind: str) -> dict[str, Any]:
    """The one document of `kind` in a seed file."""
    docs = [d for d in yaml.safe_load_all((SEEDS / file).read_text()) if d]
    (doc,) = [d for d in docs if d["kind"] == kind]
    return doc


def _meta(name: str, **kw: Any) -> client.V1ObjectMeta:
    return client.V1ObjectMeta(name=name, **kw)


def _claim(name: str, labels: dict[str, str] | None = None) -> client.ResourceV1ResourceClaim:
    """A small ResourceClaim built from the client's models."""
    return client.ResourceV1ResourceClaim(
        metadata=_meta(name, labels=labels),
        spec=client.V1ResourceClaimSpec(devices=client.V1DeviceClaim(requests=[
            client.V1DeviceRequest(name="gpu", exactly=client.V1ExactDeviceRequest(
                device_class_name="gpu.example.com"))])))


@dataclasses.dataclass(frozen=True)
class Ops:
    """The generated verb methods of one kind, with `namespace` passed only when namespaced."""

    api: Any
    snake: str
    namespace: str | None

    def _call(self, verb: str, **kw: Any) -> Any:
        if self.namespace is None:
            return getattr(self.api, f"{verb}_{self.snake}")(**kw)
        return getattr(self.api, f"{verb}_namespaced_{self.snake}")(namespace=self.namespace,
                                                                     **kw)

    def create(self, body: Any, **kw: Any) -> Any:
        return self._call("create", body=body, **kw)

    def read(self, name: str, **kw: Any) -> Any:
        return self._call("read", name=name, **kw)

    def replace(self, name: str, body: Any, **kw: Any) -> Any:
        return self._call("replace", name=name, body=body, **kw)

    def delete(self, name: str, **kw: Any) -> Any:
        return self._call("delete", name=name, **kw)

    def list(self, **kw: Any) -> Any:
        return self._call("list", **kw)


# ---------------------------------------------------------------------------- fixtures


def _new_client(server: ServerProcess) -> client.ApiClient:
    """An ApiClient configured from the server's admin kubeconfig (HTTPS, client cert)."""
    return config.new_client_from_config(config_file=str(server.kubeconfig))


@pytest.fixture(scope="module")
def api(server: ServerProcess) -> Iterator[client.ApiClient]:
    """The shared ApiClient of this module."""
    api_client = _new_client(server)
    yield api_client
    api_client.close()


@pytest.fixture
def core(api: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api)


@pytest.fixture
def resource(api: client.ApiClient) -> client.ResourceV1Api:
    return client.ResourceV1Api(api)


MakeNamespace = Callable[..., str]


@pytest.fixture
def make_ns(core: client.CoreV1Api) -> Iterator[MakeNamespace]:
    """Creates fresh namespaces (optionally labelled); deletes them, without waiting, after."""
    made: list[str] = []

    def make(labels: dict[str, str] | None = None) -> str:
        name = _unique("py")
        core.create_namespace(client.V1Namespace(metadata=_meta(name, labels=labels)))
        made.append(name)
        return name

    yield make
    for name in made:
        try:
            core.delete_namespace(name)
        except ApiException as e:
            if e.status != 404:
                raise


@pytest.fixture
def ns(make_ns: MakeNamespace) -> str:
    """A fresh namespace for one test."""
    return make_ns()


@pytest.fixture
def thread() -> Iterator[ThreadPoolExecutor]:
    """One worker thread for concurrent writers."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        yield pool


# ---------------------------------------------------------------------------- CoreV1Api


def test_write_without_content_type_header(server: ServerProcess, ns: str) -> None:
    plain = config.new_client_from_config(config_file=str(server.kubeconfig))
    try:
        core = client.CoreV1Api(plain)
        created = core.create_namespaced_config_map(
            ns, client.V1ConfigMap(metadata=_meta("plain"), data={"a": "1"}))
        assert created.data is not None
        created.data["a"] = "2"
        assert core.replace_namespaced_config_map("plain", ns, created).data == {"a": "2"}
    finally:
        plain.close()


def test_namespace_lifecycle(core: client.CoreV1Api) -> None:
    name = _unique("nslife")
    created = core.create_namespace(
        client.V1Namespace(metadata=_meta(name, labels={"team": "e2e"})))
    meta = _metadata(created)
    assert meta.uid and meta.creation_timestamp
    assert created.status and created.status.phase == "Active"
    assert created.spec and created.spec.finalizers == ["kubernetes"]
    # same as upstream: the NamespaceDefaultLabelName admission adds kubernetes.io/metadata.name
    assert meta.labels == {"team": "e2e", "kubernetes.io/metadata.name": name}

    read = _metadata(core.read_namespace(name))
    assert read.uid == meta.uid
    assert read.resource_version == meta.resource_version
    assert name in [_name(n) for n in core.list_namespace(label_selector="team=e2e").items]
    assert [_name(n) for n in
            core.list_namespace(field_selector=f"metadata.name={name}").items] == [name]

    core.create_namespaced_config_map(name, client.V1ConfigMap(metadata=_meta("inside")))
    deleted = core.delete_namespace(name)
    # same as upstream: a namespace with finalizers is returned as Terminating, not a Status
    assert isinstance(deleted, dict) and deleted["kind"] == "Namespace", deleted
    assert deleted["metadata"]["deletionTimestamp"]
    assert deleted["status"]["phase"] == "Terminating"
    _wait_gone(core.list_namespace, name)
    assert name not in [_name(n) for n in core.list_namespace().items]
    _expect_error(lambda: core.read_namespaced_config_map("inside", name), 404, "NotFound")


def test_configmap_crud(core: client.CoreV1Api, ns: str) -> None:
    body = client.V1ConfigMap(metadata=_meta("cm", labels={"app": "demo"}), data={"a": "1"})
    created = core.create_namespaced_config_map(ns, body)
    assert _metadata(created).namespace == ns and _metadata(created).uid
    assert created.data == {"a": "1"}

    read = core.read_namespaced_config_map("cm", ns)
    assert _metadata(read).resource_version == _metadata(created).resource_version
    assert read.data is not None
    stale = copy.deepcopy(read)

    read.data["a"] = "2"
    replaced = core.replace_namespaced_config_map("cm", ns, read)
    assert replaced.data == {"a": "2"}
    assert _rv(replaced) > _rv(created)
    assert _metadata(replaced).uid == _metadata(created).uid

    assert stale.data is not None
    stale.data["a"] = "3"
    status = _expect_error(lambda: core.replace_namespaced_config_map("cm", ns, stale),
                           409, "Conflict")
    assert status["details"] == {"name": "cm", "kind": "configmaps"}
    assert status["message"] == (
        'Operation cannot be fulfilled on configmaps "cm": the object has been modified; '
        "please apply your changes to the latest version and try again")
    assert core.read_namespaced_config_map("cm", ns).data == {"a": "2"}

    core.delete_namespaced_config_map("cm", ns)
    _expect_error(lambda: core.read_namespaced_config_map("cm", ns), 404, "NotFound")


PATCH_CASES = [
    # (id, content type the client is told to use (None: its default), body, expected data)
    ("default-dict-is-strategic-merge", None, {"data": {"b": "2"}}, {"a": "1", "b": "2"}),
    ("default-dict-null-deletes", None, {"data": {"a": None, "b": "2"}}, {"b": "2"}),
    ("default-list-is-json-patch", None,
     [{"op": "replace", "path": "/data/a", "value": "9"}], {"a": "9"}),
    ("merge-patch", "application/merge-patch+json", {"data": {"c": "3"}}, {"a": "1", "c": "3"}),
    ("json-patch-test-and-add", "application/json-patch+json",
     [{"op": "test", "path": "/data/a", "value": "1"},
      {"op": "add", "path": "/data/d", "value": "4"}], {"a": "1", "d": "4"}),
]


@pytest.mark.parametrize(("content_type", "body", "expected"),
                         [c[1:] for c in PATCH_CASES], ids=[c[0] for c in PATCH_CASES])
def test_configmap_patch(core: client.CoreV1Api, ns: str, content_type: str | None, body: Any,
                         expected: dict[str, str]) -> None:
    created = core.create_namespaced_config_map(
        ns, client.V1ConfigMap(metadata=_meta("cm"), data={"a": "1"}))
    patched = core.patch_namespaced_config_map("cm", ns, body, _content_type=content_type)
    assert patched.data == expected
    assert _rv(patched) > _rv(created)
    assert core.read_namespaced_config_map("cm", ns).data == expected


def test_configmap_list_pagination(core: client.CoreV1Api, ns: str) -> None:
    names = [f"cm-{i}" for i in range(5)]
    for name in names:
        core.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=_meta(name)))
    seen: list[str] = []
    token: str | None = None
    pages = 0
    while True:
        page = core.list_namespaced_config_map(ns, limit=2, _continue=token)
        pages += 1
        seen += [_name(c) for c in page.items]
        assert page.metadata is not None
        token = page.metadata._continue
        if not token:
            break
        if page.metadata.remaining_item_count is not None:
            assert page.metadata.remaining_item_count == len(names) - len(seen)
    assert seen == names and pages == 3


def _pod(name: str, labels: dict[str, str], **spec: Any) -> client.V1Pod:
    # a scheduler name nobody serves keeps any in-process scheduler away from these pods
    return client.V1Pod(metadata=_meta(name, labels=labels), spec=client.V1PodSpec(
        scheduler_name="e2e-nobody",
        containers=[client.V1Container(name="main", image="registry.k8s.io/pause:3.10")],
        **spec))


POD_SELECTOR_CASES = [
    # (label selector, field selector, expected pod names)
    ("app=web", None, ["web-1", "web-2"]),
    ("app=web,tier=front", None, ["web-1"]),
    ("app in (web,db)", None, ["db-1", "web-1", "web-2"]),
    ("tier", None, ["db-1", "web-1"]),
    ("!tier", None, ["web-2"]),
    ("app!=web", None, ["db-1"]),
    (None, "metadata.name=web-2", ["web-2"]),
    (None, "spec.restartPolicy=Never", ["db-1"]),
    (None, "spec.nodeName=ghost-node", ["web-2"]),
    (None, "status.phase=Pending", ["db-1", "web-1", "web-2"]),
    (None, "spec.schedulerName=e2e-nobody,metadata.name!=db-1", ["web-1", "web-2"]),
    ("app=web", "metadata.name!=web-1", ["web-2"]),
    ("app=nothing", None, []),
]


@pytest.mark.parametrize(("label_selector", "field_selector", "expected"), POD_SELECTOR_CASES)
def test_pod_list_selectors(core: client.CoreV1Api, ns: str, label_selector: str | None,
                            field_selector: str | None, expected: list[str]) -> None:
    core.create_namespaced_pod(ns, _pod("web-1", {"app": "web", "tier": "front"}))
    core.create_namespaced_pod(ns, _pod("web-2", {"app": "web"}, node_name="ghost-node"))
    created = core.create_namespaced_pod(ns, _pod("db-1", {"app": "db", "tier": "back"},
                                                  restart_policy="Never"))
    # same as upstream: PrepareForCreate sets phase Pending and defaults the spec
    assert created.status and created.status.phase == "Pending"
    assert created.spec and created.spec.restart_policy == "Never"
    pods = core.list_namespaced_pod(ns, label_selector=label_selector,
                                    field_selector=field_selector)
    assert sorted(_name(p) for p in pods.items) == expected
    assert pods.metadata and pods.metadata.resource_version


def test_pod_field_selector_unsupported_field(core: client.CoreV1Api, ns: str) -> None:
    status = _expect_error(lambda: core.list_namespaced_pod(ns, field_selector="spec.bogus=x"),
                           400, "BadRequest")
    assert "field label not supported: spec.bogus" in status["message"]


def test_node_create_and_patch_status(core: client.CoreV1Api) -> None:
    name = _unique("node")
    created = core.create_node(client.V1Node(metadata=_meta(name, labels={"e2e": "yes"}),
                                             spec=client.V1NodeSpec(unschedulable=True)))
    try:
        assert _metadata(created).uid and created.spec and created.spec.unschedulable is True
        status = {"status": {
            "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "kubelet is posting ready status"}],
            "nodeInfo": {"kubeletVersion": "v1.37.0", "architecture": "amd64",
                         "operatingSystem": "linux", "bootID": "", "containerRuntimeVersion": "",
                         "kernelVersion": "", "kubeProxyVersion": "", "machineID": "",
                         "osImage": "", "systemUUID": ""},
        }, "spec": {"unschedulable": False}}
        patched = core.patch_node_status(name, status)
        assert patched.status and patched.status.capacity == {
            "cpu": "4", "memory": "16Gi", "pods": "110"}
        assert patched.status.allocatable and patched.status.allocatable["cpu"] == "4"
        assert [(c.type, c.status) for c in patched.status.conditions or []] == \
            [("Ready", "True")]
        assert patched.status.node_info and patched.status.node_info.kubelet_version == "v1.37.0"
        # same as upstream: the status subresource ignores spec changes
        assert patched.spec and patched.spec.unschedulable is True
        assert _rv(patched) > _rv(created)

        # strategic merge of conditions by type: a second condition is added, Ready kept
        again = core.patch_node_status(name, {"status": {"conditions": [
            {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory",
             "message": "ok"}]}})
        assert again.status and again.status.conditions is not None
        assert sorted(c.type for c in again.status.conditions) == ["MemoryPressure", "Ready"]

        read = core.read_node_status(name)
        assert read.status and read.status.capacity and read.status.capacity["memory"] == "16Gi"
        # same as upstream: the main resource ignores status changes
        spec_patched = core.patch_node(name, {"spec": {"unschedulable": False},
                                              "status": {"capacity": {"cpu": "64"}}})
        assert spec_patched.spec and not spec_patched.spec.unschedulable
        assert spec_patched.status and spec_patched.status.capacity
        assert spec_patched.status.capacity["cpu"] == "4"
        assert name in [_name(n) for n in core.list_node(label_selector="e2e=yes").items]
    finally:
        core.delete_node(name)
    _wait_gone(core.list_node, name)


EVENT_SELECTOR_CASES = [
    ("involvedObject.name=pod-a", ["ev-1", "ev-2"]),
    ("involvedObject.name=pod-b", ["ev-3"]),
    ("involvedObject.name=pod-a,reason=Pulled", ["ev-2"]),
    ("involvedObject.kind=Pod", ["ev-1", "ev-2", "ev-3"]),
    ("involvedObject.name!=pod-a", ["ev-3"]),
    ("type=Warning", ["ev-3"]),
    ("source=kubelet", ["ev-2"]),
    ("involvedObject.name=pod-c", []),
]


@pytest.mark.parametrize(("field_selector", "expected"), EVENT_SELECTOR_CASES)
def test_event_create_and_field_selector(core: client.CoreV1Api, ns: str, field_selector: str,
                                         expected: list[str]) -> None:
    now = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    for name, pod, reason, type_, component in [
            ("ev-1", "pod-a", "Scheduled", "Normal", "default-scheduler"),
            ("ev-2", "pod-a", "Pulled", "Normal", "kubelet"),
            ("ev-3", "pod-b", "FailedScheduling", "Warning", "default-scheduler")]:
        created = core.create_namespaced_event(ns, client.CoreV1Event(
            metadata=_meta(name),
            involved_object=client.V1ObjectReference(kind="Pod", namespace=ns, name=pod,
                                                     api_version="v1"),
            reason=reason, message=f"{reason} {pod}", type=type_, count=1,
            first_timestamp=now, last_timestamp=now,
            source=client.V1EventSource(component=component)))
        assert created.involved_object.name == pod and created.first_timestamp == now
    events = core.list_namespaced_event(ns, field_selector=field_selector)
    assert sorted(_name(e) for e in events.items) == expected


# ---------------------------------------------------------------------------- ResourceV1Api


@dataclasses.dataclass(frozen=True)
class SeedCase:
    """A seed object created through a generated API class and model."""

    file: str
    kind: str
    model: str
    snake: str
    namespaced: bool
    api: str = "ResourceV1Api"
    ns_labels: dict[str, str] | None = None
    answered: bool = False
    """A controller writes its status at once; then the whole object is frozen (seed
    dra-observability: ResourcePoolStatusRequests)."""

    def __str__(self) -> str:
        return self.file.removesuffix(".yaml")


SEED_CASES = [
    SeedCase("01-prioritized-list-claim-template.yaml", "ResourceClaimTemplate",
             "V1ResourceClaimTemplate", "resource_claim_template", True),
    SeedCase("03-cat-slice.yaml", "ResourceSlice", "V1ResourceSlice", "resource_slice", False),
    SeedCase("04-admin-access-claim-template.yaml", "ResourceClaimTemplate",
             "V1ResourceClaimTemplate", "resource_claim_template", True,
             ns_labels={"resource.kubernetes.io/admin-access": "true"}),
    SeedCase("05-list-attributes-slice.yaml", "ResourceSlice", "V1ResourceSlice",
             "resource_slice", False),
    SeedCase("06-derived-attributes-claim.yaml", "ResourceClaim", "ResourceV1ResourceClaim",
             "resource_claim", True),
    SeedCase("07-extended-resource-device-class.yaml", "DeviceClass", "V1DeviceClass",
             "device_class", False),
    SeedCase("08-macvlan-claim.yaml", "ResourceClaim", "ResourceV1ResourceClaim",
             "resource_claim", True),
    SeedCase("10-partition-type-slice.yaml", "ResourceSlice", "V1ResourceSlice",
             "resource_slice", False),
    SeedCase("02-podgroup-and-pod.yaml", "PodGroup", "V1beta1PodGroup", "pod_group", True,
             api="SchedulingV1beta1Api"),
    SeedCase("09-check-gpus-rpsr.yaml", "ResourcePoolStatusRequest",
             "V1alpha3ResourcePoolStatusRequest", "resource_pool_status_request", False,
             api="ResourceV1alpha3Api", answered=True),
    SeedCase("11-check-gpu-partitions-rpsr.yaml", "ResourcePoolStatusRequest",
             "V1alpha3ResourcePoolStatusRequest", "resource_pool_status_request", False,
             api="ResourceV1alpha3Api", answered=True),
]


def _seed_setup(api: client.ApiClient, make_ns: MakeNamespace,
                case: SeedCase) -> tuple[Ops, dict[str, Any], type[KubeObject]]:
    """The seed document (renamed when cluster-scoped, without namespace), its Ops and model."""
    api_cls = getattr(client, case.api, None)
    model = getattr(client, case.model, None)
    if api_cls is None or model is None:
        pytest.skip(f"kubernetes client {client.__version__} has no {case.api}/{case.model}")
    doc = copy.deepcopy(_seed(case.file, case.kind))
    doc["metadata"].pop("namespace", None)
    namespace = make_ns(case.ns_labels) if case.namespaced else None
    if not case.namespaced:
        doc["metadata"]["name"] = _unique(doc["metadata"]["name"])
    return Ops(api_cls(api), case.snake, namespace), doc, model


@pytest.mark.parametrize("case", SEED_CASES, ids=str)
def test_seed_crud_with_models(api: client.ApiClient, make_ns: MakeNamespace,
                               case: SeedCase) -> None:
    ops, doc, model = _seed_setup(api, make_ns, case)
    name = doc["metadata"]["name"]
    created = ops.create(_from_dict(model, doc))
    assert isinstance(created, model)
    assert created.kind == case.kind and created.api_version == doc["apiVersion"]
    meta = _metadata(created)
    assert meta.uid and meta.creation_timestamp
    assert meta.generation == 1
    assert meta.namespace == ops.namespace

    read = ops.read(name)
    assert isinstance(read, model) and _metadata(read).uid == meta.uid
    _assert_subset(doc["spec"], api.sanitize_for_serialization(read)["spec"])
    raw = _raw(ops.read(name, _preload_content=False))
    assert raw["kind"] == case.kind and raw["apiVersion"] == doc["apiVersion"]
    _assert_subset(doc["spec"], raw["spec"])

    listed = ops.list(field_selector=f"metadata.name={name}")
    assert [o.metadata.name for o in listed.items] == [name]
    assert all(isinstance(o, model) for o in listed.items)

    if case.answered:  # the controller's status freezes the object
        _wait_for(ops.list, name, lambda obj: obj.get("status") is not None)
        read = ops.read(name)
        read.metadata.labels = {"e2e": "replaced"}
        with pytest.raises(client.ApiException) as refused:
            ops.replace(name, read)
        assert refused.value.status == 422
        assert "may not be changed once status is set" in str(refused.value.body)
        ops.delete(name)
        _wait_gone(ops.list, name)
        return

    _metadata(read).labels = {"e2e": "replaced"}
    replaced = ops.replace(name, read)
    assert replaced.metadata.labels == {"e2e": "replaced"}
    assert _rv(replaced) > _rv(read)
    # same as upstream: a metadata-only change does not bump the generation
    assert replaced.metadata.generation == 1
    assert [o.metadata.name for o in ops.list(label_selector="e2e=replaced").items
            if o.metadata.name == name] == [name]

    deleted = ops.delete(name)
    if isinstance(deleted, dict) and deleted.get("kind") == "Status":
        # kinds without ReturnDeletedObject answer a success Status naming the object
        assert deleted["status"] == "Success" and deleted["details"]["name"] == name
    else:
        deleted_name = deleted["metadata"]["name"] if isinstance(deleted, dict) \
            else deleted.metadata.name
        assert deleted_name == name
    _wait_gone(ops.list, name)


@pytest.mark.parametrize("case", [c for c in SEED_CASES if c.api == "ResourceV1Api"], ids=str)
def test_seed_create_from_yaml(api: client.ApiClient, make_ns: MakeNamespace,
                               case: SeedCase, tmp_path: Path) -> None:
    ops, doc, model = _seed_setup(api, make_ns, case)
    name = doc["metadata"]["name"]
    path = tmp_path / case.file
    path.write_text(yaml.safe_dump(doc))
    ((created,),) = utils.create_from_yaml(api, str(path), namespace=ops.namespace or "default")
    try:
        assert isinstance(created, model)
        assert _name(created) == name
        raw = _raw(ops.read(name, _preload_content=False))
        _assert_subset(doc["spec"], raw["spec"])
    finally:
        ops.delete(name)


def test_server_side_apply_with_dynamic_client(api: client.ApiClient,
                                               resource: client.ResourceV1Api, ns: str) -> None:
    doc = copy.deepcopy(_seed("06-derived-attributes-claim.yaml", "ResourceClaim"))
    doc["metadata"]["namespace"] = ns
    (applied,) = utils.create_from_dict(api, doc, apply=True, namespace=ns)
    assert applied.metadata.name == doc["metadata"]["name"]
    managers = [(f.manager, f.operation) for f in applied.metadata.managedFields]
    assert managers == [("python-client", "Apply")]

    doc["metadata"]["labels"] = {"applied": "twice"}
    (again,) = utils.create_from_dict(api, doc, apply=True, namespace=ns)
    assert dict(again.metadata.labels) == {"applied": "twice"}
    assert int(again.metadata.resourceVersion) > int(applied.metadata.resourceVersion)
    raw = _raw(resource.read_namespaced_resource_claim(
        doc["metadata"]["name"], ns, _preload_content=False))
    _assert_subset(doc["spec"], raw["spec"])


_APPLY = "application/apply-patch+yaml"
_APPLY_BODY = {"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "cm", "namespace": "default"}}
NAMESPACE_MISMATCH_CASES = [
    # (patch content type, patch body naming namespace "default", whether cm exists first)
    pytest.param(_APPLY, _APPLY_BODY, False, id="apply-create"),
    pytest.param(_APPLY, _APPLY_BODY, True, id="apply-update"),
    pytest.param("application/merge-patch+json", {"metadata": {"namespace": "default"}}, True,
                 id="merge"),
    pytest.param("application/strategic-merge-patch+json",
                 {"metadata": {"namespace": "default"}}, True, id="strategic"),
]


@pytest.mark.parametrize(("content_type", "body", "exists"), NAMESPACE_MISMATCH_CASES)
def test_patch_namespace_mismatch_is_bad_request(core: client.CoreV1Api, ns: str,
                                                 content_type: str, body: dict[str, Any],
                                                 exists: bool) -> None:
    if exists:
        core.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=_meta("cm")))
    status = _expect_error(lambda: core.patch_namespaced_config_map(
        "cm", ns, body, field_manager="e2e", _content_type=content_type), 400, "BadRequest")
    assert status["message"] == ("the namespace of the provided object does not match the "
                                 "namespace sent on the request")
    if not exists:
        _expect_error(lambda: core.read_namespaced_config_map("cm", ns), 404, "NotFound")


def test_dry_run_create_is_not_persisted(core: client.CoreV1Api, ns: str) -> None:
    created = core.create_namespaced_config_map(
        ns, client.V1ConfigMap(metadata=_meta("dry"), data={"a": "1"}), dry_run="All")
    assert created.data == {"a": "1"} and _name(created) == "dry"
    _expect_error(lambda: core.read_namespaced_config_map("dry", ns), 404, "NotFound")


def test_resource_claim_from_models(resource: client.ResourceV1Api, ns: str) -> None:
    body = client.ResourceV1ResourceClaim(
        metadata=_meta("pair", labels={"app": "demo"}, annotations={"note": "models"}),
        spec=client.V1ResourceClaimSpec(devices=client.V1DeviceClaim(
            requests=[
                client.V1DeviceRequest(name="gpu", exactly=client.V1ExactDeviceRequest(
                    device_class_name="gpu.example.com", count=2,
                    selectors=[client.V1DeviceSelector(cel=client.V1CELDeviceSelector(
                        expression='device.attributes["gpu.example.com"].type == "gpu"'))])),
                client.V1DeviceRequest(name="nic", exactly=client.V1ExactDeviceRequest(
                    device_class_name="nic.example.com", allocation_mode="All")),
            ],
            constraints=[client.V1DeviceConstraint(requests=["gpu", "nic"],
                                                   match_attribute="gpu.example.com/numa")])))
    created = resource.create_namespaced_resource_claim(ns, body)
    read = resource.read_namespaced_resource_claim("pair", ns)
    for got in (created, read):
        assert got.spec and got.spec.devices and got.spec.devices.requests is not None
        gpu, nic = got.spec.devices.requests
        assert gpu.exactly and nic.exactly, (gpu, nic)
        assert (gpu.name, gpu.exactly.device_class_name, gpu.exactly.count) == \
            ("gpu", "gpu.example.com", 2)
        assert gpu.exactly.selectors and gpu.exactly.selectors[0].cel
        assert gpu.exactly.selectors[0].cel.expression.startswith("device.attributes")
        assert (nic.exactly.allocation_mode, nic.exactly.count) == ("All", None)
        assert got.spec.devices.constraints
        assert got.spec.devices.constraints[0].match_attribute == "gpu.example.com/numa"
        assert _metadata(got).annotations == {"note": "models"}
        assert got.status is None or not got.status.allocation
    listed = resource.list_namespaced_resource_claim(ns, label_selector="app=demo")
    assert [_name(c) for c in listed.items] == ["pair"]


def test_resource_claim_status_patch(resource: client.ResourceV1Api, core: client.CoreV1Api,
                                     ns: str) -> None:
    doc = _seed("08-macvlan-claim.yaml", "ResourceClaim")
    created = resource.create_namespaced_resource_claim(
        ns, _from_dict(client.ResourceV1ResourceClaim, doc))
    # the consumer must exist: the resource-claim controller drops reservations of pods
    # that are gone, as upstream's
    consumer = core.create_namespaced_pod(ns, client.V1Pod(
        metadata=_meta("pod-1"), spec=client.V1PodSpec(node_name="worker-1", containers=[
            client.V1Container(name="c", image="registry.k8s.io/pause:3.10")])))
    device = {"driver": "resource-driver.example.com", "pool": "worker-1", "device": "eth0"}
    status = {
        "allocation": {
            "devices": {"results": [{"request": "macvlan-eth0", **device}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["worker-1"]}]}]},
        },
        "reservedFor": [{"resource": "pods", "name": "pod-1", "uid": _metadata(consumer).uid}],
        "devices": [{**device, "conditions": [{
            "type": "Ready", "status": "True", "reason": "NetworkReady", "message": "up",
            "lastTransitionTime": "2026-01-02T03:04:05Z"}],
            "networkData": {"interfaceName": "net1", "ips": ["10.9.8.7/24"],
                            "hardwareAddress": "ea:9f:cb:40:b1:7b"}}],
    }
    patched = resource.patch_namespaced_resource_claim_status(
        "macvlan-eth0", ns, {"status": status, "spec": {"devices": {"requests": []}}})
    assert _rv(patched) > _rv(created)
    # same as upstream: /status ignores spec and does not bump the generation
    assert patched.spec and patched.spec.devices and patched.spec.devices.requests
    assert patched.spec.devices.requests[0].name == "macvlan-eth0"
    assert _metadata(patched).generation == 1
    raw = _raw(resource.read_namespaced_resource_claim_status(
        "macvlan-eth0", ns, _preload_content=False))
    _assert_subset(status, raw["status"])
    for got in (patched, resource.read_namespaced_resource_claim_status("macvlan-eth0", ns),
                resource.read_namespaced_resource_claim("macvlan-eth0", ns)):
        assert got.status and got.status.allocation and got.status.allocation.devices
        assert got.status.allocation.devices.results
        result = got.status.allocation.devices.results[0]
        assert (result.request, result.pool, result.device) == \
            ("macvlan-eth0", "worker-1", "eth0")
        assert got.status.devices and got.status.devices[0].network_data
        assert got.status.devices[0].network_data.ips == ["10.9.8.7/24"]
        assert got.status.reserved_for and got.status.reserved_for[0].name == "pod-1"

    # same as upstream: a write to the main resource can't change status
    current = resource.read_namespaced_resource_claim("macvlan-eth0", ns)
    assert current.status is not None
    current.status.reserved_for = None
    _metadata(current).labels = {"touched": "yes"}
    replaced = resource.replace_namespaced_resource_claim("macvlan-eth0", ns, current)
    assert _metadata(replaced).labels == {"touched": "yes"}
    assert replaced.status and replaced.status.reserved_for is not None
    assert [r.name for r in replaced.status.reserved_for] == ["pod-1"]


def test_device_taint_rule_create_list(resource: client.ResourceV1Api) -> None:
    name = _unique("taint")
    body = client.V1DeviceTaintRule(
        metadata=_meta(name, labels={"e2e": name}),
        spec=client.V1DeviceTaintRuleSpec(
            device_selector=client.V1DeviceTaintSelector(
                driver="gpu.example.com", pool="worker-1", device="gpu-0"),
            taint=client.V1DeviceTaint(key="example.com/unhealthy", value="true",
                                       effect="NoSchedule")))
    created = resource.create_device_taint_rule(body)
    try:
        assert _metadata(created).generation == 1
        taint = created.spec.taint
        assert (taint.key, taint.value, taint.effect) == \
            ("example.com/unhealthy", "true", "NoSchedule")
        listed = resource.list_device_taint_rule(label_selector=f"e2e={name}")
        assert [_name(r) for r in listed.items] == [name]
        sel = listed.items[0].spec.device_selector
        assert sel is not None
        assert (sel.driver, sel.pool, sel.device) == ("gpu.example.com", "worker-1", "gpu-0")
        assert resource.read_device_taint_rule(name).spec.taint == taint
    finally:
        resource.delete_device_taint_rule(name)
    _wait_gone(resource.list_device_taint_rule, name)


def test_resource_claim_request_defaults(resource: client.ResourceV1Api, ns: str) -> None:
    spec = {"devices": {"requests": [
        {"name": "plain", "exactly": {"deviceClassName": "gpu.example.com"}},
        {"name": "all", "exactly": {"deviceClassName": "gpu.example.com",
                                    "allocationMode": "All"}},
        {"name": "alt", "firstAvailable": [{"name": "one",
                                            "deviceClassName": "gpu.example.com"}]},
    ]}}
    resource.create_namespaced_resource_claim(ns, client.ResourceV1ResourceClaim.model_validate(
        {"metadata": {"name": "defaults"}, "spec": spec}))
    raw = _raw(resource.read_namespaced_resource_claim("defaults", ns, _preload_content=False))
    plain, all_, alt = raw["spec"]["devices"]["requests"]
    # same as upstream: allocationMode defaults to ExactCount, and then count to 1
    assert plain["exactly"] == {"deviceClassName": "gpu.example.com",
                                "allocationMode": "ExactCount", "count": 1}
    assert all_["exactly"] == {"deviceClassName": "gpu.example.com", "allocationMode": "All"}
    assert alt["firstAvailable"] == [{"name": "one", "deviceClassName": "gpu.example.com",
                                      "allocationMode": "ExactCount", "count": 1}]


def test_device_taint_time_added_defaulted(resource: client.ResourceV1Api) -> None:
    name = _unique("taint")
    before = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    created = resource.create_device_taint_rule(client.V1DeviceTaintRule.model_validate({
        "metadata": {"name": name},
        "spec": {"deviceSelector": {"driver": "gpu.example.com"},
                 "taint": {"key": "example.com/t", "effect": "None"}}}))
    try:
        added = created.spec.taint.time_added
        assert added is not None
        assert before <= added <= datetime.datetime.now(datetime.UTC)
    finally:
        resource.delete_device_taint_rule(name)


@dataclasses.dataclass(frozen=True)
class DeleteCase:
    """What DELETE answers for one kind: the object (upstream ReturnDeletedObject) or Status."""

    ops: Callable[[client.ApiClient, str], Ops]
    body: Callable[[str], dict[str, Any]]
    returns: str
    group: str = ""
    resource: str = ""


def _ops(api_name: str, snake: str, namespaced: bool) -> Callable[[client.ApiClient, str], Ops]:
    return lambda api, ns: Ops(getattr(client, api_name)(api), snake, ns if namespaced else None)


_NOW = "2026-01-01T00:00:00Z"
DELETE_CASES = [
    pytest.param(DeleteCase(_ops("CoreV1Api", "config_map", True),
                            lambda n: {"metadata": {"name": n}}, "Status", "", "configmaps"),
                 id="configmap-status"),
    pytest.param(DeleteCase(_ops("CoreV1Api", "node", False),
                            lambda n: {"metadata": {"name": n}}, "Status", "", "nodes"),
                 id="node-status"),
    pytest.param(DeleteCase(_ops("CoreV1Api", "event", True), lambda n: {
        "metadata": {"name": n}, "involvedObject": {"kind": "Pod", "name": "p"},
        "reason": "R", "firstTimestamp": _NOW, "lastTimestamp": _NOW},
        "Status", "", "events"), id="event-status"),
    pytest.param(DeleteCase(_ops("ResourceV1Api", "device_taint_rule", False), lambda n: {
        "metadata": {"name": n}, "spec": {"deviceSelector": {"driver": "gpu.example.com"},
                                          "taint": {"key": "k", "effect": "None"}}},
        "Status", "resource.k8s.io", "devicetaintrules"),
        id="devicetaintrule-v1-status"),
    pytest.param(DeleteCase(_ops("CoreV1Api", "pod", True), lambda n: {
        "metadata": {"name": n}, "spec": {"schedulerName": "e2e-nobody", "containers": [
            {"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}, "Pod"), id="pod-object"),
    pytest.param(DeleteCase(_ops("ResourceV1Api", "resource_claim", True),
                            lambda n: {"metadata": {"name": n}, "spec": CLAIM_SPEC},
                            "ResourceClaim"), id="resourceclaim-object"),
    pytest.param(DeleteCase(_ops("ResourceV1Api", "device_class", False),
                            lambda n: {"metadata": {"name": n}, "spec": {}}, "DeviceClass"),
                 id="deviceclass-object"),
    pytest.param(DeleteCase(_ops("CoreV1Api", "service", True), lambda n: {
        "metadata": {"name": n}, "spec": {"ports": [{"port": 80}]}}, "Service"),
        id="service-object"),
]


@pytest.mark.parametrize("case", DELETE_CASES)
def test_delete_response(api: client.ApiClient, ns: str, case: DeleteCase) -> None:
    ops = case.ops(api, ns)
    name = _unique("del")
    created = ops.create(case.body(name))
    body = _raw(ops.delete(name, _preload_content=False))
    if case.returns == "Status":
        details = {"name": name, "kind": case.resource, "uid": created.metadata.uid}
        if case.group:
            details["group"] = case.group
        assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                        "status": "Success", "details": details}
    else:
        assert body["kind"] == case.returns and body["metadata"]["name"] == name
        assert body["metadata"]["uid"] == created.metadata.uid
    _wait_gone(ops.list, name)


IMMUTABLE_SPEC_CASES = [
    ("resource_claim", lambda: {"metadata": {"name": "imm"}, "spec": CLAIM_SPEC},
     "ResourceClaim", "spec"),
    ("resource_claim_template", lambda: {"metadata": {"name": "imm"},
                                         "spec": {"spec": CLAIM_SPEC}},
     "ResourceClaimTemplate", "spec"),
]


@pytest.mark.parametrize(("snake", "body", "kind", "field"), IMMUTABLE_SPEC_CASES,
                         ids=[c[0] for c in IMMUTABLE_SPEC_CASES])
def test_claim_spec_is_immutable(resource: client.ResourceV1Api, ns: str, snake: str,
                                 body: Callable[[], dict[str, Any]], kind: str,
                                 field: str) -> None:
    ops = Ops(resource, snake, ns)
    created = _raw(ops.create(body(), _preload_content=False))
    changed = copy.deepcopy(created)
    requests = (changed["spec"] if kind == "ResourceClaim"
                else changed["spec"]["spec"])["devices"]["requests"]
    requests[0]["exactly"]["deviceClassName"] = "other.example.com"
    status = _expect_error(lambda: ops.replace("imm", changed), 422, "Invalid")
    assert status["details"]["kind"] == kind and status["details"]["name"] == "imm"
    assert any(c["field"] == field and "field is immutable" in c["message"]
               for c in status["details"]["causes"]), status


TIMESTAMP_CASES = [
    # (what the client sends for a metav1.Time, what upstream stores: RFC 3339, UTC, seconds)
    (datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC), "2026-01-01T00:00:00Z"),
    (datetime.datetime(2026, 1, 1, 2, tzinfo=datetime.timezone(datetime.timedelta(hours=2))),
     "2026-01-01T00:00:00Z"),
    (datetime.datetime(2026, 1, 1, 0, 0, 0, 123456, tzinfo=datetime.UTC),
     "2026-01-01T00:00:00Z"),
]


@pytest.mark.parametrize(("sent", "stored"), TIMESTAMP_CASES, ids=["utc", "offset", "micros"])
def test_timestamps_are_normalized(core: client.CoreV1Api, ns: str, sent: datetime.datetime,
                                   stored: str) -> None:
    core.create_namespaced_event(ns, client.CoreV1Event(
        metadata=_meta("ts"), involved_object=client.V1ObjectReference(kind="Pod", name="p"),
        reason="R", first_timestamp=sent, last_timestamp=sent))
    raw = _raw(core.read_namespaced_event("ts", ns, _preload_content=False))
    assert (raw["firstTimestamp"], raw["lastTimestamp"]) == (stored, stored)


def test_api_resources_discovery(api: client.ApiClient) -> None:
    expected = {
        "ResourceV1Api": {"deviceclasses": False, "resourceclaims": True,
                          "resourceclaims/status": True, "resourceclaimtemplates": True,
                          "resourceslices": False, "devicetaintrules": False},
        "ResourceV1alpha3Api": {"resourcepoolstatusrequests": False},
        "SchedulingV1beta1Api": {"podgroups": True, "podgroups/status": True},
    }
    for api_name, resources in expected.items():
        api_cls = getattr(client, api_name, None)
        if api_cls is None:
            continue
        got = {r.name: r for r in api_cls(api).get_api_resources().resources}
        for name, namespaced in resources.items():
            assert name in got, f"{api_name}: {name} missing in {sorted(got)}"
            assert got[name].namespaced is namespaced
            if "/" not in name:
                assert {"create", "get", "list", "watch", "delete"} <= set(got[name].verbs)


# ---------------------------------------------------------------------------- watch


def _watch() -> watch.Watch:
    """A Watch for ResourceClaims.

    The 37.0.2 client derives the item type from `V1ResourceClaimList` as `V1ResourceClaim`,
    which it names `ResourceV1ResourceClaim`, so it has to be given explicitly.
    """
    return watch.Watch(return_type=client.ResourceV1ResourceClaim)


def _collect(stream: Iterator[dict[str, Any]], until: Callable[[dict[str, Any]], bool],
             w: watch.Watch) -> list[dict[str, Any]]:
    """Events from `stream` up to and including the first one `until` accepts."""
    events = []
    for event in stream:
        events.append(event)
        if until(event):
            w.stop()
            break
    return events


def _summary(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(e["type"], e["raw_object"]["metadata"].get("name", "")) for e in events]


def test_watch_sees_changes_from_another_thread(
        resource: client.ResourceV1Api, server: ServerProcess, ns: str,
        thread: ThreadPoolExecutor) -> None:
    resource.create_namespaced_resource_claim(ns, _claim("before"))
    started = threading.Event()

    def writer() -> None:
        assert started.wait(10), "watch never delivered the initial event"
        other = client.ResourceV1Api(_new_client(server))
        other.create_namespaced_resource_claim(ns, _claim("live"))
        other.patch_namespaced_resource_claim("live", ns, {"metadata": {"labels": {"x": "1"}}})
        other.delete_namespaced_resource_claim("live", ns)
        other.api_client.close()

    future: Future[None] = thread.submit(writer)
    w = _watch()
    events = []
    try:
        for event in w.stream(resource.list_namespaced_resource_claim, namespace=ns,
                              timeout_seconds=5):
            events.append(event)
            started.set()
            if event["type"] == "DELETED":
                w.stop()
                break
    finally:
        started.set()
    future.result(timeout=10)
    assert _summary(events) == [("ADDED", "before"), ("ADDED", "live"), ("MODIFIED", "live"),
                                ("DELETED", "live")]
    assert all(isinstance(e["object"], client.ResourceV1ResourceClaim) for e in events)
    revisions = [_rv(e["raw_object"]) for e in events]
    assert revisions == sorted(set(revisions)), revisions
    assert events[2]["object"].metadata.labels == {"x": "1"}


def test_watch_resumes_from_list_resource_version(resource: client.ResourceV1Api,
                                                  ns: str) -> None:
    resource.create_namespaced_resource_claim(ns, _claim("old"))
    listed = resource.list_namespaced_resource_claim(ns)
    assert listed.metadata and listed.metadata.resource_version
    list_rv = listed.metadata.resource_version
    assert [_name(c) for c in listed.items] == ["old"]
    resource.create_namespaced_resource_claim(ns, _claim("new"))
    resource.patch_namespaced_resource_claim("old", ns, {"metadata": {"labels": {"y": "2"}}})
    resource.delete_namespaced_resource_claim("new", ns)

    w = _watch()
    events = _collect(w.stream(resource.list_namespaced_resource_claim, namespace=ns,
                               resource_version=list_rv, timeout_seconds=5),
                      lambda e: e["type"] == "DELETED", w)
    assert _summary(events) == [("ADDED", "new"), ("MODIFIED", "old"), ("DELETED", "new")]
    revisions = [_rv(e["raw_object"]) for e in events]
    assert int(list_rv) < revisions[0] and revisions == sorted(set(revisions))
    assert w.resource_version == str(revisions[-1])


def test_watch_with_bookmarks_receives_only_valid_events(
        resource: client.ResourceV1Api, ns: str, thread: ThreadPoolExecutor) -> None:
    resource.create_namespaced_resource_claim(ns, _claim("a"))
    listed = resource.list_namespaced_resource_claim(ns)
    assert listed.metadata and listed.metadata.resource_version
    list_rv = listed.metadata.resource_version

    opened = threading.Event()

    def open_watch(*args: Any, **kwargs: Any) -> Any:
        """The list call the watch makes: it returns once the server has opened the watch."""
        response = resource.list_namespaced_resource_claim(*args, **kwargs)
        opened.set()
        return response

    def writer() -> None:
        assert opened.wait(10), "the watch never opened"
        resource.create_namespaced_resource_claim(ns, _claim("b"))
        resource.delete_namespaced_resource_claim("a", ns)

    future: Future[None] = thread.submit(writer)
    w = _watch()
    # same as upstream: the server ends the watch when timeoutSeconds is up, so the stream
    # returns (the client sets no timeout of its own; that it ends exactly then is checked on
    # the virtual clock, tests/fakeapi/test_api.py and test_watch_deadline.py)
    events = list(w.stream(open_watch, namespace=ns,
                           resource_version=list_rv, allow_watch_bookmarks=True,
                           timeout_seconds=3))
    future.result(timeout=10)
    assert {e["type"] for e in events} <= {"ADDED", "MODIFIED", "DELETED", "BOOKMARK"}
    assert [s for s in _summary(events) if s[0] != "BOOKMARK"] == [("ADDED", "b"),
                                                                  ("DELETED", "a")]
    last = int(list_rv)
    for event in events:
        raw = event["raw_object"]
        assert raw["kind"] == "ResourceClaim" and raw["apiVersion"] == "resource.k8s.io/v1"
        if event["type"] == "BOOKMARK":
            # same as upstream: a bookmark carries only the resourceVersion (and annotations)
            assert set(raw["metadata"]) <= {"resourceVersion", "annotations"}, raw
            assert _rv(raw) >= last
        else:
            assert isinstance(event["object"], client.ResourceV1ResourceClaim)
            assert _rv(raw) > last
        last = _rv(raw)


def test_watch_list_initial_events_end_with_bookmark(resource: client.ResourceV1Api,
                                                     ns: str) -> None:
    for name in ("x1", "x2"):
        resource.create_namespaced_resource_claim(ns, _claim(name))
    w = _watch()
    events = _collect(w.stream(resource.list_namespaced_resource_claim, namespace=ns,
                               send_initial_events=True, resource_version_match="NotOlderThan",
                               allow_watch_bookmarks=True, timeout_seconds=5),
                      lambda e: e["type"] == "BOOKMARK", w)
    assert _summary(events)[:2] == [("ADDED", "x1"), ("ADDED", "x2")]
    bookmark = events[-1]["raw_object"]
    assert events[-1]["type"] == "BOOKMARK"
    assert bookmark["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert _rv(bookmark) >= max(_rv(e["raw_object"]) for e in events[:2])


# ---------------------------------------------------------------------------- errors


ERROR_CASES = [
    # (id, call(core, resource, ns), code, reason, details, message)
    ("read-missing-configmap",
     lambda c, r, ns: c.read_namespaced_config_map("nope", ns), 404, "NotFound",
     {"name": "nope", "kind": "configmaps"}, 'configmaps "nope" not found'),
    ("read-missing-claim",
     lambda c, r, ns: r.read_namespaced_resource_claim("nope", ns), 404, "NotFound",
     {"name": "nope", "group": "resource.k8s.io", "kind": "resourceclaims"},
     'resourceclaims.resource.k8s.io "nope" not found'),
    ("read-missing-device-class",
     lambda c, r, ns: r.read_device_class("nope-e2e-missing"), 404, "NotFound",
     {"name": "nope-e2e-missing", "group": "resource.k8s.io", "kind": "deviceclasses"},
     'deviceclasses.resource.k8s.io "nope-e2e-missing" not found'),
    ("delete-missing-claim",
     lambda c, r, ns: r.delete_namespaced_resource_claim("nope", ns), 404, "NotFound",
     {"name": "nope", "group": "resource.k8s.io", "kind": "resourceclaims"},
     'resourceclaims.resource.k8s.io "nope" not found'),
    ("create-configmap-in-missing-namespace",
     lambda c, r, ns: c.create_namespaced_config_map(
         "missing-ns-e2e", client.V1ConfigMap(metadata=_meta("cm"))), 404, "NotFound",
     {"name": "missing-ns-e2e", "kind": "namespaces"}, 'namespaces "missing-ns-e2e" not found'),
    ("create-claim-in-missing-namespace",
     lambda c, r, ns: r.create_namespaced_resource_claim("missing-ns-e2e", _claim("c")), 404,
     "NotFound", {"name": "missing-ns-e2e", "kind": "namespaces"},
     'namespaces "missing-ns-e2e" not found'),
]


@pytest.mark.parametrize(("call", "code", "reason", "details", "message"),
                         [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES])
def test_errors_are_status_objects(core: client.CoreV1Api, resource: client.ResourceV1Api,
                                   ns: str, call: Callable[..., Any], code: int, reason: str,
                                   details: dict[str, str], message: str) -> None:
    status = _expect_error(lambda: call(core, resource, ns), code, reason)
    assert status["details"] == details
    assert status["message"] == message


def test_create_duplicate_is_already_exists(resource: client.ResourceV1Api, ns: str) -> None:
    resource.create_namespaced_resource_claim(ns, _claim("dup"))
    status = _expect_error(lambda: resource.create_namespaced_resource_claim(ns, _claim("dup")),
                           409, "AlreadyExists")
    assert status["details"] == {"name": "dup", "group": "resource.k8s.io",
                                 "kind": "resourceclaims"}
    assert status["message"] == 'resourceclaims.resource.k8s.io "dup" already exists'
