"""Authorization of requests: request → attributes, impersonation, 403s, and the checks that
need an authorizer (DRA's synthetic claim-status permissions, RBAC escalation), which the
strategies of those kinds run.

One path: `authorize` (a request on a kind, in-process) and `authorize_request` (an HTTP
request) build the same attributes (`resource_attributes`) and decide through `check`.
`request_attributes` mirrors kube-apiserver's RequestInfo: it reads only the path, method and
query, so an unknown resource is still authorized (and refused) before routing finds nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from fakeapi.auth.authn import (
    ANONYMOUS_USER,
    AUTHENTICATED,
    NODE_NAME_KEY,
    UNAUTHENTICATED,
    UserInfo,
    service_account_groups,
    split_service_account,
)
from fakeapi.auth.rbac import Authorizer
from fakeapi.auth.rules import Attributes, Decision, PolicyRule, compact_string, uncovered
from fakeapi.machinery.errors import ApiError, Cause
from fakeapi.machinery.gvk import ResourceType
from fakeapi.machinery.querybool import query_flag

API_PREFIXES = ("api", "apis")
NAMESPACE_SUBRESOURCES = ("status", "finalize")
METHOD_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update",
                "PATCH": "patch", "DELETE": "delete"}


# --- request attributes -----------------------------------------------------------------


def _name_from_field_selector(selector: str) -> str:
    """The name an exact `metadata.name=X` term pins a list or watch to ("" if none)."""
    for term in selector.split(","):
        for op in ("==", "="):
            key, sep, value = term.partition(op)
            if sep and key.strip() == "metadata.name" and "!" not in key:
                value = value.strip()
                if value and value not in (".", "..") and "/" not in value and "%" not in value:
                    return value
                return ""
    return ""


def request_attributes(user: UserInfo, method: str, path: str,
                       query: Mapping[str, str] | None = None) -> Attributes:
    """What a REST request asks to do, as upstream's RequestInfo resolves it."""
    parts = [p for p in path.split("/") if p]
    n = len(parts)
    if n < 3 or parts[0] not in API_PREFIXES or parts[0] == "apis" and n < 4:
        return Attributes(user=user, verb=method.lower(), resource_request=False, path=path)
    if parts[0] == "apis":
        group, version, i = parts[1], parts[2], 3
    else:
        group, version, i = "", parts[1], 2
    verb = METHOD_VERBS.get(method.upper()) or method.lower()
    if i < n and parts[i] in ("watch", "proxy"):
        verb = parts[i]
        i += 1
    namespace = ""
    if i + 1 < n and parts[i] == "namespaces":
        namespace = parts[i + 1]
        if i + 2 < n and parts[i + 2] not in NAMESPACE_SUBRESOURCES:
            i += 2
    rest = parts[i:i + 3]
    resource = rest[0] if rest else ""
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if not name and verb == "get":
        query = query or {}
        verb = "watch" if query_flag(query, "watch") else "list"
        name = _name_from_field_selector(query.get("fieldSelector", ""))
    if not name and verb == "delete":
        verb = "deletecollection"
    return Attributes(user, verb, True, group, version, namespace, resource, subresource, name,
                      path)


# --- 403 --------------------------------------------------------------------------------


def _q(text: str) -> str:
    """Go's %q for the strings these messages quote."""
    return json.dumps(text, ensure_ascii=False)


def forbidden_message(a: Attributes) -> str:
    """`User "alice" cannot get resource "pods" in API group "" in the namespace "ns"`."""
    user = _q(a.user.name)
    if not a.resource_request:
        return f"User {user} cannot {a.verb} path {_q(a.path)}"
    resource = f"{a.resource}/{a.subresource}" if a.subresource else a.resource
    head = f"User {user} cannot {a.verb} resource {_q(resource)} in API group {_q(a.api_group)}"
    if a.namespace:
        return f"{head} in the namespace {_q(a.namespace)}"
    return f"{head} at the cluster scope"


class ForbiddenError(ApiError):
    """403 Forbidden with upstream's details (always present, empty fields left out, even
    for non-resource paths)."""

    always_details = True


def forbidden(a: Attributes, reason: str = "") -> ApiError:
    """The 403 for a denied request: `pods "x" is forbidden: User "u" cannot get ...`."""
    why = forbidden_message(a) + (f": {reason}" if reason else "")
    qualified = f"{a.resource}.{a.api_group}" if a.api_group else a.resource
    if not a.resource_request or not a.resource:
        message = f"forbidden: {why}"
    elif a.name:
        message = f"{qualified} {_q(a.name)} is forbidden: {why}"
    else:
        message = f"{qualified} is forbidden: {why}"
    return ForbiddenError(403, "Forbidden", message, name=a.name or None,
                          group=a.api_group or None,
                          kind=a.resource if a.resource_request and a.resource else None)


