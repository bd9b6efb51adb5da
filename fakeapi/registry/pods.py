"""The pod subresources beyond status and binding: eviction (honouring PodDisruptionBudgets),
ephemeral containers, and the streamed ones (log, exec, attach, portforward) up to the point
where upstream hands the request to the kubelet."""

from __future__ import annotations

from collections.abc import Mapping

from fakeapi.machinery.errors import ApiError, Cause, bad_request, field_required, forbidden
from fakeapi.machinery.querybool import query_flag
from fakeapi.machinery.selectors import label_selector_matches
from fakeapi.machinery.timestamps import rfc3339
from fakeapi.registry.context import RequestContext
from fakeapi.registry.rest import (
    ActionStrategy,
    ConnectStrategy,
    Obj,
    StatusStrategy,
    StreamStrategy,
    SubresourceOps,
)

PDBS = "poddisruptionbudgets.policy"
MAX_DISRUPTED_PODS = 2000  # same as upstream's MaxDisruptedPodSize
EVICTION_REFUSED = "Cannot evict pod as it would violate the pod's disruption budget."
SUCCESS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}


def _too_many_requests(message: str, cause: str) -> ApiError:
    return ApiError(429, "TooManyRequests", message,
                    causes=[Cause("", cause, "DisruptionBudget")])


class EvictionStrategy(ActionStrategy):
    """`pods/NAME/eviction` (policy/v1 Eviction), as upstream's EvictionREST: a pod covered
    by a PodDisruptionBudget is deleted only while the budget allows a disruption (else 429),
    and the budget's status records it; other pods are simply deleted with the eviction's
    DeleteOptions."""

    body_kind = "Eviction"

    def act(self, current: Obj, body: Obj, ctx: RequestContext, ops: SubresourceOps
            ) -> tuple[int, Obj]:
        """Check the budget, record the disruption, delete the pod."""
        meta = current["metadata"]
        name, namespace = meta["name"], meta.get("namespace", "")
        given = (body.get("metadata") or {}).get("name")
        if given and given != name:
            raise bad_request("name in URL does not match name in Eviction object")
        options = body.get("deleteOptions") or {}
        if not isinstance(options, dict):
            raise bad_request("deleteOptions must be an object")
        if not self._can_ignore_budget(current):
            budgets = [p for p in self.env.scan(PDBS, namespace)
                       if label_selector_matches((p.get("spec") or {}).get("selector"),
                                           meta.get("labels") or {})]
            if len(budgets) > 1:
                raise ApiError(500, "InternalError", "This pod has more than one "
                               "PodDisruptionBudget, which the eviction subresource does not "
                               "support.")
            if budgets:
                ops.update_status(PDBS, self._decrement(budgets[0], name), ctx)
        ops.delete_object(self.kind.resource_id, namespace, name, ctx, options)
        return 201, {**SUCCESS, "code": 201}

    @staticmethod
    def _can_ignore_budget(pod: Obj) -> bool:
        """Same as upstream canIgnorePDB: terminal, pending or already deleting pods."""
        phase = (pod.get("status") or {}).get("phase")
        return bool(pod["metadata"].get("deletionTimestamp")) or phase in (
            "Succeeded", "Failed", "Pending")

    def _decrement(self, pdb: Obj, pod: str) -> Obj:
        """Same as upstream checkAndDecrement: the budget with one disruption fewer."""
        name = pdb["metadata"]["name"]
        status = dict(pdb.get("status") or {})
        if int(status.get("observedGeneration") or 0) < int(
                pdb["metadata"].get("generation") or 0):
            raise _too_many_requests(EVICTION_REFUSED, f"The disruption budget {name} is still "
                                     "being processed by the server.")
        allowed = int(status.get("disruptionsAllowed") or 0)
        if allowed < 0:
            raise forbidden("pdb disruptions allowed is negative")
        disrupted = dict(status.get("disruptedPods") or {})
        if len(disrupted) > MAX_DISRUPTED_PODS:
            raise forbidden("DisruptedPods map too big - too many evictions not confirmed by "
                            "PDB controller")
        if allowed == 0:
            raise _too_many_requests(EVICTION_REFUSED, (
                f"The disruption budget {name} needs {int(status.get('desiredHealthy') or 0)} "
                f"healthy pods and has {int(status.get('currentHealthy') or 0)} currently"))
        disrupted[pod] = rfc3339(self.env.now())
        status.update(disruptionsAllowed=allowed - 1, disruptedPods=disrupted)
        return {**pdb, "status": status}


def _container_names(spec: Obj, key: str) -> list[str]:
    return [str(c.get("name")) for c in spec.get(key) or [] if isinstance(c, dict)]


def pod_container(pod: Obj, container: str) -> str:
    """Same as upstream's validateContainer/ defaulting: the named container, or the only
    one (400 naming the choices when several exist, or when the name is unknown)."""
    spec = pod.get("spec") or {}
    name = pod["metadata"]["name"]
    containers = _container_names(spec, "containers")
    init = _container_names(spec, "initContainers")
    ephemeral = _container_names(spec, "ephemeralContainers")
    if not container:
        default = (pod["metadata"].get("annotations") or {}).get(
            "kubectl.kubernetes.io/default-container")
        if default in containers:
            return str(default)
        if len(containers) == 1:
            return containers[0]
        message = (f"a container name must be specified for pod {name}, choose one of: "
                   f"[{' '.join(containers)}]")
        if init:
            message += f" or one of the init containers: [{' '.join(init)}]"
        if ephemeral:
            message += f" or one of the ephemeral containers: [{' '.join(ephemeral)}]"
        raise bad_request(message)
    if container not in (*containers, *init, *ephemeral):
        raise bad_request(f"container {container} is not valid for pod {name}")
    return container


