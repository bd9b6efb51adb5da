"""Strategies of admissionregistration.k8s.io's policies and bindings, after upstream's
pkg/apis/admissionregistration/validation: every CEL expression of a ValidatingAdmissionPolicy
compiles at create and update (a 422 with upstream's `compilation failed: ...` detail), and
the fields the dispatcher reads have supported values. Enforcement is
`fakeapi.registry.policy_admission`.
"""

from __future__ import annotations

from typing import Any

from fakeapi import cel
from fakeapi.machinery.errors import Cause
from fakeapi.machinery.field import child, index, internal, invalid, not_supported, required
from fakeapi.registry.context import RequestContext
from fakeapi.registry.rest import Obj, SpecStrategy, Strategy

VALIDATION_VARIABLES = ("object", "oldObject", "request", "params", "namespaceObject",
                        "variables")
"""What a policy's expressions may read (upstream's admission environment without the
`authorizer`, which isn't declared here)."""
FAILURE_POLICIES = ("Fail", "Ignore")
REASONS = ("Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized")
ACTIONS = ("Audit", "Deny", "Warn")
NOT_FOUND_ACTIONS = ("Allow", "Deny")


def default_match_resources(match: Any) -> None:
    """SetDefaults_MatchResources: matchPolicy Equivalent, empty selectors, rules scope `*`."""
    if not isinstance(match, dict):
        return
    match.setdefault("matchPolicy", "Equivalent")
    match.setdefault("namespaceSelector", {})
    match.setdefault("objectSelector", {})
    for key in ("resourceRules", "excludeResourceRules"):
        for rule in match.get(key) or ():
            if isinstance(rule, dict):
                rule.setdefault("scope", "*")


def default_validating_admission_policy(obj: Obj) -> None:
    """SetDefaults_ValidatingAdmissionPolicySpec: failurePolicy Fail, the match defaults."""
    spec = obj.get("spec")
    if isinstance(spec, dict):
        spec.setdefault("failurePolicy", "Fail")
        default_match_resources(spec.get("matchConstraints"))


def default_policy_binding(obj: Obj) -> None:
    """SetDefaults_ParamRef (parameterNotFoundAction Deny) and the match defaults."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    ref = spec.get("paramRef")
    if isinstance(ref, dict):
        ref.setdefault("parameterNotFoundAction", "Deny")
    default_match_resources(spec.get("matchResources"))


def compile_causes(expression: Any, path: str, result: str) -> list[Cause]:
    """Same as upstream's validateCELCondition: the expression compiles in the admission
    environment and evaluates to `result` (`bool`, `string`, or "" for any type)."""
    if not isinstance(expression, str) or not expression.strip():
        return [required(path)]
    compiled = cel.compile_admission(expression, VALIDATION_VARIABLES)
    if isinstance(compiled, list):
        return [invalid(path, expression, e.detail) if e.kind == "invalid"
                else internal(path, e.detail) for e in compiled]
    if result and compiled.output_type not in (result, "dyn"):
        return [invalid(path, expression, f"must evaluate to {result}")]
    return []


def _items(spec: Obj, key: str) -> list[tuple[int, Obj]]:
    return [(i, v) for i, v in enumerate(spec.get(key) or ()) if isinstance(v, dict)]


def validate_policy_spec(spec: Obj, path: str = "spec") -> list[Cause]:
    """The rules of ValidateValidatingAdmissionPolicy a dispatcher depends on."""
    causes: list[Cause] = []
    failure = spec.get("failurePolicy")
    if failure is not None and failure not in FAILURE_POLICIES:
        causes.append(not_supported(child(path, "failurePolicy"), failure, FAILURE_POLICIES))
    match = spec.get("matchConstraints")
    if not isinstance(match, dict):
        causes.append(required(child(path, "matchConstraints")))
    elif not match.get("resourceRules"):
        causes.append(required(child(path, "matchConstraints", "resourceRules")))
    if not spec.get("validations") and not spec.get("auditAnnotations"):
        causes.append(required(child(path, "validations"),
                               "validations or auditAnnotations must contain at least one item"))
    for key, field, result in (("matchConditions", "expression", "bool"),
                               ("variables", "expression", "")):
        for i, item in _items(spec, key):
            causes += compile_causes(item.get(field), child(index(child(path, key), i), field),
                                     result)
    for i, v in _items(spec, "validations"):
        at = index(child(path, "validations"), i)
        causes += compile_causes(v.get("expression"), child(at, "expression"), "bool")
        if v.get("messageExpression"):
            causes += compile_causes(v["messageExpression"], child(at, "messageExpression"),
                                     "string")
        if v.get("reason") is not None and v["reason"] not in REASONS:
            causes.append(not_supported(child(at, "reason"), v["reason"], REASONS))
    for i, a in _items(spec, "auditAnnotations"):
        at = index(child(path, "auditAnnotations"), i)
        causes += compile_causes(a.get("valueExpression"), child(at, "valueExpression"),
                                 "string")
    return causes


class ValidatingAdmissionPolicyStrategy(SpecStrategy):
    """ValidatingAdmissionPolicy: its defaults, and every expression must compile."""

    def prepare_for_create(self, obj: Obj, ctx: RequestContext) -> None:
        """Status is the type checker's; the spec gets upstream's defaults."""
        super().prepare_for_create(obj, ctx)
        default_validating_admission_policy(obj)

    def prepare_for_update(self, new: Obj, old: Obj, ctx: RequestContext) -> None:
        """The stored status stays; the spec gets upstream's defaults."""
        super().prepare_for_update(new, old, ctx)
        default_validating_admission_policy(new)

    def validate_spec(self, obj: Obj) -> list[Cause]:
        """Upstream's ValidateValidatingAdmissionPolicy (the parts the dispatcher reads)."""
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [required("spec")]
        return validate_policy_spec(spec)


class PolicyBindingStrategy(Strategy):
    """Validating and mutating admission policy bindings: policyName, paramRef and the
    validation actions upstream requires."""

    def prepare_for_create(self, obj: Obj, ctx: RequestContext) -> None:
        """Upstream's defaults."""
        default_policy_binding(obj)

    def prepare_for_update(self, new: Obj, old: Obj, ctx: RequestContext) -> None:
        """Upstream's defaults."""
        default_policy_binding(new)

    def validate(self, obj: Obj, ctx: RequestContext) -> list[Cause]:
        """Same as upstream's ValidateValidatingAdmissionPolicyBinding's required fields."""
        found = obj.get("spec")
        spec: Obj = found if isinstance(found, dict) else {}
        causes: list[Cause] = []
        if not spec.get("policyName"):
            causes.append(required("spec.policyName"))
        ref = spec.get("paramRef")
        if isinstance(ref, dict):
            action = ref.get("parameterNotFoundAction")
            if action not in NOT_FOUND_ACTIONS:
                causes.append(not_supported("spec.paramRef.parameterNotFoundAction", action,
                                            NOT_FOUND_ACTIONS))
            if ref.get("name") and ref.get("selector") is not None:
                causes.append(invalid("spec.paramRef", ref,
                                      "name and selector are mutually exclusive"))
        if self.kind.kind == "ValidatingAdmissionPolicyBinding":
            actions = spec.get("validationActions") or []
            if not actions:
                causes.append(required("spec.validationActions"))
            for i, action in enumerate(actions):
                if action not in ACTIONS:
                    causes.append(not_supported(index("spec.validationActions", i), action,
                                                ACTIONS))
        return causes
