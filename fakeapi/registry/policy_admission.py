"""ValidatingAdmissionPolicy enforcement, after upstream's
k8s.io/apiserver/pkg/admission/plugin/policy/validating: every write (create, update, delete,
on an object or a subresource) is matched against each policy's matchConstraints and each of
its bindings' matchResources (resource rules with matchPolicy, namespace and object
selectors), then the policy's matchConditions, variables and validations are evaluated in
CEL (`fakeapi.cel.compile_admission`) with `object`, `oldObject`, `request`, `params`,
`namespaceObject` and `variables`. A failed validation is denied (the first, with upstream's
message and code), warned (a Warning header) or only audited, as the binding's
validationActions say; errors follow the policy's failurePolicy.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable
from typing import Any

from fakeapi import cel
from fakeapi.machinery.errors import ApiError, Cause
from fakeapi.machinery.selectors import label_selector_matches
from fakeapi.registry.admissionregistration import VALIDATION_VARIABLES
from fakeapi.registry.context import RequestContext
from fakeapi.registry.rest import Kind, Obj

POLICIES = "validatingadmissionpolicies.admissionregistration.k8s.io"
BINDINGS = "validatingadmissionpolicybindings.admissionregistration.k8s.io"
NAMESPACES = "namespaces"
_CODES = {"Forbidden": 403, "Unauthorized": 401, "RequestEntityTooLarge": 413, "Invalid": 422}


@dataclasses.dataclass(frozen=True, kw_only=True)
class AdmissionRequest:
    """One write as admission sees it (upstream's admission.Attributes)."""

    kind: Kind
    """The row the request was made at (its version is the request's)."""
    operation: str
    """CREATE, UPDATE or DELETE."""
    namespace: str
    name: str
    subresource: str
    obj: Obj | None
    old: Obj | None
    ctx: RequestContext

    def matched(self) -> Obj:
        """The `request` variable (upstream's AdmissionRequest)."""
        k = self.kind
        kind = {"group": k.group, "version": k.version, "kind": k.kind}
        resource = {"group": k.group, "version": k.version, "resource": k.plural}
        user = self.ctx.requester
        out: Obj = {
            "uid": "", "kind": kind, "resource": resource, "requestKind": kind,
            "requestResource": resource, "name": self.name, "namespace": self.namespace,
            "operation": self.operation, "dryRun": self.ctx.dry_run,
            "userInfo": {"username": user.name, "uid": user.uid, "groups": list(user.groups),
                         "extra": {k: list(v) for k, v in user.extra.items()}}}
        if self.subresource:
            out["subResource"] = out["requestSubResource"] = self.subresource
        return out


@dataclasses.dataclass(frozen=True)
class _Decision:
    policy: str
    binding: str
    message: str
    reason: str = "Invalid"


class PolicyAdmission:
    """The validating admission policy plugin over the registry's store."""

    def __init__(self, *, scan: Callable[[str, str | None], list[Obj]],
                 lookup: Callable[[str, str, str], Obj | None],
                 kinds: Callable[[], Iterable[Kind]]) -> None:
        self._scan = scan
        self._lookup = lookup
        self._kinds = kinds

    def admit(self, request: AdmissionRequest) -> list[str]:
        """Run every policy bound for the request: the warnings to send, or the ApiError of
        the first denial."""
        policies = self._scan(POLICIES, None)
        if not policies or request.kind.resource_id in (POLICIES, BINDINGS):
            return []
        bindings = self._scan(BINDINGS, None)
        warnings: list[str] = []
        denied: list[_Decision] = []
        for policy in sorted(policies, key=lambda p: p["metadata"]["name"]):
            spec = policy.get("spec") or {}
            if not self._matches(spec.get("matchConstraints"), request, constraints=True):
                continue
            name = policy["metadata"]["name"]
            for binding in sorted((b for b in bindings
                                   if (b.get("spec") or {}).get("policyName") == name),
                                  key=lambda b: b["metadata"]["name"]):
                bspec = binding.get("spec") or {}
                if bspec.get("matchResources") and not self._matches(
                        bspec["matchResources"], request, constraints=False):
                    continue
                bname = binding["metadata"]["name"]
                actions = bspec.get("validationActions") or []
                for decision in self._evaluate(spec, bspec, request, name, bname):
                    if "Deny" in actions:
                        denied.append(decision)
                    if "Warn" in actions:
                        warnings.append(f"Validation failed for ValidatingAdmissionPolicy "
                                        f"'{name}' with binding '{bname}': {decision.message}")
        if denied:
            raise _denial(request, denied[0])
        return warnings

    # ----- matching (upstream's matching.Matcher) ------------------------------------------

    def _matches(self, match: Any, request: AdmissionRequest, *, constraints: bool) -> bool:
        if not isinstance(match, dict):
            return not constraints
        if not self._selected(match, request):
            return False
        if any(self._rule_matches(r, match, request) for r in match.get("excludeResourceRules")
               or ()):
            return False
        rules = match.get("resourceRules") or ()
        return any(self._rule_matches(r, match, request) for r in rules) if rules else (
            not constraints)

    def _selected(self, match: Obj, request: AdmissionRequest) -> bool:
        """namespaceSelector (on the namespace's labels; a cluster-scoped object always
        matches) and objectSelector (on the new or old object's labels)."""
        ns_selector = match.get("namespaceSelector")
        if ns_selector and request.kind.namespaced:
            namespace = self._lookup(NAMESPACES, "", request.namespace) or {}
            labels = (namespace.get("metadata") or {}).get("labels") or {}
            if not label_selector_matches(ns_selector, labels):
                return False
        obj_selector = match.get("objectSelector")
        if obj_selector:
            found = [(o.get("metadata") or {}).get("labels") or {}
                     for o in (request.obj, request.old) if o is not None]
            if not any(label_selector_matches(obj_selector, labels) for labels in found):
                return False
        return True

    def _rule_matches(self, rule: Any, match: Obj, request: AdmissionRequest) -> bool:
        if not isinstance(rule, dict):
            return False
        names = rule.get("resourceNames") or ()
        if names and request.name not in names:
            return False
        operations = rule.get("operations") or ()
        if "*" not in operations and request.operation not in operations:
            return False
        scope = rule.get("scope") or "*"
        if scope != "*" and scope != ("Namespaced" if request.kind.namespaced else "Cluster"):
            return False
        kind = request.kind
        candidates = [kind]
        if match.get("matchPolicy", "Equivalent") == "Equivalent":
            candidates += [k for k in self._kinds() if k.resource_id == kind.resource_id
                           and k.version != kind.version]
        return any(_gvr_matches(rule, k, request.subresource) for k in candidates)

    # ----- evaluation (upstream's validator) -----------------------------------------------

    def _evaluate(self, spec: Obj, binding: Obj, request: AdmissionRequest, policy: str,
                  bname: str) -> list[_Decision]:
        fail = spec.get("failurePolicy", "Fail") != "Ignore"

        def error(message: str) -> list[_Decision]:
            return [_Decision(policy, bname, message)] if fail else []

        params, problem = self._params(spec, binding, request)
        if problem:
            return error(problem)
        if params is _NO_PARAMS:
            return []
        namespace = (self._lookup(NAMESPACES, "", request.namespace)
                     if request.kind.namespaced and request.namespace else None)
        scope: dict[str, Any] = {
            "object": request.obj, "oldObject": request.old, "request": request.matched(),
            "params": params, "namespaceObject": namespace, "variables": {}}
        for condition in spec.get("matchConditions") or ():
            try:
                if _run(condition.get("expression", ""), scope) is not True:
                    return []
            except _ExpressionError as e:
                return error(str(e))
        failed_variables: dict[str, str] = {}
        for variable in spec.get("variables") or ():
            try:
                scope["variables"][variable["name"]] = _run(variable["expression"], scope)
            except _ExpressionError as e:
                failed_variables[variable["name"]] = str(e)
        out = []
        for validation in spec.get("validations") or ():
            expression = validation.get("expression", "")
            broken = [m for v, m in failed_variables.items()
                      if re.search(rf"\bvariables\.{re.escape(v)}\b", expression)]
            try:
                if broken:
                    raise _ExpressionError(broken[0])
                result = _run(expression, scope)
            except _ExpressionError as e:
                out += error(str(e))
                continue
            if result is not True:
                out.append(_Decision(policy, bname, _message(validation, scope),
                                     validation.get("reason") or "Invalid"))
        return out

    def _params(self, spec: Obj, binding: Obj, request: AdmissionRequest
                ) -> tuple[Any, str]:
        """The `params` of one binding: None without a paramKind, the one object a paramRef
        names, `_NO_PARAMS` when none is found and the binding allows it."""
        param_kind = spec.get("paramKind")
        if not param_kind:
            return None, ""
        ref = binding.get("paramRef")
        if not isinstance(ref, dict):
            return None, "failed to configure binding: no paramRef"
        group, _, version = str(param_kind.get("apiVersion", "")).rpartition("/")
        row = next((k for k in self._kinds() if (k.group, k.version, k.kind) == (
            group, version, param_kind.get("kind"))), None)
        if row is None:
            return None, (f"failed to configure policy: failed to find resource referenced by "
                          f"paramKind: '{param_kind.get('apiVersion')}, Kind="
                          f"{param_kind.get('kind')}'")
        namespace = ref.get("namespace") or (request.namespace if row.namespaced else "")
        if ref.get("name"):
            found = self._lookup(row.resource_id, namespace, ref["name"])
            candidates = [found] if found is not None else []
        else:
            candidates = [o for o in self._scan(row.resource_id, namespace or None)
                          if label_selector_matches(ref.get("selector") or {},
                                                    o["metadata"].get("labels") or {})]
        if candidates:
            return candidates[0], ""
        if ref.get("parameterNotFoundAction") == "Allow":
            return _NO_PARAMS, ""
        return None, "no params found for policy binding with `Deny` parameterNotFoundAction"


_NO_PARAMS = object()


class _ExpressionError(Exception):
    """An expression that didn't evaluate (upstream's `expression '...' resulted in error`)."""


def _run(expression: str, scope: dict[str, Any]) -> Any:
    compiled = cel.compile_admission(expression, VALIDATION_VARIABLES)
    if isinstance(compiled, list):
        raise _ExpressionError("; ".join(e.detail for e in compiled))
    try:
        return cel.evaluate_admission(compiled, scope)
    except cel.CelEvalError as e:
        raise _ExpressionError(f"expression '{expression}' resulted in error: {e}") from None


def _message(validation: Obj, scope: dict[str, Any]) -> str:
    """The messageExpression's result, else the message, else upstream's
    `failed expression: ...`."""
    if validation.get("messageExpression"):
        try:
            text = _run(validation["messageExpression"], scope)
        except _ExpressionError:
            text = None
        if isinstance(text, str) and text.strip() and "\n" not in text:
            return text.strip()
    return validation.get("message") or f"failed expression: {validation.get('expression')}"


def _gvr_matches(rule: Obj, kind: Kind, subresource: str) -> bool:
    """Same as upstream's rules.Matcher: group, version and resource (`*`, `pods/status`,
    `*/status`, `pods/*`)."""
    groups, versions = rule.get("apiGroups") or (), rule.get("apiVersions") or ()
    if "*" not in groups and kind.group not in groups:
        return False
    if "*" not in versions and kind.version not in versions:
        return False
    for resource in rule.get("resources") or ():
        plural, _, sub = resource.partition("/")
        if plural not in ("*", kind.plural):
            continue
        if sub in ("*", subresource):
            return True
    return False


def _denial(request: AdmissionRequest, decision: _Decision) -> ApiError:
    """Upstream's denial: admission.NewForbidden's message with the decision's reason."""
    message = (f"ValidatingAdmissionPolicy '{decision.policy}' with binding "
               f"'{decision.binding}' denied request: {decision.message}")
    k = request.kind
    resource = f"{k.plural}.{k.group}" if k.group else k.plural
    name = request.name or "Unknown"
    return ApiError(_CODES.get(decision.reason, 422), decision.reason,
                    f'{resource} "{name}" is forbidden: {message}', name=name, group=k.group,
                    kind=k.plural, causes=[Cause("", message, "")])
