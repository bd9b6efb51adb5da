"""Strategies of core/v1 kinds with rules beyond the defaults."""

from __future__ import annotations

import random
from typing import Any

from fakeapi.machinery import names
from fakeapi.machinery.errors import Cause, bad_request, conflict, field_required, forbidden
from fakeapi.machinery.timestamps import rfc3339
from fakeapi.registry.context import RequestContext
from fakeapi.registry.rest import CreateSubresourceStrategy, Obj, StatusStrategy, Strategy

NAMESPACE_FINALIZER = "kubernetes"
IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})
"""Same as upstream's NamespaceLifecycle admission: namespaces that may not be deleted."""
DEFAULT_TERMINATION_GRACE = 30


class NamespaceStrategy(Strategy):
    """Namespaces start Active with the `kubernetes` finalizer; delete makes them Terminating."""

    def prepare_for_create(self, obj: Obj, ctx: RequestContext) -> None:
        """Same as upstream: phase Active, spec.finalizers = [kubernetes]."""
        obj["status"] = {"phase": "Active"}
        spec = obj.setdefault("spec", {})
        finalizers = list(spec.get("finalizers") or [])
        if NAMESPACE_FINALIZER not in finalizers:
            finalizers.append(NAMESPACE_FINALIZER)
        spec["finalizers"] = finalizers
        obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = (
            obj["metadata"]["name"])

    def prepare_for_update(self, new: Obj, old: Obj, ctx: RequestContext) -> None:
        """spec.finalizers change only through /finalize; status only through /status."""
        super().prepare_for_update(new, old, ctx)
        new["spec"] = {**new.get("spec", {}), "finalizers": old.get("spec", {}).get("finalizers")}
        if new["spec"]["finalizers"] is None:
            del new["spec"]["finalizers"]
        new["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = (
            new["metadata"]["name"])

    def admit_delete(self, obj: Obj, ctx: RequestContext) -> None:
        """Same as upstream's NamespaceLifecycle admission: `default`, `kube-system` and
        `kube-public` may not be deleted (403)."""
        name = obj["metadata"]["name"]
        if name in IMMORTAL_NAMESPACES:
            raise forbidden(f'namespaces "{name}" is forbidden: this namespace may not be '
                            "deleted", name=name, kind="namespaces")

    def on_delete(self, obj: Obj) -> Obj | None:
        """Deleting a namespace marks it Terminating; the namespace controller empties it."""
        if obj.get("spec", {}).get("finalizers") or obj["metadata"].get("finalizers"):
            return {**obj, "status": {**obj.get("status", {}), "phase": "Terminating"}}
        return None


    def finalizers_pending(self, obj: Obj) -> bool:
        """Namespaces also wait for spec.finalizers (the namespace controller's)."""
        return super().finalizers_pending(obj) or bool(obj.get("spec", {}).get("finalizers"))


class NamespaceFinalizeStrategy(StatusStrategy):
    """`namespaces/NAME/finalize`: only spec.finalizers changes."""

    def prepare_for_update(self, new: Obj, old: Obj, ctx: RequestContext) -> None:
        """Take spec.finalizers from the request, everything else from the stored object."""
        finalizers = new.get("spec", {}).get("finalizers")
        rv = new["metadata"].get("resourceVersion", "")
        new.clear()
        new.update(old)
        new["metadata"] = {**old["metadata"], "resourceVersion": rv}
        new["spec"] = {**old.get("spec", {}), "finalizers": finalizers or []}


class NodeStrategy(Strategy):
    """Same as upstream: nodes may set every field, status included, on create."""

    def prepare_for_create(self, obj: Obj, ctx: RequestContext) -> None:
        """Nothing is cleared."""


