"""The answers of the create-only review kinds: access reviews, rules reviews, token reviews
and "who am I".

Nothing is stored. A POST returns the object it was given with `status` filled in (201),
which is all `kubectl auth can-i` (SelfSubjectAccessReview, SelfSubjectRulesReview) and
`kubectl auth whoami` (SelfSubjectReview) need. SubjectAccessReview and
LocalSubjectAccessReview ask about someone else. Each review kind's row names its answer
(`fakeapi.registry.rest.Review`).
"""

from __future__ import annotations

from typing import Any

from fakeapi.auth.authn import UserInfo
from fakeapi.auth.rbac import Authorizer
from fakeapi.auth.rules import Attributes, PolicyRule
from fakeapi.auth.tokens import API_AUDIENCES
from fakeapi.machinery.decode import object_member
from fakeapi.machinery.errors import ApiError, Cause, bad_request, field_invalid, invalid
from fakeapi.registry.rest import Kind, ReviewContext

Obj = dict[str, Any]
AUTHENTICATION = "authentication.k8s.io"


def _attributes(user: UserInfo, spec: Obj) -> Attributes:
    res = spec.get("resourceAttributes")
    if isinstance(res, dict):
        return Attributes(user=user, verb=str(res.get("verb", "")),
                          api_group=str(res.get("group", "")),
                          api_version=str(res.get("version", "")),
                          namespace=str(res.get("namespace", "")),
                          resource=str(res.get("resource", "")),
                          subresource=str(res.get("subresource", "")),
                          name=str(res.get("name", "")))
    non = spec.get("nonResourceAttributes") or {}
    return Attributes(user=user, verb=str(non.get("verb", "")), resource_request=False,
                      path=str(non.get("path", "")))


def _spec_causes(spec: Obj) -> list[Cause]:
    """Exactly one of resourceAttributes and nonResourceAttributes (upstream's wording)."""
    res, non = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if res is not None and non is not None:
        return [field_invalid("spec.nonResourceAttributes", non,
                              "cannot be specified in combination with resourceAttributes")]
    if res is None and non is None:
        return [Cause("spec.resourceAttributes", 'Invalid value: "null": exactly one of '
                      "nonResourceAttributes or resourceAttributes must be specified")]
    return []


def _access_status(authorizer: Authorizer, a: Attributes) -> Obj:
    decision = authorizer.authorize(a)
    status: Obj = {"allowed": decision.allowed}
    if decision.reason:
        status["reason"] = decision.reason
    return status


def _respond(kind: Kind, body: Obj, status: Obj) -> Obj:
    meta = object_member(body, "metadata")
    out = {"kind": kind.kind, "apiVersion": kind.api_version,
           "metadata": {**meta, "creationTimestamp": None}}
    if "spec" in body:
        out["spec"] = body["spec"]
    out["status"] = status
    return out


def self_subject_access_review(kind: Kind, body: Obj, asker: ReviewContext) -> Obj:
    """Can I? — the caller's own access."""
    spec = body.get("spec") or {}
    causes = _spec_causes(spec)
    if causes:
        raise invalid(kind.kind, kind.group, "", causes)
    return _respond(kind, body, _access_status(asker.authorizer, _attributes(asker.user, spec)))


def _subject(spec: Obj) -> UserInfo:
    extra = spec.get("extra") or {}
    return UserInfo(str(spec.get("user", "")), uid=str(spec.get("uid", "")),
                    groups=tuple(spec.get("groups") or ()),
                    extra={k: tuple(v or ()) for k, v in extra.items()})


def subject_access_review(kind: Kind, body: Obj, asker: ReviewContext) -> Obj:
    """Can they? — cluster-wide (SubjectAccessReview) or in the URL's namespace (Local)."""
    namespace = asker.namespace
    spec = body.get("spec") or {}
    causes = _spec_causes(spec)
    if not spec.get("user") and not spec.get("groups"):
        causes.append(Cause("spec.user", 'Invalid value: "": at least one of user or group '
                            "must be specified"))
    if kind.namespaced:
        res = spec.get("resourceAttributes")
        meta_ns = (body.get("metadata") or {}).get("namespace", namespace)
        if meta_ns != namespace:
            raise bad_request("the namespace of the provided object does not match the "
                              "namespace sent on the request")
        if spec.get("nonResourceAttributes") is not None:
            causes.append(field_invalid("spec.nonResourceAttributes",
                                        spec["nonResourceAttributes"],
                                        "disallowed on this kind of request"))
        if isinstance(res, dict) and res.get("namespace", "") != namespace:
            causes.append(field_invalid("spec.resourceAttributes.namespace",
                                        res.get("namespace", ""),
                                        "must match metadata.namespace"))
    if causes:
        raise invalid(kind.kind, kind.group, "", causes)
    return _respond(kind, body, _access_status(asker.authorizer,
                                               _attributes(_subject(spec), spec)))


def _rule_wire(rule: PolicyRule) -> tuple[str, Obj]:
    if rule.non_resource_urls:
        return "non", {"verbs": list(rule.verbs), "nonResourceURLs": list(rule.non_resource_urls)}
    out: Obj = {"verbs": list(rule.verbs), "apiGroups": list(rule.api_groups),
                "resources": list(rule.resources)}
    if rule.resource_names:
        out["resourceNames"] = list(rule.resource_names)
    return "res", out


def self_subject_rules_review(kind: Kind, body: Obj, asker: ReviewContext) -> Obj:
    """What can I do in a namespace? — every rule bound to the caller there."""
    spec = body.get("spec") or {}
    result = asker.authorizer.rules_for(asker.user, str(spec.get("namespace", "")))
    status: Obj = {"resourceRules": [], "nonResourceRules": [],
                   "incomplete": bool(result.errors)}
    for rule in result.rules:
        which, wire = _rule_wire(rule)
        status["nonResourceRules" if which == "non" else "resourceRules"].append(wire)
    if result.errors:
        status["evaluationError"] = ", ".join(result.errors)
    return _respond(kind, body, status)


def self_subject_review(kind: Kind, body: Obj, asker: ReviewContext) -> Obj:
    """Who am I? — the authenticated (or impersonated) identity."""
    return _respond(kind, body, {"userInfo": asker.user.to_wire()})


def token_review(kind: Kind, body: Obj, asker: ReviewContext) -> Obj:
    """Same as upstream's TokenReview: whether a token authenticates, and as whom (for a
    webhook-authenticating driver or operator); `spec.audiences` narrows the audiences."""
    authenticate = asker.authenticate
    spec = body.get("spec") or {}
    token = spec.get("token")
    if not isinstance(token, str) or not token:
        raise ApiError(422, "Invalid", 'TokenReview.authentication.k8s.io "" is invalid: '
                       "spec.token: Required value", kind="TokenReview", group=AUTHENTICATION,
                       causes=[Cause("spec.token", "Required value", "FieldValueRequired")])
    audiences = spec.get("audiences") or None
    user = authenticate(token, tuple(audiences)) if audiences else authenticate(token)
    status: Obj = {"authenticated": user is not None, "user": {}}
    if user is not None:
        status["user"] = user.to_wire()
        status["audiences"] = list(audiences or API_AUDIENCES)
    else:
        status["error"] = "[invalid bearer token, service account token is not valid]"
    return _respond(kind, body, status)