def check(authorizer: Authorizer, a: Attributes) -> Decision:
    """Authorize or raise the 403."""
    decision = authorizer.authorize(a)
    if not decision.allowed:
        raise forbidden(a, decision.reason)
    return decision


def resource_attributes(user: UserInfo, verb: str, kind: ResourceType, namespace: str | None = "",
                        name: str = "", subresource: str = "") -> Attributes:
    """What a request on a served kind asks to do (the same attributes its REST path gives)."""
    return Attributes(user, verb, True, kind.group, kind.version, namespace or "", kind.plural,
                      subresource, name)


def authorize(authorizer: Authorizer, user: UserInfo, verb: str, kind: ResourceType,
              namespace: str | None = "", name: str = "", subresource: str = "") -> Attributes:
    """Authorize `user` to `verb` an object (or collection, without a name) of `kind`, or
    raise the 403 an HTTP client would get; the in-process client's one check."""
    a = resource_attributes(user, verb, kind, namespace, name, subresource)
    check(authorizer, a)
    return a


def authorize_request(authorizer: Authorizer, user: UserInfo, method: str, path: str,
                      query: Mapping[str, str] | None = None) -> Attributes:
    """`authorize` for an HTTP request, resolved from its path before routing (so unknown
    resources and non-resource paths are authorized too); raises the 403."""
    a = request_attributes(user, method, path, query)
    check(authorizer, a)
    return a


# --- impersonation ----------------------------------------------------------------------

IMPERSONATE_USER = "Impersonate-User"
IMPERSONATE_GROUP = "Impersonate-Group"
IMPERSONATE_UID = "Impersonate-Uid"
IMPERSONATE_EXTRA = "impersonate-extra-"
AUTHENTICATION_GROUP = "authentication.k8s.io"


def _go_text(value: str) -> str:
    """A header value as Go's JSON writes the string it holds: bytes that are not UTF-8 (which
    aiohttp keeps as surrogate escapes) become U+FFFD, so no answer fails to encode them."""
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _header_values(headers: Any, name: str) -> list[str]:
    getall = getattr(headers, "getall", None)
    if getall is not None:
        return [_go_text(v) for v in getall(name, [])]
    value = headers.get(name)
    return [_go_text(value)] if value is not None else []


def _extras(headers: Any) -> dict[str, list[str]]:
    extras: dict[str, list[str]] = {}
    for key, value in headers.items():
        if key[:1] in "Ii" and key.lower().startswith(IMPERSONATE_EXTRA):
            extras.setdefault(unquote(key[len(IMPERSONATE_EXTRA):].lower()), []).append(
                _go_text(value))
    return extras


def _impersonating(headers: Any) -> bool:
    """Whether any header name starts with `Impersonate-` (in any case)."""
    return any(key[:1] in "Ii" and key[:12].lower() == "impersonate-" for key in headers)


def impersonate(authorizer: Authorizer, user: UserInfo, headers: Any) -> UserInfo:
    """The identity a request acts as: `user`, or whom its Impersonate-* headers name.

    Each impersonated attribute needs the `impersonate` verb (users, groups, serviceaccounts,
    userextras/<key>, uids), checked in that order as upstream does; the first refusal is
    the 403.
    """
    if not _impersonating(headers):
        return user
    target = (_header_values(headers, IMPERSONATE_USER) or [""])[0]
    groups = _header_values(headers, IMPERSONATE_GROUP)
    uid = (_header_values(headers, IMPERSONATE_UID) or [""])[0]
    extras = _extras(headers)
    if not target:
        if groups or extras or uid:
            raise ApiError(500, "InternalError", "Internal error occurred: requested groups, "
                           "user extras or uid without impersonating a user")
        return user

    def need(**kw: Any) -> None:
        a = Attributes(user=user, verb="impersonate", **kw)
        decision = authorizer.authorize(a)
        if not decision.allowed:
            raise forbidden(a, decision.reason)

    sa = split_service_account(target)
    if sa is not None:
        need(api_version="v1", namespace=sa[0], resource="serviceaccounts", name=sa[1])
        if not groups:
            groups = list(service_account_groups(sa[0]))
    else:
        need(api_version="v1", resource="users", name=target)
    for group in _header_values(headers, IMPERSONATE_GROUP):
        need(api_version="v1", resource="groups", name=group)
    for key, values in extras.items():
        for value in values:
            need(api_group=AUTHENTICATION_GROUP, api_version="v1", resource="userextras",
                 subresource=key, name=value)
    if uid:
        need(api_group=AUTHENTICATION_GROUP, api_version="v1", resource="uids", name=uid)
    if target != ANONYMOUS_USER:
        if AUTHENTICATED not in groups and UNAUTHENTICATED not in groups:
            groups.append(AUTHENTICATED)
    elif UNAUTHENTICATED not in groups:
        groups.append(UNAUTHENTICATED)
    return UserInfo(target, uid=uid, groups=tuple(groups),
                    extra={k: tuple(v) for k, v in extras.items()})