class PodStrategy(Strategy):
    """Pods start Pending, with what upstream's admission plugins add; containers are
    required."""

    def prepare_for_create(self, obj: Obj, ctx: RequestContext) -> None:
        """Same as upstream: status reset to phase Pending with a QoS class, then the
        ServiceAccount, Priority and DefaultTolerationSeconds admission defaults."""
        spec = obj.setdefault("spec", {})
        obj["status"] = {"phase": "Pending", "qosClass": _qos_class(spec)}
        spec.setdefault("schedulerName", "default-scheduler")
        account = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
        spec["serviceAccountName"] = spec["serviceAccount"] = account
        found = self.env.lookup("serviceaccounts", obj["metadata"].get("namespace", ""), account)
        if automounts(spec, found):
            mount_api_access(spec, obj["metadata"].get("uid", ""))
        self._admit_priority(obj["metadata"].get("name", ""), spec)
        spec["tolerations"] = default_tolerations(spec.get("tolerations"))

    def _admit_priority(self, name: str, spec: Obj) -> None:
        """Same as upstream's Priority admission: the class's value and preemption policy
        (403 for a class that doesn't exist); no class means priority 0."""
        class_name = spec.get("priorityClassName")
        value, policy = 0, "PreemptLowerPriority"
        if class_name:
            found = self.env.lookup(PRIORITY_CLASSES, "", class_name)
            if found is None and class_name in SYSTEM_PRIORITIES:
                found = {"value": SYSTEM_PRIORITIES[class_name]}
            if found is None:
                raise forbidden(f'pods "{name}" is forbidden: no PriorityClass with name '
                                f"{class_name} was found", name=name, kind="pods")
            value = int(found.get("value") or 0)
            policy = found.get("preemptionPolicy") or policy
        spec["priority"] = value
        spec.setdefault("preemptionPolicy", policy)

    def validate(self, obj: Obj, ctx: RequestContext) -> list[Cause]:
        """The minimal structural pod rules: at least one named container with an image."""
        spec = obj.get("spec") or {}
        containers = spec.get("containers") or []
        if not containers:
            return [field_required("spec.containers")]
        causes = []
        for i, c in enumerate(containers):
            if not c.get("name"):
                causes.append(field_required(f"spec.containers[{i}].name"))
            if not c.get("image"):
                causes.append(field_required(f"spec.containers[{i}].image"))
        return causes


    def grace_period(self, obj: Obj, options: Obj) -> int | None:
        """Same as upstream's pod CheckGracefulDelete: the DeleteOptions' gracePeriodSeconds,
        else spec.terminationGracePeriodSeconds (30 by default); 0 for a pod no node runs
        (unscheduled) or one already Succeeded or Failed."""
        spec = obj.get("spec") or {}
        if not spec.get("nodeName"):
            return 0
        if (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return 0
        period = options.get("gracePeriodSeconds")
        if period is None:
            period = spec.get("terminationGracePeriodSeconds")
        if period is None:
            period = DEFAULT_TERMINATION_GRACE
        try:
            seconds = int(period)
        except (TypeError, ValueError):
            raise bad_request(f"invalid gracePeriodSeconds: {period!r}") from None
        return 1 if seconds < 0 else seconds  # upstream: a negative period means 1


class PodBindingStrategy(CreateSubresourceStrategy):
    """`pods/NAME/binding`: bind once, like upstream's BindingREST (not through the pod's
    update strategy, so the generation stays; 409 Conflict when already bound)."""

    body_kind = "Binding"

    def validate(self, body: Obj) -> list[Cause]:
        """Same as upstream: the binding names its target node."""
        target = body.get("target")
        if not isinstance(target, dict) or not target.get("name"):
            return [field_required("target.name")]
        return []

    def apply(self, current: Obj, body: Obj, ctx: RequestContext) -> Obj:
        """The pod bound to the target node (the binding's metadata.uid a precondition)."""
        name = current["metadata"]["name"]
        pre = (body.get("metadata") or {}).get("uid")
        if pre and pre != current["metadata"].get("uid"):
            raise conflict("pods/binding", "", name,
                           f"Precondition failed: UID in precondition: {pre}, "
                           f"UID in object meta: {current['metadata'].get('uid')}")
        try:
            return assign_pod(current, body, rfc3339(self.env.now()))
        except ValueError as e:
            raise conflict("pods/binding", "", name, str(e)) from None


TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
"""Where upstream's ServiceAccount admission mounts the API access volume."""
TOKEN_EXPIRATION_SECONDS = 3607
"""The projected token's lifetime upstream's admission asks for (an hour and 7 s)."""


def automounts(spec: Obj, account: Obj | None) -> bool:
    """Same as upstream: the pod's automountServiceAccountToken, else its ServiceAccount's,
    else true."""
    if spec.get("automountServiceAccountToken") is not None:
        return bool(spec["automountServiceAccountToken"])
    if account is not None and account.get("automountServiceAccountToken") is not None:
        return bool(account["automountServiceAccountToken"])
    return True


def api_access_volume(name: str) -> Obj:
    """The projected volume upstream's ServiceAccount admission adds: the token, the
    cluster's CA bundle and the namespace."""
    return {"name": name, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS,
                                 "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt",
                       "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
            "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}}


def mount_api_access(spec: Obj, uid: str) -> None:
    """Same as upstream's ServiceAccount admission: a projected `kube-api-access-XXXXX` volume
    (the token, the cluster's CA bundle, the namespace), mounted read-only into every
    container and init container that has nothing at its path yet. Its suffix is drawn
    from the pod's uid, so a seeded run names it the same."""
    containers = [c for key in ("initContainers", "containers") for c in spec.get(key) or []
                  if isinstance(c, dict)]
    needing = [c for c in containers if not any(
        isinstance(m, dict) and m.get("mountPath") == TOKEN_MOUNT_PATH
        for m in c.get("volumeMounts") or [])]
    if not needing:
        return
    name = "kube-api-access-" + names.random_suffix(random.Random(uid))
    volumes = spec.get("volumes")
    spec["volumes"] = [*(volumes if isinstance(volumes, list) else []), api_access_volume(name)]
    for c in needing:
        c["volumeMounts"] = [*(c.get("volumeMounts") or []), {
            "name": name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH}]


PRIORITY_CLASSES = "priorityclasses.scheduling.k8s.io"
SYSTEM_PRIORITIES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
"""Upstream's built-in priority classes."""
DEFAULT_TOLERATION_SECONDS = 300
NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"


def default_tolerations(tolerations: Any) -> list[Obj]:
    """Same as upstream's DefaultTolerationSeconds admission: tolerate NotReady and
    Unreachable nodes for 300 s unless the pod already tolerates them (NoExecute or any
    effect)."""
    found = [t for t in tolerations or [] if isinstance(t, dict)]
    for key in (NOT_READY, UNREACHABLE):
        if not any(t.get("effect") in ("", None, "NoExecute")
                   and (t.get("key") == key or t.get("operator") == "Exists" and not t.get("key"))
                   for t in found):
            found.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                          "tolerationSeconds": DEFAULT_TOLERATION_SECONDS})
    return found


