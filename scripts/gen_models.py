#!/usr/bin/env python3
"""Generate the pydantic models in fakeapi/models/ from the Kubernetes 1.37 JSON schemas.

Run once after the schemas change and commit the output:

    .venv/bin/python scripts/gen_models.py          # rewrite the generated modules
    .venv/bin/python scripts/gen_models.py --check  # exit 1 if they are out of date

The output is a pure function of the schemas and the tables below (no timestamps, sorted
iteration), so re-running gives identical files; tests/fakeapi/test_models.py checks that.

What is generated: the root kinds listed in ROOT_KINDS, their List kinds, and every type
they reference, one module per API group-version (see MODULES). Classes appear in
dependency order (leaf types first, top-level kinds last), so the only forward references
are self-references, which pydantic resolves while building the class. Docstrings are the
first sentence of the upstream description, shortened, with the field's own name dropped,
plus a line naming the feature gate(s) the description says the field needs.
"""

from __future__ import annotations

import argparse
import keyword
import re
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fakeapi.schema.schemas import REF_PREFIX, Schemas, get_schemas, types_of  # noqa: E402

OUT_DIR = ROOT / "tests" / "support" / "models"

ROOT_KINDS: tuple[tuple[str, str, str], ...] = (
    ("resource.k8s.io", "v1", "DeviceClass"),
    ("resource.k8s.io", "v1", "ResourceClaim"),
    ("resource.k8s.io", "v1", "ResourceClaimTemplate"),
    ("resource.k8s.io", "v1", "ResourceSlice"),
    ("resource.k8s.io", "v1", "DeviceTaintRule"),
    ("resource.k8s.io", "v1alpha3", "ResourcePoolStatusRequest"),
    ("scheduling.k8s.io", "v1beta1", "PodGroup"),
    ("scheduling.k8s.io", "v1beta1", "Workload"),
)
"""Kinds to generate; each one's `<Kind>List` comes along."""


@dataclass(frozen=True)
class ModuleSpec:
    """Where the definitions under one schema prefix go."""

    prefix: str
    name: str
    title: str


MODULES: tuple[ModuleSpec, ...] = (
    ModuleSpec("io.k8s.apimachinery.pkg.apis.meta.v1.", "meta", "meta/v1 object and list metadata"),
    ModuleSpec("io.k8s.api.core.v1.", "core_v1", "core/v1 types referenced by the DRA kinds"),
    ModuleSpec("io.k8s.api.resource.v1.", "resource_v1", "resource.k8s.io/v1 (DRA)"),
    ModuleSpec(
        "io.k8s.api.resource.v1alpha3.", "resource_v1alpha3",
        "resource.k8s.io/v1alpha3 (ResourcePoolStatusRequest)",
    ),
    ModuleSpec(
        "io.k8s.api.scheduling.v1beta1.", "scheduling_v1beta1",
        "scheduling.k8s.io/v1beta1 (PodGroup, Workload)",
    ),
)

SCALARS: dict[str, str] = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "Quantity",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": "Time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": "MicroTime",
    "io.k8s.apimachinery.pkg.runtime.RawExtension": "RawExtension",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1": "FieldsV1",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "IntOrString",
}
"""Definitions rendered as the wire-scalar aliases of tests.support.models.base."""

