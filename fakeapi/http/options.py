"""Query options of REST requests, parsed and validated as upstream's: the caller and write
options (`RequestContext`), list and watch options, DeleteOptions, label and field
selection, numeric and boolean parameters, and the names a path may hold.

Booleans (`?watch=`, `?force=`...) are read as upstream reads them (`machinery.querybool`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import orjson
from aiohttp import web

from fakeapi.auth import authn
from fakeapi.machinery import selectors
from fakeapi.machinery.decode import go_quote
from fakeapi.machinery.errors import Cause, bad_request, field_required
from fakeapi.machinery.errors import invalid as invalid_error
from fakeapi.machinery.field import forbidden, not_supported
from fakeapi.machinery.jsonio import dumps
from fakeapi.machinery.querybool import query_flag
from fakeapi.registry.context import RequestContext
from fakeapi.registry.rest import Kind

USER = web.RequestKey("user", authn.UserInfo)
"""The caller, as the app's guard authenticated (and impersonated) it."""
VERB = web.RequestKey("verb", str)
"""The RBAC verb the app's guard authorized the request for."""
FIELD_VALIDATION = ("Strict", "Warn", "Ignore")
MAX_CONTEXTS = 1024
_N = TypeVar("_N", int, float)
Predicate = Callable[[dict], bool]


class WriteContexts:
    """The caller and write options of requests; a request without query options gets the
    context of its caller and verb, built once."""

    def __init__(self) -> None:
        self._cache: dict[tuple[authn.UserInfo, str, str], RequestContext] = {}

    def of(self, request: web.Request, options: str,
           causes: Iterable[Cause] = ()) -> RequestContext:
        """The caller and the write options of a request.

        `options` names the upstream options kind (CreateOptions, UpdateOptions, PatchOptions,
        DeleteOptions) that invalid dryRun/fieldValidation values (and `causes`, the verb's
        own) are reported against, as one 422 like upstream's Validate<Verb>Options.
        """
        q = request.query
        causes = list(causes)
        user = request.get(USER, authn.ANONYMOUS)
        verb = request.get(VERB, "")
        user_agent = request.headers.get("User-Agent", "")
        if not q and not causes:
            return self._without_options(user, verb, user_agent)
        fv = q.get("fieldValidation", "")
        dry = q.getall("dryRun", [])
        causes += dry_run_causes(dry)
        if options != "DeleteOptions" and fv not in ("", *FIELD_VALIDATION):
            causes.append(Cause("fieldValidation", f"Unsupported value: {orjson.dumps(fv).decode()}"
                                ': supported values: "", "Ignore", "Strict", "Warn"',
                                "FieldValueNotSupported"))
        if causes:
            raise invalid_error(options, "meta.k8s.io", "", causes)
        return RequestContext(user=user.name, groups=user.groups, uid=user.uid, extra=user.extra,
                              verb=verb, field_manager=q.get("fieldManager", ""),
                              field_validation=fv or "Warn", dry_run=bool(dry),
                              user_agent=user_agent, force=query_flag(q, "force"))

    def _without_options(self, user: authn.UserInfo, verb: str,
                         user_agent: str) -> RequestContext:
        """The context of a request without query options: built once per caller and verb."""
        key = (user, verb, user_agent)
        ctx = self._cache.get(key)
        if ctx is None:
            if len(self._cache) >= MAX_CONTEXTS:
                self._cache.clear()
            ctx = self._cache[key] = RequestContext(
                user=user.name, groups=user.groups, uid=user.uid, extra=user.extra, verb=verb,
                field_validation="Warn", user_agent=user_agent)
        return ctx


def patch_option_causes(query: Any, patch_type: str, apply_type: str) -> list[Cause]:
    """Same as upstream's ValidatePatchOptions: `force` only with an apply patch, which needs
    a fieldManager."""
    if patch_type != apply_type:
        if "force" in query:
            return [Cause("force", "Forbidden: may not be specified for non-apply patch",
                          "FieldValueForbidden")]
        return []
    if not query.get("fieldManager"):
        return [field_required("fieldManager", "is required for apply patch")]
    return []


def wants_watch(query: Any) -> bool:
    """Whether a GET of a collection is a watch (`?watch=` anything but `0` or `false`)."""
    return query_flag(query, "watch")


def selection(query: Any, kind: Kind, name: str = "") -> Predicate | None:
    """What a list, watch or collection delete selects: its label and field selectors (by the
    kind's field labels) and, for a legacy `/watch/.../NAME` path, the object's name."""
    predicate = selectors.predicate(query.get("labelSelector", ""),
                                    query.get("fieldSelector", ""), kind.field_selectors)
    if name:
        predicate = _and(predicate, _named(name))
    return predicate