def _qos_class(spec: Obj) -> str:
    """BestEffort without requests/limits, Guaranteed when every limit equals its request."""
    containers = spec.get("containers") or []
    resources = [c.get("resources") or {} for c in containers]
    if not any(r.get("requests") or r.get("limits") for r in resources):
        return "BestEffort"
    for r in resources:
        limits = r.get("limits") or {}
        requests = r.get("requests") or limits
        if not limits or set(limits) != set(requests) or any(
                str(requests[k]) != str(v) for k, v in limits.items()):
            return "Burstable"
    return "Guaranteed"


def assign_pod(pod: Obj, binding: Obj, now: str) -> Obj:
    """Same as upstream's pod binding (setPodNodeAndMetadata): the pod bound to the binding's
    node, with the binding's annotations and a PodScheduled=True condition. `pod` is a copy
    the caller owns. Raises ValueError with upstream's text when the pod can't be bound."""
    meta, spec = pod["metadata"], pod.setdefault("spec", {})
    if meta.get("deletionTimestamp"):
        raise ValueError(f"pod {meta['name']} is being deleted, cannot be assigned to a host")
    if spec.get("nodeName"):
        raise ValueError(f'pod {meta["name"]} is already assigned to node "{spec["nodeName"]}"')
    spec["nodeName"] = binding["target"]["name"]
    extra = (binding.get("metadata") or {}).get("annotations") or {}
    if extra:
        meta["annotations"] = {**(meta.get("annotations") or {}), **extra}
    status = pod.setdefault("status", {})
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
    conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                       "lastTransitionTime": now})
    status["conditions"] = conditions
    return pod
