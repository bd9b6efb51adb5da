"""Strategies of the everyday kinds: workloads (apps/v1, batch/v1 Job), the `scale`
subresource, Services (ClusterIP and NodePort allocation) and Secrets."""

from __future__ import annotations

import base64
import ipaddress
from typing import Any

from fakeapi.machinery.errors import Cause, bad_request, invalid
from fakeapi.machinery.field import child, forbidden, immutable, not_supported, required
from fakeapi.machinery.selectors import label_selector_matches
from fakeapi.registry.context import RequestContext
from fakeapi.registry.rest import Obj, SpecStrategy, Strategy, ViewStrategy

SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")
"""Same as kubeadm's default --service-cluster-ip-range; `kubernetes` is its first address."""
NODE_PORTS = range(30000, 32768)
"""Same as upstream's default --service-node-port-range."""


def selector_string(selector: Any) -> str:
    """A LabelSelector as labels.Selector.String() prints it (Scale's status.selector)."""
    if not isinstance(selector, dict):
        return ""
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for req in selector.get("matchExpressions") or []:
        op, key = req.get("operator"), req.get("key")
        values = ",".join(sorted(req.get("values") or []))
        parts.append({"In": f"{key} in ({values})", "NotIn": f"{key} notin ({values})",
                      "Exists": f"{key}", "DoesNotExist": f"!{key}"}.get(str(op), ""))
    return ",".join(sorted(p for p in parts if p))


class PodControllerStrategy(SpecStrategy):
    """Deployments, ReplicaSets, StatefulSets, DaemonSets, as upstream's apps/v1
    validation: a selector is required, matches the template's labels, and never changes."""

    def validate_spec(self, obj: Obj) -> list[Cause]:
        """The selector and template rules."""
        spec = obj.get("spec") or {}
        selector = spec.get("selector")
        if not isinstance(selector, dict) or not (selector.get("matchLabels")
                                                  or selector.get("matchExpressions")):
            return [required("spec.selector")]
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        causes = []
        if not label_selector_matches(selector, labels):
            causes.append(Cause("spec.template.metadata.labels", "Invalid value: "
                                f"map[string]string{_go_map(labels)}: `selector` does not "
                                "match template `labels`"))
        if not ((spec.get("template") or {}).get("spec") or {}).get("containers"):
            causes.append(required("spec.template.spec.containers"))
        replicas = spec.get("replicas")
        if isinstance(replicas, int) and replicas < 0:
            causes.append(Cause("spec.replicas", f"Invalid value: {replicas}: must be greater "
                                "than or equal to 0"))
        return causes

    def validate_spec_update(self, new: Obj, old: Obj) -> list[Cause]:
        """Same as upstream apps/v1: spec.selector is immutable."""
        causes = self.validate_spec(new)
        selector = (new.get("spec") or {}).get("selector")
        if selector != (old.get("spec") or {}).get("selector"):
            causes.append(immutable("spec.selector", selector))
        return causes


def _go_map(labels: dict[str, Any]) -> str:
    return "{" + ", ".join(f'"{k}":"{v}"' for k, v in sorted(labels.items())) + "}"


JOB_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"