def delete_options(body: Any, query: Any, ctx: RequestContext
                   ) -> tuple[dict[str, Any], RequestContext]:
    """DeleteOptions from the body (None without one) and query; a dryRun in the body counts
    like the query's."""
    options: dict[str, Any] = {}
    if isinstance(body, dict):
        options = body
    elif body is not None:
        raise bad_request("DeleteOptions must be an object")
    for key in ("propagationPolicy", "gracePeriodSeconds"):
        if key in query:
            options[key] = query[key]
    if "dryRun" in options:
        causes = dry_run_causes(options["dryRun"])
        if causes:
            raise invalid_error("DeleteOptions", "meta.k8s.io", "", causes)
        if options["dryRun"]:
            ctx = dataclasses.replace(ctx, dry_run=True)
    return options, ctx


def check_path_name(name: str) -> None:
    """Same as upstream's storage key functions (path.IsValidPathSegmentName): a name in the
    URL may not be "." or "..", nor contain "/" or "%" (400 BadRequest); nor, here, a control
    character, which no valid name holds."""
    if name in (".", ".."):
        msgs = [f"may not be '{name}'"]
    else:
        msgs = [f"may not contain '{c}'" for c in ("/", "%") if c in name]
        if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in name):
            msgs.append("may not contain control characters")
    if msgs:
        raise bad_request(f"Name parameter invalid: {go_quote(name)}: {';'.join(msgs)}")


def _named(name: str) -> Callable[[dict], bool]:
    return lambda obj: obj.get("metadata", {}).get("name") == name


def _and(first: Callable[[dict], bool] | None, second: Callable[[dict], bool]
         ) -> Callable[[dict], bool]:
    if first is None:
        return second
    return lambda obj: first(obj) and second(obj)


def dry_run_causes(values: Any) -> list[Cause]:
    """Same as upstream: dryRun may only hold "All"."""
    if isinstance(values, list) and all(v == "All" for v in values):
        return []
    shown = ", ".join(dumps(v).decode() for v in (
        values if isinstance(values, list) else [values]))
    return [Cause("dryRun", f"Unsupported value: []string{{{shown}}}: supported "
                  'values: "All"', "FieldValueNotSupported")]


def check_list_options(q: Any, *, watch: bool) -> None:
    """Same as upstream ValidateListOptions: resourceVersionMatch and sendInitialEvents rules
    for lists and watches (422 Invalid on ListOptions)."""
    match = q.get("resourceVersionMatch", "")
    initial = q.get("sendInitialEvents")
    cont = q.get("continue", "")
    causes: list[Cause] = []
    if watch:
        if initial is not None and match != "NotOlderThan":
            causes.append(forbidden("resourceVersionMatch", "sendInitialEvents requires "
                                          "setting resourceVersionMatch to NotOlderThan"))
        if match:
            if initial is None:
                causes.append(forbidden("resourceVersionMatch", "resourceVersionMatch is "
                                              "forbidden for watch unless sendInitialEvents "
                                              "is provided"))
            if match != "NotOlderThan":
                causes.append(not_supported("resourceVersionMatch", match,
                                                  ["NotOlderThan"]))
            if cont:
                causes.append(forbidden("resourceVersionMatch", "resourceVersionMatch is "
                                              "forbidden when continue is provided"))
    else:
        rv = q.get("resourceVersion", "")
        if match:
            if not rv:
                causes.append(forbidden("resourceVersionMatch", "resourceVersionMatch is "
                                              "forbidden unless resourceVersion is provided"))
            if cont:
                causes.append(forbidden("resourceVersionMatch", "resourceVersionMatch is "
                                              "forbidden when continue is provided"))
            if match not in ("Exact", "NotOlderThan"):
                causes.append(not_supported("resourceVersionMatch", match,
                                                  ["Exact", "NotOlderThan", ""]))
            if match == "Exact" and rv == "0":
                causes.append(forbidden("resourceVersionMatch", 'resourceVersionMatch '
                                              '"exact" is forbidden for resourceVersion "0"'))
        if initial is not None:
            causes.append(forbidden("sendInitialEvents",
                                          "sendInitialEvents is forbidden for list"))
    if causes:
        raise invalid_error("ListOptions", "meta.k8s.io", "", causes)
    if not watch and cont and q.get("resourceVersion", "") not in ("", "0"):
        # same as upstream's storage layer
        raise bad_request("specifying resource version is not allowed when using continue")


def number_param(q: Any, name: str, parse: type[_N], default: _N) -> _N:
    """A numeric query parameter, `default` when absent or empty (400 when malformed)."""
    try:
        return parse(q.get(name) or default)
    except ValueError:
        raise bad_request(f"invalid {name}: {q.get(name)!r}") from None