DOCS: dict[str, str] = {
    # Own wording where the upstream first sentence does not fit one line.
    # Key: "<module>:<Class>" or "<module>:<Class>.<jsonName>".
    "core_v1:NodeSelectorTerm": "Requirements a node must all meet (expressions and fields).",
    "core_v1:NodeSelector": "Nodes matching any one of the terms (the terms are ORed).",
    "core_v1:NodeSelectorRequirement":
        "A key, an operator and values that a node label must satisfy.",
    "meta:Condition.reason": "Machine-readable CamelCase reason for the last transition.",
    "meta:ManagedFieldsEntry": "One field manager's owned fields for one API version.",
    "meta:ManagedFieldsEntry.subresource":
        "Subresource the update went through; empty for the main one.",
    "meta:OwnerReference.blockOwnerDeletion":
        "Whether this reference blocks foreground deletion of the owner.",
    "meta:ObjectMeta": "Metadata of every persisted object.",
    "meta:ObjectMeta.annotations": "Arbitrary non-identifying key/value metadata for tools.",
    "meta:ObjectMeta.deletionGracePeriodSeconds":
        "Grace period granted for deletion; set with deletionTimestamp.",
    "meta:ObjectMeta.generateName": "Prefix the server uses to generate a name when none is given.",
    "meta:ObjectMeta.resourceVersion": "Opaque version of the object for concurrency and watches.",
    "meta:ObjectMeta.selfLink": "Deprecated and never populated.",
    "meta:ShardInfo.selector": "The request's shard selector, echoed back.",
    "meta:ListMeta": "Metadata of lists and other synthetic responses.",
    "meta:ListMeta.continue": "Opaque token for fetching the next page of a limited list.",
    "meta:ListMeta.resourceVersion": "Opaque version of the collection at the time of the list.",
    "meta:ListMeta.selfLink": "Deprecated and never populated.",
    "meta:ListMeta.shardInfo": "Set when the list is one shard of the collection.",
    "resource_v1:AllocatedDeviceStatus.driver": "Name of the DRA driver that handles the device.",
    "resource_v1:AllocatedDeviceStatus.pool":
        "Pool of the device; driver/pool/device names the device.",
    "resource_v1:OpaqueDeviceConfiguration.driver":
        "Driver whose kubelet plugin receives these parameters.",
    "resource_v1:DeviceAllocationConfiguration": "One config entry of an allocation.",
    "resource_v1:DeviceClassConfiguration": "One config entry of a DeviceClass.",
    "resource_v1:DeviceClassSpec": "What a DeviceClass selects and how its devices are configured.",
    "resource_v1:DeviceSubRequest.capacity": "Capacity a device must offer for this alternative.",
    "resource_v1:ExactDeviceRequest.capacity": "Capacity a device must offer for this request.",
    "resource_v1:DeviceAllocationConfiguration.source":
        "Where the config came from: FromClass or FromClaim.",
    "resource_v1:DeviceToleration":
        "Tolerates device taints matching key, value and effect via operator.",
    "resource_v1:DeviceRequestAllocationResult.bindingConditions":
        "Binding conditions copied from the ResourceSlice at allocation.",
    "resource_v1:DeviceRequestAllocationResult.bindingFailureConditions":
        "Binding failure conditions copied from the ResourceSlice at allocation.",
    "resource_v1:DeviceRequestAllocationResult.driver":
        "Name of the DRA driver that handles the device.",
    "resource_v1:DeviceRequestAllocationResult.pool":
        "Pool of the device; driver/pool/device names the device.",
    "resource_v1:DeviceRequestAllocationResult.shareID":
        "Identifies one share of a device that allows multiple allocations.",
    "resource_v1:DeviceRequestAllocationResult.skipNodeOperations":
        "Node operations skipped for this device, copied from its ResourceSlice.",
    "resource_v1:DeviceRequestAllocationResult.tolerations":
        "The request's tolerations at allocation time.",
    "resource_v1:CapacityRequestPolicy.default":
        "Amount consumed when a request does not ask for this capacity.",
    "resource_v1:CapacityRequirements.requests":
        "Minimum amount per capacity name the device must provide.",
    "resource_v1:CounterSet": "A named set of counters that devices in the pool consume from.",
    "resource_v1:CounterSet.counters": "Counters of this set by name (DNS labels).",
    "resource_v1:DeviceCapacity.requestPolicy": "How shared allocations may consume this capacity.",
    "resource_v1:DeviceTaint":
        "A taint on a device, affecting claims (and their pods) that lack a toleration.",
    "resource_v1:DeviceTaint.effect":
        "None, NoSchedule or NoExecute; unknown effects count as None.",
    "resource_v1:NodeAllocatableMapping":
        "How an allocation turns into a node allocatable quantity.",
    "resource_v1:NodeAllocatableResource":
        "Node allocatable accounting of a device: a mapping and/or an overhead.",
    "resource_v1:NodeAllocatableResource.mapping":
        "For devices that are a node resource themselves (e.g. CPUs).",
    "resource_v1:NodeAllocatableResource.overhead":
        "Extra node resources used per pod when allocating the device.",
    "resource_v1:Device":
        "One device: a name plus attributes, capacity, counters, taints and placement.",
    "resource_v1:Device.bindsToNode":
        "Whether an allocation of this device is bound to the chosen node.",
    "resource_v1:Device.consumesCounters":
        "Counters this device draws from the slice's shared counter sets.",
    "resource_v1:Device.nodeAllocatableResources":
        "Node resources (cpu, memory, ...) that this device accounts for.",
    "resource_v1:DeviceConstraint.distinctAttribute":
        "An attribute whose value must differ across the devices.",
    "resource_v1:DeviceConstraint.matchAttribute":
        "An attribute whose value must be equal across the devices.",
    "resource_v1:DeviceSubRequest": "One alternative of a request's firstAvailable list.",
    "resource_v1:DeviceSubRequest.allocationMode": "ExactCount (the default, see count) or All.",
    "resource_v1:DeviceSubRequest.derivedAttributes":
        "Per-device attributes computed by CEL, usable in constraints.",
    "resource_v1:DeviceSubRequest.deviceClassName": "DeviceClass whose selectors and config apply.",
    "resource_v1:DeviceSubRequest.name":
        "Name of this alternative, referenced as <request>/<subrequest>.",
    "resource_v1:DeviceSubRequest.selectors": "Selectors a device must all satisfy to be chosen.",
    "resource_v1:ExactDeviceRequest.allocationMode": "ExactCount (the default, see count) or All.",
    "resource_v1:ExactDeviceRequest.derivedAttributes":
        "Per-device attributes computed by CEL, usable in constraints.",
    "resource_v1:ExactDeviceRequest.deviceClassName":
        "DeviceClass whose selectors and config apply.",
    "resource_v1:ExactDeviceRequest.selectors": "Selectors a device must all satisfy to be chosen.",
    "resource_v1:DeviceRequest.exactly":
        "A single way to satisfy the request (or use firstAvailable).",
    "resource_v1:DeviceRequest.name":
        "Name of the request, used by containers, constraints and configs.",
    "resource_v1:DeviceClaim.config":
        "Configuration for the drivers that may satisfy the requests.",
    "resource_v1:DeviceClaim.constraints":
        "Constraints across the devices allocated for the requests.",
    "resource_v1:DeviceClassSpec.config":
        "Configuration for every device claimed through this class.",
    "resource_v1:DeviceTaintRuleStatus.conditions": "Conditions such as EvictionInProgress.",
    "resource_v1:ResourceClaimTemplateSpec.metadata":
        "Labels and annotations copied into the generated claim.",
    "resource_v1:ResourceSliceSpec.nodeSelector":
        "Nodes with access to the pool (exactly one term).",
    "resource_v1:ResourceSliceSpec.partitionTypeAttribute":
        "String attribute naming each partitionable device's partition type.",
    "resource_v1:ResourceSliceSpec.perDeviceNodeSelection":
        "Whether each device states its own node access.",
    "resource_v1:ResourceSliceSpec.sharedCounters":
        "Counter sets that devices of the pool consume from.",
    "resource_v1:ResourceSliceSpec.skipNodeOperations":
        "Node operations (gRPC calls) skipped for the devices in this slice.",
    "resource_v1:ResourceSlice": "Some or all devices of one driver's resource pool.",
    "resource_v1alpha3:PartitionTypeStatus": "Allocatability of one partition type of a pool.",
    "resource_v1alpha3:PartitionTypeStatus.allocatable":
        "How many more devices of this type the shared counters still allow.",
    "resource_v1alpha3:ShareableSummaryStatus": "Capacity summary of a pool's shareable devices.",
    "resource_v1alpha3:ShareableSummaryStatus.capacity":
        "Total, consumed and available per capacity.",
    "resource_v1alpha3:PoolStatus.shareableSummary": "Set when the pool has a shareable device.",
    "resource_v1alpha3:PoolStatus.unavailableDevices":
        "Unallocated devices that are unavailable, e.g. tainted.",
    "resource_v1alpha3:ResourcePoolStatusRequestSpec.defaultPartitionTypeAttribute":
        "Partition type attribute for slices that declare none.",
    "scheduling_v1beta1:CompositeBasicSchedulingPolicy":
        "The groups of the composite group are scheduled independently.",
    "scheduling_v1beta1:SingleCompositeDisruptionMode":
        "Children of a CompositePodGroup may be disrupted one by one.",
    "scheduling_v1beta1:CompositeGangSchedulingPolicy":
        "The groups of the composite group are scheduled all or nothing.",
    "scheduling_v1beta1:CompositeGangSchedulingPolicy.minGroupCount":
        "Child groups that must fit at once for the group to be admitted.",
    "scheduling_v1beta1:CompositePodGroupSchedulingPolicy.gang":
        "Schedule the child groups all or nothing.",
    "scheduling_v1beta1:PodGroupResourceClaim":
        "A named claim of the PodGroup: an existing claim or one made from a template.",
    "scheduling_v1beta1:GangSchedulingPolicy.minCount":
        "Pods that must fit at once for the group to be admitted.",
    "scheduling_v1beta1:PodGroupSchedulingPolicy.basic": "Schedule the pods one by one, as usual.",
    "scheduling_v1beta1:PodGroupSchedulingPolicy.gang": "Schedule the pods all or nothing.",
    "scheduling_v1beta1:PodGroupTemplate.priorityClassName":
        "Priority class of pod groups made from this template.",
    "scheduling_v1beta1:CompositePodGroupTemplate.priorityClassName":
        "Priority class of composite pod groups made from this template.",
    "scheduling_v1beta1:WorkloadReference": "The Workload and template a PodGroup was made from.",
    "scheduling_v1beta1:WorkloadReference.workloadName":
        "Name of the Workload holding the template.",
    "scheduling_v1beta1:PodGroupSpec.parentCompositePodGroupName":
        "Parent composite pod group; unset for a root group.",
    "scheduling_v1beta1:PodGroupSpec.workloadRef": "The Workload template this PodGroup came from.",
    "scheduling_v1beta1:PodGroupResourceClaimStatus":
        "Name of the claim generated for one template-based PodGroup claim.",
    "scheduling_v1beta1:PodGroupResourceClaimStatus.resourceClaimName":
        "The generated claim; unset when none was needed.",
    "scheduling_v1beta1:Workload": "Scheduling constraints for the lifecycle of a workload's pods.",
}
"""Hand-written summaries; every key must match a generated class or field."""

