"""API discovery documents, all derived from the kind table.

Two wire forms, kept consistent with each other:

- aggregated discovery (`apidiscovery.k8s.io/v2` `APIGroupDiscoveryList`) served at `/api` and
  `/apis` when the client asks for it in `Accept` (client-go does, first);
- legacy discovery: `/api` APIVersions, `/apis` APIGroupList, `/apis/<g>` APIGroup and
  `/api/v1`, `/apis/<g>/<v>` APIResourceList.

Everything here is a pure function of a `KindTable` returning JSON-ready dicts.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import re
from collections.abc import Iterable
from typing import Any

from fakeapi.registry.kinds import KindTable
from fakeapi.registry.rest import STATUS_VERBS, Kind

DISCOVERY_GROUP = "apidiscovery.k8s.io"
DISCOVERY_VERSION = "v2"
DISCOVERY_LIST_KIND = "APIGroupDiscoveryList"
#: Response Content-Type of aggregated discovery; client-go parses it to pick the decoder.
AGGREGATED_CONTENT_TYPE = (
    f"application/json;g={DISCOVERY_GROUP};v={DISCOVERY_VERSION};as={DISCOVERY_LIST_KIND}"
)
#: What a client-go discovery client sends in `Accept` (aggregated first, legacy JSON last).
AGGREGATED_ACCEPT = f"{AGGREGATED_CONTENT_TYPE},application/json"

DEFAULT_SERVER_ADDRESS = "127.0.0.1:6443"

JSON = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Subresource:
    """How one subresource is exposed: the kind it takes/returns and its verbs.

    `group`/`version`/`kind` of None mean "the parent's" (e.g. `status` returns the parent kind).
    """

    name: str
    verbs: tuple[str, ...]
    kind: str | None = None
    group: str | None = None
    version: str | None = None

    def response_gvk(self, parent: Kind) -> tuple[str, str, str]:
        """(group, version, kind) this subresource responds with, for a parent kind."""
        return (
            parent.group if self.group is None else self.group,
            parent.version if self.version is None else self.version,
            self.kind or parent.kind,
        )


#: Upstream's subresources (same verbs and response kinds as kube-apiserver), and the
#: emulator's.
SUBRESOURCES: dict[str, Subresource] = {
    s.name: s
    for s in (
        Subresource("status", STATUS_VERBS),
        Subresource("finalize", ("update",)),
        Subresource("binding", ("create",), kind="Binding", group="", version="v1"),
        Subresource("eviction", ("create",), kind="Eviction", group="policy", version="v1"),
        Subresource("log", ("get",)),
        Subresource("exec", ("create", "get"), kind="PodExecOptions"),
        Subresource("attach", ("create", "get"), kind="PodAttachOptions"),
        Subresource("portforward", ("create", "get"), kind="PodPortForwardOptions"),
        Subresource("token", ("create",), kind="TokenRequest", group="authentication.k8s.io",
                    version="v1"),
        Subresource("approval", STATUS_VERBS),
        Subresource("scale", STATUS_VERBS, kind="Scale", group="autoscaling", version="v1"),
        Subresource("ephemeralcontainers", STATUS_VERBS),
        Subresource("resize", STATUS_VERBS),
        Subresource("advance", ("create",), kind="ClockAdvance", group="emulator.fakeapi.dev",
                    version="v1alpha1"),  # the emulator's Clock
    )
}


def subresource(name: str) -> Subresource:
    """The exposure of subresource `name`; unknown ones behave like `status`."""
    return SUBRESOURCES.get(name) or Subresource(name, STATUS_VERBS)


# ---------------------------------------------------------------------------
# versions and groups

_KUBE_VERSION = re.compile(r"^v([1-9][0-9]*)(?:(alpha|beta)([1-9][0-9]*))?$")
_STABILITY = {None: 2, "beta": 1, "alpha": 0}


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key giving upstream's version priority (lowest key first).

    GA before beta before alpha, higher major first, then higher pre-release number; versions
    that don't look like Kubernetes versions come last, alphabetically.
    """
    m = _KUBE_VERSION.match(version)
    if not m:
        return (1, 0, 0, version)
    major, stability, minor = m.groups()
    return (0, -_STABILITY[stability], -int(major) * 1000 - int(minor or 0), "")