class JobStrategy(SpecStrategy):
    """Same as upstream's job strategy: a generated selector (the job's uid and name labels,
    old and new spellings) unless `manualSelector`; pods restart OnFailure or Never."""

    def prepare_for_create(self, obj: Obj, ctx: RequestContext) -> None:
        """Status reset, the selector and template labels generated from the uid."""
        super().prepare_for_create(obj, ctx)
        spec = obj.setdefault("spec", {})
        if spec.get("manualSelector"):
            return
        meta = obj["metadata"]
        labels = {JOB_UID_LABEL: meta["uid"], JOB_NAME_LABEL: meta["name"],
                  "controller-uid": meta["uid"], "job-name": meta["name"]}
        spec["selector"] = {"matchLabels": {JOB_UID_LABEL: meta["uid"]}}
        template = spec.setdefault("template", {})
        if isinstance(template, dict):
            tmeta = template.setdefault("metadata", {})
            tmeta["labels"] = {**(tmeta.get("labels") or {}), **labels}

    def validate_spec(self, obj: Obj) -> list[Cause]:
        """The restart policy and the non-negative counts."""
        spec = obj.get("spec") or {}
        pod = (spec.get("template") or {}).get("spec") or {}
        causes = []
        policy = pod.get("restartPolicy")
        if policy not in ("OnFailure", "Never"):
            causes.append(not_supported("spec.template.spec.restartPolicy", policy,
                                        ["OnFailure", "Never"]))
        if not pod.get("containers"):
            causes.append(required("spec.template.spec.containers"))
        for field in ("parallelism", "completions", "backoffLimit", "activeDeadlineSeconds"):
            value = spec.get(field)
            if isinstance(value, int) and value < 0:
                causes.append(Cause(child("spec", field), f"Invalid value: {value}: must be "
                                    "greater than or equal to 0"))
        return causes

    def validate_spec_update(self, new: Obj, old: Obj) -> list[Cause]:
        """Same as upstream: the selector and (outside suspension) the template are
        immutable; completions only change with parallelism in an Indexed job."""
        causes = self.validate_spec(new)
        spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        if spec.get("selector") != old_spec.get("selector"):
            causes.append(immutable("spec.selector", spec.get("selector")))
        if spec.get("completions") != old_spec.get("completions") and spec.get(
                "completionMode") != "Indexed":
            causes.append(immutable("spec.completions", spec.get("completions")))
        return causes


class ScaleStrategy(ViewStrategy):
    """`scale` as an autoscaling/v1 Scale: spec.replicas of the object, its status.replicas
    and its selector as a string (what `kubectl scale` and autoscalers read and write)."""

    view_kind = "Scale"

    def view(self, obj: Obj) -> Obj:
        """The Scale of a workload."""
        meta = obj["metadata"]
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        selector = spec.get("selector")
        if self.kind.kind == "ReplicationController":
            selector = {"matchLabels": selector or {}}
        keep = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
        return {"kind": "Scale", "apiVersion": "autoscaling/v1",
                "metadata": {k: meta[k] for k in keep if k in meta},
                "spec": {"replicas": int(spec.get("replicas") or 0)},
                "status": {"replicas": int(status.get("replicas") or 0),
                           "selector": selector_string(selector)}}

    def unview(self, body: Obj, old: Obj) -> Obj:
        """The workload with the Scale's replicas (a resourceVersion in it is a
        precondition)."""
        name = old["metadata"]["name"]
        if body.get("kind") not in (None, "Scale"):
            raise bad_request(f"Scale in version \"v1\" cannot be handled as a Scale: the "
                              f"object kind is {body.get('kind')}")
        replicas = (body.get("spec") or {}).get("replicas", 0)
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise invalid("Scale", "autoscaling", name, [Cause(
                "spec.replicas", f"Invalid value: {replicas}: must be greater than or equal "
                "to 0")])
        rv = (body.get("metadata") or {}).get("resourceVersion", "")
        return {**old, "metadata": {**old["metadata"], "resourceVersion": rv},
                "spec": {**(old.get("spec") or {}), "replicas": replicas}}

    def prepare_for_update(self, new: Obj, old: Obj, ctx: RequestContext) -> None:
        """`unview` already kept everything but spec.replicas."""


class SecretStrategy(Strategy):
    """Same as upstream: `stringData` is written into `data` (base64); an immutable secret's
    data and type never change; a secret's type never changes."""

    def prepare_for_create(self, obj: Obj, ctx: RequestContext) -> None:
        """Fold stringData into data."""
        _fold_string_data(obj)

    def prepare_for_update(self, new: Obj, old: Obj, ctx: RequestContext) -> None:
        """Fold stringData into data."""
        _fold_string_data(new)

    def validate_update(self, new: Obj, old: Obj, ctx: RequestContext) -> list[Cause]:
        """Type always, data too once immutable."""
        causes = []
        if new.get("type") != old.get("type"):
            causes.append(immutable("type", new.get("type")))
        if old.get("immutable"):
            if new.get("data") != old.get("data"):
                causes.append(forbidden("data", "field is immutable when `immutable` is set"))
            if not new.get("immutable"):
                causes.append(forbidden("immutable", "field is immutable when `immutable` is "
                                        "set"))
        return causes


def _fold_string_data(obj: Obj) -> None:
    plain = obj.pop("stringData", None)
    if isinstance(plain, dict) and plain:
        data = dict(obj.get("data") or {})
        for key, value in plain.items():
            data[key] = base64.b64encode(str(value).encode()).decode()
        obj["data"] = data