IDENTITIES: dict[str, str] = {
    "meta:ObjectMeta.uid": "UID",
    "meta:ObjectMeta.resourceVersion": "ResourceVersion",
    "meta:ListMeta.resourceVersion": "ResourceVersion",
    "meta:OwnerReference.uid": "UID",
    "resource_v1:ResourceClaimConsumerReference.uid": "UID",
}
"""String fields typed with a NewType of IDS_MODULE (key as in DOCS); each must match a field."""

BASE_MODULE = "tests.support.models.base"
IDS_MODULE = "fakeapi.machinery.ids"
PACKAGE = "tests.support.models"
MAX_DOC = 88
LINE = 100

# Names a field must not take as-is: keywords, builtins used in annotations, BaseModel API.
_BASEMODEL_ATTRS = {
    "copy", "dict", "json", "schema", "schema_json", "validate", "construct", "fields",
    "parse_obj", "parse_raw", "parse_file", "from_orm", "update_forward_refs", "to_wire",
}
_RESERVED = set(keyword.kwlist) | {"bool", "int", "float", "str", "list", "dict", "bytes"}
_RESERVED |= _BASEMODEL_ATTRS

_SCALAR_TYPES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}
_VERB = re.compile(r"^[a-z]+s$")
_ADVERB = re.compile(r"^[a-z]+ly$")
_SENTENCES = re.compile(r"[^.]*\.")
_GATING = re.compile(r"\brequires\b|\bonly\b|toggled by")  # not "when the gate is on, ..."
_GATE_NAMES = re.compile(r"\b([A-Z][A-Za-z0-9]+(?:,? and [A-Z][A-Za-z0-9]+)*) feature gates?")