def group_versions(kinds: KindTable) -> dict[str, list[str]]:
    """Served versions per group (core is ""), groups in table order, versions by priority."""
    groups: dict[str, list[str]] = {}
    for group, version in kinds.group_versions():
        groups.setdefault(group, []).append(version)
    return {g: sorted(vs, key=version_priority) for g, vs in groups.items()}


def preferred_version(kinds: KindTable, group: str) -> str | None:
    """The group's preferred version: the first one listed (highest priority)."""
    versions = group_versions(kinds).get(group)
    return versions[0] if versions else None


def _gv(group: str, version: str) -> str:
    return f"{group}/{version}" if group else version


def _gv_for_discovery(group: str, version: str) -> JSON:
    return {"groupVersion": _gv(group, version), "version": version}


def _sorted_kinds(kinds: Iterable[Kind]) -> list[Kind]:
    return sorted(kinds, key=lambda k: k.plural)


def storage_version_hash(kind: Kind) -> str:
    """Opaque per-resource hash of its storage group/version/kind (as upstream computes it)."""
    version = kind.storage_version or kind.version  # every served version shares it
    digest = hashlib.sha256(f"{kind.group}/{version}/{kind.kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


# ---------------------------------------------------------------------------
# aggregated discovery (apidiscovery.k8s.io/v2)


def _media_ranges(accept: str) -> Iterable[tuple[str, dict[str, str]]]:
    for clause in accept.split(","):
        parts = [p.strip() for p in clause.split(";")]
        media = parts[0].lower()
        params: dict[str, str] = {}
        for p in parts[1:]:
            key, sep, value = p.partition("=")
            if sep:
                params[key.strip().lower()] = value.strip().strip('"')
        yield media, params


def wants_aggregated(accept: str | None) -> bool:
    """Whether an `Accept` header asks for `apidiscovery.k8s.io/v2` APIGroupDiscoveryList as JSON.

    Parameter order doesn't matter; `profile=nopeer` is fine (we have no peer servers);
    `q=0` refuses a range.
    """
    if not accept:
        return False
    for media, params in _media_ranges(accept):
        if media != "application/json" or params.get("q") in ("0", "0.0", "0.00", "0.000"):
            continue
        if (
            params.get("g") == DISCOVERY_GROUP
            and params.get("v") == DISCOVERY_VERSION
            and params.get("as") == DISCOVERY_LIST_KIND
        ):
            return True
    return False


def _response_kind(group: str, version: str, kind: str, parent: Kind) -> JSON:
    # Same as upstream: group and version are only filled in when they differ from the
    # group/version the resource is served in.
    same = (group, version) == parent.group_version
    return {"group": "" if same else group, "version": "" if same else version, "kind": kind}


def _resource_discovery(kind: Kind) -> JSON:
    entry: JSON = {
        "resource": kind.plural,
        "responseKind": _response_kind(kind.group, kind.version, kind.kind, kind),
        "scope": "Namespaced" if kind.namespaced else "Cluster",
        "singularResource": kind.singular,
        "verbs": list(kind.verbs),
    }
    if kind.short_names:
        entry["shortNames"] = list(kind.short_names)
    if kind.categories:
        entry["categories"] = list(kind.categories)
    subs = []
    for name in sorted(kind.subresources):
        sub = subresource(name)
        subs.append({
            "subresource": name,
            "responseKind": _response_kind(*sub.response_gvk(kind), kind),
            "verbs": list(sub.verbs),
        })
    if subs:
        entry["subresources"] = subs
    return entry


def _group_discovery(kinds: KindTable, group: str, versions: list[str]) -> JSON:
    metadata: JSON = {"name": group} if group else {}
    return {
        "metadata": metadata,
        "versions": [
            {
                "version": v,
                "resources": [
                    _resource_discovery(k) for k in _sorted_kinds(kinds.in_group_version(group, v))
                ],
                "freshness": "Current",
            }
            for v in versions
        ],
    }


def _discovery_list(items: list[JSON]) -> JSON:
    return {
        "kind": DISCOVERY_LIST_KIND,
        "apiVersion": f"{DISCOVERY_GROUP}/{DISCOVERY_VERSION}",
        "metadata": {},
        "items": items,
    }


def aggregated_core(kinds: KindTable) -> JSON:
    """`GET /api` as APIGroupDiscoveryList: one nameless item for the core group."""
    versions = group_versions(kinds).get("")
    return _discovery_list([_group_discovery(kinds, "", versions)] if versions else [])


def aggregated_groups(kinds: KindTable) -> JSON:
    """`GET /apis` as APIGroupDiscoveryList: every named group, versions by priority."""
    return _discovery_list([
        _group_discovery(kinds, g, vs) for g, vs in group_versions(kinds).items() if g
    ])


# ---------------------------------------------------------------------------
# legacy discovery


def api_versions(server_address: str = DEFAULT_SERVER_ADDRESS) -> JSON:
    """`GET /api` (legacy): APIVersions listing the core group's only version."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address},
        ],
    }


def _api_group(group: str, versions: list[str]) -> JSON:
    return {
        "name": group,
        "versions": [_gv_for_discovery(group, v) for v in versions],
        "preferredVersion": _gv_for_discovery(group, versions[0]),
    }


def api_group_list(kinds: KindTable) -> JSON:
    """`GET /apis` (legacy): APIGroupList; each group's preferred version is its first."""
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_api_group(g, vs) for g, vs in group_versions(kinds).items() if g],
    }