class PodLogStrategy(StreamStrategy):
    """`pods/NAME/log`, as upstream's LogREST: the container is checked; a pod without a
    node has an empty log."""

    def locate(self, obj: Obj, options: Mapping[str, str]) -> str:
        """The container whose log is read."""
        for key in ("tailLines", "limitBytes", "sinceSeconds"):
            value = options.get(key)
            if value is not None and (not value.lstrip("-").isdigit() or int(value) < 0
                                      or key != "tailLines" and int(value) < 1):
                raise ApiError(422, "Invalid", f'PodLogOptions "{obj["metadata"]["name"]}" '
                               f'is invalid: {key}: Invalid value: {value}: must be greater '
                               'than 0', kind="PodLogOptions",
                               causes=[Cause(key, f"Invalid value: {value}: must be greater "
                                             "than 0")])
        return pod_container(obj, options.get("container", ""))


class PodExecStrategy(ConnectStrategy):
    """`pods/NAME/exec`, as upstream's ExecREST: a command and a stream are required, the pod
    must be on a node, the container must exist."""

    def locate(self, obj: Obj, options: Mapping[str, str]) -> str:
        """The container the command runs in."""
        if not options.get("command"):
            raise bad_request("you must specify at least 1 command")
        return _streaming(obj, options)


class PodAttachStrategy(ConnectStrategy):
    """`pods/NAME/attach`, as upstream's AttachREST."""

    def locate(self, obj: Obj, options: Mapping[str, str]) -> str:
        """The container attached to."""
        return _streaming(obj, options)


class PodPortForwardStrategy(ConnectStrategy):
    """`pods/NAME/portforward`, as upstream's PortForwardREST: the pod must be on a node."""

    def locate(self, obj: Obj, options: Mapping[str, str]) -> str:
        """No container: ports belong to the pod."""
        _require_host(obj)
        return ""


def _require_host(pod: Obj) -> str:
    node = (pod.get("spec") or {}).get("nodeName")
    if not node:
        raise bad_request(f"pod {pod['metadata']['name']} does not have a host assigned")
    return str(node)


def _streaming(pod: Obj, options: Mapping[str, str]) -> str:
    if not any(query_flag(options, s) for s in ("stdin", "stdout", "stderr")):
        raise bad_request("you must specify at least one of stdin, stdout, stderr")
    container = pod_container(pod, options.get("container", ""))
    _require_host(pod)
    return container


class EphemeralContainersStrategy(StatusStrategy):
    """`pods/NAME/ephemeralcontainers`, as upstream: only spec.ephemeralContainers changes,
    containers are only added (never changed or removed), each named and with an image."""

    def prepare_for_update(self, new: Obj, old: Obj, ctx: RequestContext) -> None:
        """Everything but spec.ephemeralContainers from the stored pod."""
        wanted = (new.get("spec") or {}).get("ephemeralContainers")
        rv = new["metadata"].get("resourceVersion", "")
        new.clear()
        new.update(old)
        new["metadata"] = {**old["metadata"], "resourceVersion": rv}
        spec = dict(old.get("spec") or {})
        if wanted:
            spec["ephemeralContainers"] = wanted
        else:
            spec.pop("ephemeralContainers", None)
        new["spec"] = spec

    def validate_update(self, new: Obj, old: Obj, ctx: RequestContext) -> list[Cause]:
        """Same as upstream ValidatePodEphemeralContainersUpdate (the parts clients hit)."""
        path = "spec.ephemeralContainers"
        now = [c for c in (new.get("spec") or {}).get("ephemeralContainers") or []
               if isinstance(c, dict)]
        before = {c.get("name"): c for c in (old.get("spec") or {}).get(
            "ephemeralContainers") or [] if isinstance(c, dict)}
        causes = []
        names = {c.get("name") for c in now}
        for gone in before.keys() - names:
            causes.append(Cause(path, f"Forbidden: existing ephemeral containers \"{gone}\" "
                                "may not be removed", "FieldValueForbidden"))
        taken = set(_container_names(old.get("spec") or {}, "containers")) | set(
            _container_names(old.get("spec") or {}, "initContainers"))
        for i, c in enumerate(now):
            if not c.get("name"):
                causes.append(field_required(f"{path}[{i}].name"))
            elif c["name"] in taken:
                causes.append(Cause(f"{path}[{i}].name", f'Duplicate value: "{c["name"]}"',
                                    "FieldValueDuplicate"))
            elif c["name"] in before and before[c["name"]] != c:
                causes.append(Cause(f"{path}[{i}]", "Forbidden: existing ephemeral "
                                    "containers may not be changed", "FieldValueForbidden"))
            if not c.get("image"):
                causes.append(field_required(f"{path}[{i}].image"))
        return causes