def _isort_key(name: str) -> tuple[int, str]:
    """isort's order of imported names: CONSTANTS, then Classes, then functions and others."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


def snake(name: str) -> str:
    """snake_case of a JSON field name, keeping acronyms whole (shareID -> share_id)."""
    s = re.sub(r"([A-Z]{2,})s(?=[A-Z]|$)", lambda m: m[1][0] + m[1][1:].lower() + "s", name)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    s = s.lower()
    return s + "_" if s in _RESERVED or s.startswith("model_") else s


def _first_sentence(text: str) -> str:
    para = text.strip().split("\n\n")[0].replace("\n", " ")
    protected = para.replace("e.g. ", "e.g.\0").replace("i.e. ", "i.e.\0")
    protected = re.sub(r"\b([A-Z])\. ", "\\1.\0", protected)
    sentences = re.split(r"(?<=[.!?])\s+", protected)
    sentence = sentences[0]
    if len(sentence) < 16 and len(sentences) > 1:  # "Required." says little on its own
        sentence += " " + sentences[1]
    return sentence.replace("\0", " ").strip()


def _drop_subject(sentence: str, names: tuple[str, ...]) -> str:
    """'Driver identifies the driver.' -> 'Identifies the driver.'"""
    words = sentence.split(" ")
    lowered = {n.lower() for n in names if n}
    first = words[0]
    camel = re.fullmatch(r"[A-Z][A-Za-z0-9]*[A-Z][A-Za-z0-9]*", first) is not None
    if len(words) < 3 or not (first.lower() in lowered or camel):
        return sentence
    start = 2 if _ADVERB.match(words[1]) and len(words) > 3 else 1
    if not _VERB.match(words[start]):
        return sentence
    if words[start] in ("is", "are"):
        start += 1
    return " ".join(words[start:])


def _shorten(sentence: str, limit: int) -> str:
    """The sentence fitted to `limit`: asides in parentheses dropped, then cut with '...'."""
    sentence = sentence.rstrip(":")
    if not sentence.endswith((".", "?", "!")):
        sentence += "."
    while len(sentence) > limit and "(" in sentence:
        shorter = re.sub(r" ?\([^()]*\)", "", sentence, count=1)
        if shorter == sentence:
            break
        sentence = shorter
    if len(sentence) <= limit:
        return sentence
    cut = sentence[: limit - 3]
    return cut[: cut.rfind(" ")].rstrip(" ,;:(") + "..."


def gates_of(text: str) -> tuple[str, list[str]]:
    """The maturity ("alpha", "beta" or "") and feature gates that gate a field or kind."""
    gates: list[str] = []
    stage = ""
    for sentence in _SENTENCES.findall(text.replace("\n", " ")):
        if "feature gate" not in sentence or not _GATING.search(sentence):
            continue
        lowered = sentence.lower()
        stage = stage or ("alpha" if "alpha" in lowered else "beta" if "beta" in lowered else "")
        for names in _GATE_NAMES.findall(sentence):
            gates += [g for g in re.split(r",? and ", names) if g not in gates]
    return stage, gates


def summarize(description: str, *names: str, override: str | None = None) -> str:
    """A one-line docstring from an upstream description, plus a line naming its gates."""
    if not description.strip() and not override:
        return ""
    summary = override or _drop_subject(_first_sentence(description), names)
    summary = _shorten(summary[:1].upper() + summary[1:], MAX_DOC)
    stage, gates = gates_of(description)
    if not gates:
        return summary
    note = f"{'Feature gate' if len(gates) == 1 else 'Feature gates'}: {', '.join(gates)}"
    note += f" ({stage})." if stage else "."
    return f"{summary}\n\n{note}"


def docstring(text: str, indent: str) -> list[str]:
    """Lines of a triple-quoted docstring."""
    if not text:
        return []
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if "\n" not in text and len(indent) + len(text) + 6 <= LINE:
        return [f'{indent}"""{text}"""']
    lines: list[str] = []
    for i, para in enumerate(text.split("\n\n")):
        if i:
            lines.append("")
        lines.extend(textwrap.wrap(para, LINE - len(indent) - 3) or [""])
    out = [f'{indent}"""{lines[0]}']
    out += [f"{indent}{line}" if line else "" for line in lines[1:]]
    out.append(f'{indent}"""')
    return out