# --- synthetic permissions on ResourceClaim status --------------------------------------

GRANULAR_GATE = "DRAResourceClaimGranularStatusAuthorization"
ASSOCIATED_NODE = "associated-node:"
ARBITRARY_NODE = "arbitrary-node:"
_NODE_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _empty_to_none(value: Any) -> Any:
    return None if value in (None, [], {}) else value


def _device_key(d: Any) -> tuple[Any, ...]:
    if not isinstance(d, dict):
        return (repr(d),)
    return (d.get("driver"), d.get("pool"), d.get("device"), d.get("shareID") or "")


def modified_drivers(new_status: Mapping[str, Any], old_status: Mapping[str, Any]) -> list[str]:
    """Drivers whose `status.devices` entries were added, removed or changed (sorted)."""
    old = {_device_key(d): d for d in old_status.get("devices") or []}
    drivers: set[str] = set()
    for d in new_status.get("devices") or []:
        key = _device_key(d)
        before = old.pop(key, None)
        if before is None or before != d:
            drivers.add(str(d.get("driver", "")) if isinstance(d, dict) else "")
    for d in old.values():
        drivers.add(str(d.get("driver", "")) if isinstance(d, dict) else "")
    return sorted(drivers)


def _still_allocated(old_status: Mapping[str, Any],
                     new_status: Mapping[str, Any]) -> Mapping[str, Any]:
    """The old status without the device entries of devices the new status deallocates:
    their removal (dropDeallocatedStatusDevices, when the resource-claim controller frees a
    claim) is the apiserver's doing, not a driver's write, and needs no driver permission."""
    results = ((new_status.get("allocation") or {}).get("devices") or {}).get("results") or []
    kept = {(r.get("driver"), r.get("pool"), r.get("device")) for r in results
            if isinstance(r, dict)}
    devices = [d for d in old_status.get("devices") or [] if not isinstance(d, dict)
               or (d.get("driver"), d.get("pool"), d.get("device")) in kept]
    return {**old_status, "devices": devices}


def allocated_node(status: Mapping[str, Any]) -> str:
    """The single node an allocation's nodeSelector pins (`metadata.name In [node]`), or ""."""
    selector = (status.get("allocation") or {}).get("nodeSelector") or {}
    terms = selector.get("nodeSelectorTerms") or []
    if len(terms) != 1 or not isinstance(terms[0], dict):
        return ""
    term = terms[0]
    fields = term.get("matchFields") or []
    if term.get("matchExpressions") or len(fields) != 1:
        return ""
    f = fields[0]
    values = f.get("values") or []
    if f.get("key") != "metadata.name" or f.get("operator") != "In" or len(values) != 1:
        return ""
    return str(values[0])


def associated_with_node(user: UserInfo, node: str) -> bool:
    """A service account whose one node-name extra is a valid node name equal to `node`."""
    if not node or split_service_account(user.name) is None:
        return False
    names = user.extra.get(NODE_NAME_KEY) or ()
    if len(names) != 1:
        return False
    name = names[0]
    return len(name) <= 253 and bool(_NODE_NAME.match(name)) and name == node