class ServiceStrategy(Strategy):
    """Same as upstream's Service REST: a ClusterIP allocated from the service range, node
    ports for NodePort and LoadBalancer services, allocated values kept on update and
    immutable."""

    def prepare_for_create(self, obj: Obj, ctx: RequestContext) -> None:
        """Status reset; allocate the IP and node ports."""
        super().prepare_for_create(obj, ctx)
        spec = obj.setdefault("spec", {})
        if spec.get("type") == "ExternalName":
            return
        ip = spec.get("clusterIP") or (spec.get("clusterIPs") or [None])[0]
        if not ip:
            ip = self._free_ip()
        spec["clusterIP"] = ip
        spec["clusterIPs"] = [ip]
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        if spec.get("type") in ("NodePort", "LoadBalancer"):
            used = self._used_ports()
            for port in spec.get("ports") or []:
                if isinstance(port, dict) and not port.get("nodePort"):
                    port["nodePort"] = next(p for p in NODE_PORTS if p not in used)
                    used.add(port["nodePort"])

    def _services(self) -> list[Obj]:
        return self.env.scan(self.kind.resource_id, None)

    def _free_ip(self) -> str:
        used = {(s.get("spec") or {}).get("clusterIP") for s in self._services()}
        for host in SERVICE_CIDR.hosts():
            if str(host) not in used:
                return str(host)
        raise bad_request("failed to allocate a serviceIP: range is full")

    def _used_ports(self) -> set[int]:
        return {int(p["nodePort"]) for s in self._services()
                for p in (s.get("spec") or {}).get("ports") or []
                if isinstance(p, dict) and p.get("nodePort")}

    def prepare_for_update(self, new: Obj, old: Obj, ctx: RequestContext) -> None:
        """Same as upstream patchAllocatedValues: unset allocated values keep the old ones."""
        super().prepare_for_update(new, old, ctx)
        spec, old_spec = new.setdefault("spec", {}), old.get("spec") or {}
        for field in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
            if not spec.get(field) and old_spec.get(field):
                spec[field] = old_spec[field]
        old_ports = {(p.get("port"), p.get("protocol")): p.get("nodePort")
                     for p in old_spec.get("ports") or [] if isinstance(p, dict)}
        for port in spec.get("ports") or []:
            if isinstance(port, dict) and not port.get("nodePort"):
                found = old_ports.get((port.get("port"), port.get("protocol")))
                if found and spec.get("type") in ("NodePort", "LoadBalancer"):
                    port["nodePort"] = found

    def validate(self, obj: Obj, ctx: RequestContext) -> list[Cause]:
        """Ports: required unless headless or ExternalName, in range, named when several."""
        spec = obj.get("spec") or {}
        kind = spec.get("type") or "ClusterIP"
        causes = []
        if kind not in ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName"):
            causes.append(not_supported("spec.type", kind, ["ClusterIP", "ExternalName",
                                                            "LoadBalancer", "NodePort"]))
        ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
        if not ports and kind != "ExternalName" and spec.get("clusterIP") != "None":
            causes.append(required("spec.ports"))
        for i, port in enumerate(ports):
            number = port.get("port")
            if not isinstance(number, int) or not 1 <= number <= 65535:
                causes.append(Cause(f"spec.ports[{i}].port", f"Invalid value: {number}: must "
                                    "be between 1 and 65535, inclusive"))
            if len(ports) > 1 and not port.get("name"):
                causes.append(required(f"spec.ports[{i}].name"))
        if kind == "ExternalName" and not spec.get("externalName"):
            causes.append(required("spec.externalName"))
        return causes

    def validate_update(self, new: Obj, old: Obj, ctx: RequestContext) -> list[Cause]:
        """The create rules, and an allocated ClusterIP never changes."""
        causes = self.validate(new, ctx)
        ip, old_ip = (new.get("spec") or {}).get("clusterIP"), (old.get("spec") or {}).get(
            "clusterIP")
        if old_ip and ip != old_ip and (new.get("spec") or {}).get("type") != "ExternalName":
            causes.append(Cause("spec.clusterIPs[0]", f"Invalid value: []string{{\"{ip}\"}}: "
                                "may not change once set"))
        return causes