@dataclass
class Module:
    """The classes of one output module, plus what they import."""

    spec: ModuleSpec
    definitions: list[str] = field(default_factory=list)
    imports: dict[str, set[str]] = field(default_factory=dict)

    def need(self, module: str, name: str) -> None:
        """Record an import of `name` from `module`."""
        self.imports.setdefault(module, set()).add(name)


class Generator:
    """Walks the schemas from ROOT_KINDS and renders one module per group-version."""

    def __init__(self, schemas: Schemas) -> None:
        self.schemas = schemas
        self.defs = schemas.definitions
        self.modules = {m.name: Module(m) for m in MODULES}
        self.used_docs: set[str] = set()
        self.used_identities: set[str] = set()

    def doc(self, mod: Module, key: str) -> str | None:
        """The hand-written summary of a class or field, if DOCS has one."""
        full = f"{mod.spec.name}:{key}"
        self.used_docs.add(full)
        return DOCS.get(full)

    def identity(self, mod: Module, key: str, ann: str) -> str:
        """`ann`, or the NewType IDENTITIES gives the field (which must be a plain string)."""
        full = f"{mod.spec.name}:{key}"
        new_type = IDENTITIES.get(full)
        if new_type is None:
            return ann
        if ann != "str":
            raise SystemExit(f"gen_models: {full} is {ann}, not str; fix IDENTITIES")
        self.used_identities.add(full)
        mod.need(IDS_MODULE, new_type)
        return new_type

    def module_of(self, name: str) -> ModuleSpec:
        """The output module of a (non-scalar) definition."""
        for spec in MODULES:
            if name.startswith(spec.prefix) and "." not in name[len(spec.prefix):]:
                return spec
        raise SystemExit(f"gen_models: no module for definition {name}; extend MODULES")

    @staticmethod
    def short(name: str) -> str:
        """Class name of a definition (its last dotted component)."""
        return name.rsplit(".", 1)[1]

    def roots(self) -> list[str]:
        """Definition names of the root kinds and their lists."""
        out = []
        for group, version, kind in ROOT_KINDS:
            for k in (kind, kind + "List"):
                name = self.schemas.name_for_gvk(group, version, k)
                if name is None:
                    raise SystemExit(f"gen_models: the schemas lack {group}/{version} {k}")
                out.append(name)
        return out

    @staticmethod
    def refs(node: Any) -> list[str]:
        """Definition names referenced anywhere inside a schema node, in document order."""
        found: list[str] = []

        def walk(x: Any) -> None:
            if isinstance(x, dict):
                ref = x.get("$ref")
                if isinstance(ref, str):
                    found.append(ref.removeprefix(REF_PREFIX))
                for v in x.values():
                    walk(v)
            elif isinstance(x, list):
                for v in x:
                    walk(v)

        walk(node)
        return found

    def order(self) -> list[str]:
        """Every definition to render, dependencies before dependents, ties by name."""
        ordered: list[str] = []
        state: dict[str, str] = {}

        def visit(name: str) -> None:
            if name in SCALARS or state.get(name) == "done":
                return
            if state.get(name) == "active":
                raise SystemExit(f"gen_models: reference cycle through {name}")
            state[name] = "active"
            for dep in sorted(set(self.refs(self.defs[name].get("properties", {})))):
                if dep != name:  # a self-reference resolves while the class is built
                    visit(dep)
            state[name] = "done"
            ordered.append(name)

        for name in sorted(self.closure()):
            visit(name)
        return ordered

    def closure(self) -> set[str]:
        """The root kinds and every definition they reach (scalars excluded)."""
        seen: set[str] = set()
        todo = list(self.roots())
        while todo:
            name = todo.pop()
            if name in seen or name in SCALARS:
                continue
            seen.add(name)
            todo.extend(self.refs(self.defs[name]))
        return seen

    def annotation(self, node: dict[str, Any], mod: Module) -> str:
        """The Python type of a property schema, recording the imports it needs."""
        ref = node.get("$ref")
        if ref is None and len(node.get("allOf", ())) == 1:
            ref = node["allOf"][0].get("$ref")
        if ref is not None:
            name = ref.removeprefix(REF_PREFIX)
            if name in SCALARS:
                mod.need(BASE_MODULE, SCALARS[name])
                return SCALARS[name]
            spec = self.module_of(name)
            if spec.name != mod.spec.name:
                mod.need(f"{PACKAGE}.{spec.name}", self.short(name))
            return self.short(name)
        kinds = types_of(node)
        if kinds == {"array"}:
            return f"list[{self.annotation(node.get('items', {}), mod)}]"
        if kinds == {"object"}:
            extra = node.get("additionalProperties")
            if isinstance(extra, dict):
                return f"dict[str, {self.annotation(extra, mod)}]"
            mod.need("typing", "Any")
            return "dict[str, Any]"
        if len(kinds) == 1 and next(iter(kinds)) in _SCALAR_TYPES:
            return _SCALAR_TYPES[next(iter(kinds))]
        mod.need("typing", "Any")
        return "Any"

    def render_class(self, name: str, mod: Module) -> list[str]:
        """Source lines of one model class."""
        schema = self.defs[name]
        cls = self.short(name)
        lines = [f"class {cls}(K8sModel):"]
        doc = summarize(schema.get("description", ""), cls, override=self.doc(mod, cls))
        doc = doc or f"{cls} (no upstream description)."
        lines += docstring(doc, "    ")
        for gvk in schema.get("x-kubernetes-group-version-kind", ())[:1]:
            mod.need("typing", "ClassVar")
            api_version = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
            lines += [
                "",
                f'    API_VERSION: ClassVar[str | None] = "{api_version}"',
                f'    KIND: ClassVar[str | None] = "{gvk["kind"]}"',
            ]
        required = set(schema.get("required", ()))
        props: dict[str, Any] = schema.get("properties", {})
        used: dict[str, str] = {}
        for json_name in sorted(props):
            prop = props[json_name]
            attr = snake(json_name)
            if attr in used:
                raise SystemExit(f"gen_models: {cls}.{json_name} and .{used[attr]} -> {attr}")
            used[attr] = json_name
            ann = self.identity(mod, f"{cls}.{json_name}", self.annotation(prop, mod))
            if json_name in required:
                value = f'Field(alias="{json_name}")' if attr != json_name else ""
            else:
                ann += " | None"
                value = f'Field(None, alias="{json_name}")' if attr != json_name else "None"
            if value.startswith("Field"):
                mod.need("pydantic", "Field")
            head = f"    {attr}: {ann}"
            line = f"{head} = {value}" if value else head
            if len(line) > LINE:
                inner = value.removeprefix("Field(").removesuffix(")")
                line = f"{head} = Field(\n        {inner}\n    )"
            lines += ["", line]
            override = self.doc(mod, f"{cls}.{json_name}")
            doc = summarize(prop.get("description", ""), json_name, override=override)
            lines += docstring(doc, "    ")
        return lines

    def render(self) -> dict[str, str]:
        """File name -> source text of every generated module."""
        self.modules = {m.name: Module(m) for m in MODULES}
        self.used_docs = set()
        self.used_identities = set()
        for name in self.order():
            self.modules[self.module_of(name).name].definitions.append(name)
        out: dict[str, str] = {}
        for mod in self.modules.values():
            mod.need(BASE_MODULE, "K8sModel")
            body: list[str] = []
            for name in mod.definitions:
                body += ["", ""] + self.render_class(name, mod)
            header = [
                f'"""Models for {mod.spec.title}.',
                "",
                "Generated by scripts/gen_models.py from the Kubernetes 1.37 schemas; do not edit.",
                '"""',
                "",
                "from __future__ import annotations",
                "",
            ]
            header += self.render_imports(mod)
            header += [
                f'SCHEMA_PREFIX = "{mod.spec.prefix}"',
                '"""Schema name of a class defined here: SCHEMA_PREFIX + its name."""',
            ]
            out[f"{mod.spec.name}.py"] = "\n".join(header + body) + "\n"
        for table, keys, used in (("DOCS", DOCS, self.used_docs),
                                  ("IDENTITIES", IDENTITIES, self.used_identities)):
            stale = sorted(set(keys) - used)
            if stale:
                raise SystemExit(f"gen_models: {table} keys match nothing: {', '.join(stale)}")
        return out

    @staticmethod
    def render_imports(mod: Module) -> list[str]:
        """Import lines grouped as isort does: stdlib, third party, first party."""
        groups: list[list[str]] = [[], [], []]
        for module in sorted(mod.imports):
            names = sorted(mod.imports[module], key=_isort_key)
            group = 0 if module == "typing" else 1 if module == "pydantic" else 2
            line = f"from {module} import {', '.join(names)}"
            if len(line) > LINE:
                line = f"from {module} import (\n" + "".join(f"    {n},\n" for n in names) + ")"
            groups[group].append(line)
        lines: list[str] = []
        for imports in groups:
            if imports:
                lines += imports + [""]
        return lines


def render_all() -> dict[str, str]:
    """File name (inside fakeapi/models/) -> generated source."""
    return Generator(get_schemas()).render()


def main(argv: list[str] | None = None) -> int:
    """Write the generated modules, or with --check report whether they are current."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only compare, write nothing")
    args = parser.parse_args(argv)
    stale = []
    for file_name, text in render_all().items():
        path = OUT_DIR / file_name
        if path.exists() and path.read_text() == text:
            continue
        stale.append(file_name)
        if not args.check:
            path.write_text(text)
    if args.check and stale:
        print("gen_models: out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    for file_name in stale:
        print(f"gen_models: wrote fakeapi/models/{file_name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