def api_group(kinds: KindTable, group: str) -> JSON | None:
    """`GET /apis/<group>`: APIGroup, or None when the group isn't served."""
    versions = group_versions(kinds).get(group)
    if not group or not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_api_group(group, versions)}


def _api_resource(name: str, singular: str, namespaced: bool, gvk: tuple[str, str, str],
                  parent: Kind, verbs: Iterable[str]) -> JSON:
    group, version, kind = gvk
    entry: JSON = {"name": name, "singularName": singular, "namespaced": namespaced}
    if (group, version) != parent.group_version:
        entry["group"] = group
        entry["version"] = version
    entry["kind"] = kind
    entry["verbs"] = list(verbs)
    return entry


def api_resource_list(kinds: KindTable, group: str, version: str) -> JSON | None:
    """`GET /api/v1` or `/apis/<g>/<v>`: APIResourceList with `<plural>/<sub>` entries.

    None when the group/version isn't served.
    """
    served = kinds.in_group_version(group, version)
    if not served:
        return None
    resources: list[JSON] = []
    for k in _sorted_kinds(served):
        entry = _api_resource(k.plural, k.singular, k.namespaced, (k.group, k.version, k.kind),
                              k, k.verbs)
        if k.short_names:
            entry["shortNames"] = list(k.short_names)
        if k.categories:
            entry["categories"] = list(k.categories)
        entry["storageVersionHash"] = storage_version_hash(k)
        resources.append(entry)
        for name in sorted(k.subresources):
            sub = subresource(name)
            resources.append(_api_resource(f"{k.plural}/{name}", "", k.namespaced,
                                           sub.response_gvk(k), k, sub.verbs))
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": _gv(group, version),
        "resources": resources,
    }


def all_resource_lists(kinds: KindTable) -> list[JSON]:
    """Every served group/version's APIResourceList (core first), as legacy discovery yields."""
    out = []
    for group, versions in sorted(group_versions(kinds).items(), key=lambda gv: gv[0] != ""):
        for v in versions:
            doc = api_resource_list(kinds, group, v)
            if doc is not None:
                out.append(doc)
    return out