def claim_status_causes(authorizer: Authorizer, user: UserInfo, verb: str, kind: ResourceType,
                        new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """Same as upstream's granular ResourceClaim status authorization, for a `/status` write
    by `user` with `verb`: changing allocation or reservedFor needs the verb on
    `resourceclaims/binding` (cluster-wide); changing `status.devices` needs, per changed
    driver, `associated-node:<verb>` (a service account on the allocated node) or
    `arbitrary-node:<verb>` on `resourceclaims/driver` named after the driver. Returns the
    Forbidden causes of the 422 (none for a privileged user)."""
    if authorizer.privileged(user):
        return []
    new_status = new.get("status") or {}
    old_status = old.get("status") or {}
    base = resource_attributes(user, verb, kind, subresource="binding")
    causes: list[Cause] = []
    if any(_empty_to_none(new_status.get(f)) != _empty_to_none(old_status.get(f))
           for f in ("allocation", "reservedFor")):
        decision = authorizer.authorize(base)
        if not decision.allowed:
            causes.append(Cause("status", "Forbidden: changing status.allocation or "
                                "status.reservedFor requires extra permission: "
                                f"{forbidden(base, decision.reason).message}",
                                "FieldValueForbidden"))
    drivers = modified_drivers(new_status, _still_allocated(old_status, new_status))
    if drivers:
        prefixes = ([ASSOCIATED_NODE, ARBITRARY_NODE]
                    if associated_with_node(user, allocated_node(new_status))
                    else [ARBITRARY_NODE])
        namespace = (new.get("metadata") or {}).get("namespace", "")
        for driver in drivers:
            first: str | None = None
            for prefix in prefixes:
                a = base._replace(verb=prefix + verb, subresource="driver",
                                  namespace=namespace, name=driver)
                decision = authorizer.authorize(a)
                if decision.allowed:
                    first = None
                    break
                if first is None:
                    first = forbidden(a, decision.reason).message
            if first is not None:
                causes.append(Cause("status.devices", "Forbidden: changing status.devices "
                                    f"requires extra permission: {first}",
                                    "FieldValueForbidden"))
    return causes


# --- RBAC escalation prevention ---------------------------------------------------------

def _escalation_error(kind: ResourceType, name: str, detail: str) -> ApiError:
    return ApiError(403, "Forbidden", f"{kind.resource_id} {_q(name)} is forbidden: {detail}",
                    name=name, group=kind.group, kind=kind.plural)


def _not_held(user: UserInfo, missing: list[PolicyRule], errors: list[str]) -> str:
    groups = "[" + " ".join(_q(g) for g in user.groups) + "]"
    lines = "\n".join(sorted(compact_string(r) for r in missing))
    msg = (f"user {_q(user.name)} (groups={groups}) is attempting to grant RBAC permissions "
           f"not currently held:\n{lines}")
    if errors:
        msg += f"; resolution errors: [{', '.join(errors)}]"
    return msg


def _escalation_target(new: Mapping[str, Any]) -> tuple[str, str]:
    meta = new.get("metadata") or {}
    return meta.get("name", ""), meta.get("namespace", "")


def check_role_escalation(authorizer: Authorizer, user: UserInfo, kind: ResourceType,
                          new: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    """Same as upstream's RBAC role storage: a Role or ClusterRole may only hold permissions
    its writer holds, unless the writer has `escalate` on it (system:masters is exempt).
    Raises the 403."""
    if authorizer.privileged(user):
        return
    if old and (old.get("rules"), old.get("aggregationRule")) == (
            new.get("rules"), new.get("aggregationRule")):
        return
    name, namespace = _escalation_target(new)
    if authorizer.authorize(resource_attributes(user, "escalate", kind, namespace,
                                                name)).allowed:
        return
    if new.get("aggregationRule") is not None:
        raise _escalation_error(kind, name, "must have cluster-admin privileges to use "
                                "the aggregationRule")
    _check_held(authorizer, user, kind, name, namespace,
                [PolicyRule.from_wire(r) for r in new.get("rules") or []])


def check_binding_escalation(authorizer: Authorizer, user: UserInfo, kind: ResourceType,
                             new: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    """Same as upstream's RBAC binding storage: a RoleBinding or ClusterRoleBinding may only
    grant a role whose permissions its writer holds, unless the writer has `bind` on that
    role (system:masters is exempt). Raises the 403."""
    if authorizer.privileged(user):
        return
    ref = new.get("roleRef") or {}
    if old and old.get("roleRef") == ref:
        return
    name, namespace = _escalation_target(new)
    role_kind, role_name = str(ref.get("kind", "")), str(ref.get("name", ""))
    a = Attributes(user=user, verb="bind", api_group=kind.group, api_version=kind.version,
                   resource="roles" if role_kind == "Role" else "clusterroles",
                   namespace=namespace, name=role_name)
    if authorizer.authorize(a).allowed:
        return
    rules = authorizer.policy.role_rules(role_kind, role_name, namespace)
    if rules is None:
        raise _escalation_error(kind, name, f"{role_kind.lower()}.{kind.group} "
                                f"{_q(role_name)} not found")
    _check_held(authorizer, user, kind, name, namespace, list(rules))


def _check_held(authorizer: Authorizer, user: UserInfo, kind: ResourceType, name: str,
                namespace: str, wanted: list[PolicyRule]) -> None:
    """The 403 when `user` doesn't hold every wanted rule in `namespace`."""
    owner = authorizer.rules_for(user, namespace)
    missing = uncovered(owner.rules, wanted)
    if missing:
        raise _escalation_error(kind, name, _not_held(user, missing, owner.errors))
