"""Our manifests of the dra-example-driver's demos (demo/examples at commit 31914ce), built
from the compact items of tests/data/kubelet_emu/demos.yaml: the same namespaces, names,
containers, commands, claims and requests as the example's YAML, at the API versions
Kubernetes 1.37 serves (the device-taint demos apply upstream's files themselves)."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
DEMO = "export; trap 'exit 0' TERM; sleep 9999 & wait"
ADMIN_SCRIPT = """export
echo "=== DRA Admin Access Demo ==="
echo "DRA Admin Access: $DRA_ADMIN_ACCESS"
echo ""
echo "GPU Environment Variables:"
env | grep GPU_ | sort
echo ""
echo "=== Sleeping to allow inspection ==="
trap 'exit 0' TERM
sleep 9999 & wait
"""
BINDING_SCRIPT = """export
echo "=== DRA Device Binding Conditions Demo ==="
echo ""
echo "=== Sleeping to allow inspection ==="
trap 'exit 0' TERM
sleep 9999 & wait
"""
SCRIPTS = {"demo": DEMO, "admin": ADMIN_SCRIPT, "binding": BINDING_SCRIPT}


def _requests(spec: Obj, device_class: str) -> list[Obj]:
    out = []
    for r in spec["requests"]:
        if "firstAvailable" in r:
            out.append({"name": r["name"], "firstAvailable": [
                {"name": s["name"], "deviceClassName": device_class,
                 **({"selectors": [{"cel": {"expression": e}} for e in s["selectors"]]}
                    if s.get("selectors") else {})} for s in r["firstAvailable"]]})
            continue
        exactly: Obj = {"deviceClassName": device_class}
        for key in ("count", "allocationMode", "adminAccess"):
            if key in r:
                exactly[key] = r[key]
        if r.get("selectors"):
            exactly["selectors"] = [{"cel": {"expression": e}} for e in r["selectors"]]
        if r.get("capacity"):
            exactly["capacity"] = {"requests": r["capacity"]}
        out.append({"name": r["name"], "exactly": exactly})
    return out


def _claim_spec(item: Obj, driver: str) -> Obj:
    devices: Obj = {"requests": _requests(item, item.get("class", driver))}
    if item.get("config"):
        devices["config"] = [{"requests": c["requests"], "opaque": {
            "driver": driver, "parameters": {
                "apiVersion": "gpu.resource.example.com/v1alpha1", "kind": "GpuConfig",
                "sharing": c["sharing"]}}} for c in item["config"]]
    return {"devices": devices}


def _pod_claim(pc: Obj) -> Obj:
    return {"name": pc["name"], **({"resourceClaimTemplateName": pc["template"]}
                                   if "template" in pc else {"resourceClaimName": pc["claim"]})}


def _container(entry: str, claims: list[Obj], script: str, limits: Obj | None) -> Obj:
    name, _, request = entry.partition("/")
    resources: Obj = {}
    if claims:
        [pc] = claims
        resources["claims"] = [{"name": pc["name"], **({"request": request} if request else {})}]
    if limits:
        resources["limits"] = limits
    return {"name": name, "image": "ubuntu:22.04", "command": ["bash", "-c"], "args": [script],
            "resources": resources}


def _pod_spec(item: Obj) -> Obj:
    claims = item.get("claims") or []
    script = SCRIPTS[item.get("script", "demo")]
    spec: Obj = {"containers": [_container(c, claims, script, item.get("limits"))
                                for c in item["containers"]]}
    if claims:
        spec["resourceClaims"] = [_pod_claim(pc) for pc in claims]
    if item.get("init"):
        spec["initContainers"] = [_container(c, claims, "export", None) for c in item["init"]]
    if item.get("group"):
        spec["schedulingGroup"] = {"podGroupName": item["group"]}
    return spec


def objects(items: list[Obj], ns: str, driver: str) -> list[Obj]:
    """The objects of a scenario's (or step's) items, as the example's YAML has them."""
    docs: list[Obj] = []
    for item in items:
        meta = {"name": item["name"], "namespace": ns}
        kind = item["kind"]
        if kind == "ResourceClaimTemplate":
            docs.append({"apiVersion": "resource.k8s.io/v1", "kind": kind,
                         "metadata": meta, "spec": {"spec": _claim_spec(item, driver)}})
        elif kind == "ResourceClaim":
            docs.append({"apiVersion": "resource.k8s.io/v1", "kind": kind,
                         "metadata": meta, "spec": _claim_spec(item, driver)})
        elif kind == "PodGroup":  # scheduling.k8s.io/v1alpha2 in the demo: 1.37 serves v1beta1
            docs.append({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": kind,
                         "metadata": meta, "spec": {
                             "schedulingPolicy": {"gang": {"minCount": item["minCount"]}},
                             "resourceClaims": [_pod_claim(pc) for pc in item["claims"]]}})
        elif kind == "Deployment":
            app = {"app": item["name"]}
            docs.append({"apiVersion": "apps/v1", "kind": kind, "metadata": meta, "spec": {
                "replicas": item["replicas"], "selector": {"matchLabels": app},
                "template": {"metadata": {"labels": app}, "spec": _pod_spec(item)}}})
        else:
            labels = item.get("labels", {"app": "pod"})
            docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {
                **meta, **({"labels": labels} if labels else {})}, "spec": _pod_spec(item)})
    return docs


def manifest(scenario: Obj) -> list[Obj]:
    """The scenario's namespace and objects."""
    ns = scenario["name"]
    labels = {"resource.kubernetes.io/admin-access": "true"} if scenario.get(
        "admin_namespace") else {}
    return [{"apiVersion": "v1", "kind": "Namespace",
             "metadata": {"name": ns, **({"labels": labels} if labels else {})}},
            *objects(scenario["manifest"], ns, claim_driver(scenario))]


def claim_driver(scenario: Obj) -> str:
    """The driver whose devices the scenario's claims ask for."""
    return str(scenario.get("driver", "gpu.example.com"))
