"""A client of any Kubernetes API server over HTTPS, for components that run in a process of
their own (`fakeapi driver`; `fakeapi emulate` will add watches and informers over it).

`RemoteClient` offers the object calls of `fakeapi.client.ObjectClient` (get, list, create,
update, patch, delete of a resource named by id, and subresources such as `status`) with a
kubeconfig's credentials: a client certificate or a bearer token, and the cluster's CA. A
resource id (`resourceclaims.resource.k8s.io`) becomes its URL path through the kind table's
rows (group, version, plural, scope), never a per-kind case. A server's error `Status` is
raised as the `ApiError` it describes (code, reason, message, details), so a caller handles a
remote 404 or 409 as it handles the in-process client's; a server that can't be reached (or
whose certificate doesn't verify) is `Unreachable`, an OSError.

Imports: machinery, auth (the kubeconfig), the in-process client (its patch types and delete
options) and the kind table: the layer beside the in-process client.
"""

from __future__ import annotations

import builtins
import ssl
import urllib.parse
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import aiohttp

from fakeapi import KUBERNETES_VERSION
from fakeapi.auth.kubeconfig import read_kubeconfig, read_token
from fakeapi.client import PATCH_TYPES, delete_options
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.gvk import ResourceType
from fakeapi.machinery.jsonio import dumps, loads
from fakeapi.registry.kinds import KINDS

Obj = dict[str, Any]
JSON = "application/json"
USER_AGENT = f"fakeapi/{KUBERNETES_VERSION}"
REQUEST_TIMEOUT = 30.0
"""Seconds one request may take, as fakeapi's other commands allow."""
REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
           405: "MethodNotAllowed", 409: "Conflict", 410: "Expired", 413: "RequestEntityTooLarge",
           415: "UnsupportedMediaType", 422: "Invalid", 429: "TooManyRequests",
           500: "InternalError", 503: "ServiceUnavailable", 504: "Timeout"}
"""client-go's reason for an error answer that is not a Status (a proxy's page)."""


class Unreachable(ConnectionError):
    """The API server could not be reached, or its answer not read (the message says which
    server and why)."""


class RemoteClient:
    """The object calls of `ObjectClient` against the server of a kubeconfig (see the module
    docstring). Use it in `async with`, or `close()` it."""

    def __init__(self, *, server: str, ssl_context: ssl.SSLContext | None,
                 token: str | None = None, user_agent: str = USER_AGENT,
                 field_manager: str = "fakeapi", timeout: float = REQUEST_TIMEOUT,
                 kinds: Iterable[ResourceType] = KINDS) -> None:
        self.server = server.rstrip("/")
        self.field_manager = field_manager
        """The manager of server-side apply patches."""
        self._ssl = ssl_context
        self._headers = {"Accept": JSON, "User-Agent": user_agent}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._kinds = {k.resource_id: k for k in kinds}
        self._session: aiohttp.ClientSession | None = None

    @classmethod
    def from_kubeconfig(cls, path: Path, **options: Any) -> RemoteClient:
        """A client of the kubeconfig's current context, with its credentials."""
        server, ssl_context = read_kubeconfig(path)
        return cls(server=server, ssl_context=ssl_context, token=read_token(path), **options)

    async def __aenter__(self) -> RemoteClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the connections (a later call opens new ones)."""
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    # ----- paths ------------------------------------------------------------------------

    def kind(self, resource: str) -> ResourceType:
        """The type served under a resource id (404 as the in-process client's when the
        kind table has no such row)."""
        kind = self._kinds.get(resource)
        if kind is None:
            raise ApiError(404, "NotFound", f"the server could not find the requested resource "
                           f"({resource})")
        return kind

    def path(self, resource: str, namespace: str | None = "", name: str = "",
             subresource: str = "") -> str:
        """The URL path of a collection, object or subresource
        (`/apis/resource.k8s.io/v1/namespaces/NS/resourceclaims/NAME/status`)."""
        kind = self.kind(resource)
        parts = [f"/apis/{kind.group}/{kind.version}" if kind.group else f"/api/{kind.version}"]
        if kind.namespaced and namespace:
            parts += ["namespaces", urllib.parse.quote(namespace, safe="")]
        parts.append(kind.plural)
        if name:
            parts.append(urllib.parse.quote(name, safe=""))
        if subresource:
            parts.append(subresource)
        return "/".join(parts)

    # ----- requests ---------------------------------------------------------------------

    async def request(self, method: str, path: str, *, body: Any = None,
                      content_type: str = JSON, query: Mapping[str, str] | None = None) -> Any:
        """One request: the decoded JSON answer, or the `ApiError` of the server's Status,
        or `Unreachable`."""
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(ssl=self._ssl if self._ssl is not None else True),
                headers=self._headers, timeout=self._timeout)
        headers = {"Content-Type": content_type} if body is not None else {}
        data = None if body is None else dumps(body)
        url = self.server + path
        try:
            async with self._session.request(method, url, data=data, headers=headers,
                                             params=dict(query or {})) as resp:
                raw = await resp.read()
                status, phrase = resp.status, resp.reason or ""
        except (TimeoutError, aiohttp.ClientConnectionError) as e:
            raise Unreachable(f"cannot reach the API server at {self.server}: "
                              f"{e or type(e).__name__}") from None
        if status < 400:
            return loads(raw) if raw else {}
        try:
            answer = loads(raw)
        except ValueError:
            answer = None
        if isinstance(answer, dict) and answer.get("kind") == "Status":
            raise ApiError.from_status(answer, status)
        text = raw.decode(errors="replace").strip()[:200]
        raise ApiError(status, REASONS.get(status, "Unknown"),
                       f"the server answered {status} {phrase}" + (f": {text}" if text else ""))

    async def get(self, resource: str, name: str, namespace: str = "") -> Obj:
        """GET one object."""
        answer: Obj = await self.request("GET", self.path(resource, namespace, name))
        return answer

    async def list(self, resource: str, namespace: str | None = None, *,
                   label_selector: str = "", field_selector: str = "",
                   copy: bool = True) -> builtins.list[Obj]:
        """LIST objects (all namespaces when namespace is None); each item has its kind and
        apiVersion, as the in-process client's."""
        query = {k: v for k, v in (("labelSelector", label_selector),
                                   ("fieldSelector", field_selector)) if v}
        answer = await self.request("GET", self.path(resource, namespace), query=query)
        kind = self.kind(resource)
        return [{"apiVersion": kind.api_version, "kind": kind.kind, **item}
                for item in answer.get("items") or ()]

    async def create(self, resource: str, obj: Obj, namespace: str = "", *,
                     copy: bool = True) -> Obj:
        """CREATE; the namespace defaults to the object's."""
        ns = namespace or obj.get("metadata", {}).get("namespace", "")
        answer: Obj = await self.request("POST", self.path(resource, ns), body=obj)
        return answer

    async def update(self, resource: str, obj: Obj, *, subresource: str = "",
                     copy: bool = True) -> Obj:
        """UPDATE (PUT) the object or one subresource; 409 on a stale resourceVersion."""
        meta = obj["metadata"]
        answer: Obj = await self.request("PUT", self.path(
            resource, meta.get("namespace", ""), meta["name"], subresource), body=obj)
        return answer

    async def patch(self, resource: str, name: str, patch: Any, *, namespace: str = "",
                    patch_type: str = "merge", subresource: str = "",
                    force: bool = False, copy: bool = True) -> Obj:
        """PATCH with `merge`, `strategic`, `json` or `apply` (as `field_manager`)."""
        query = {"fieldManager": self.field_manager} if patch_type == "apply" else {}
        if force:
            query["force"] = "true"
        answer: Obj = await self.request(
            "PATCH", self.path(resource, namespace, name, subresource), body=patch,
            content_type=PATCH_TYPES[patch_type], query=query)
        return answer

    async def delete(self, resource: str, name: str, namespace: str = "", *,
                     propagation_policy: str | None = None,
                     grace_period_seconds: int | None = None,
                     preconditions: Mapping[str, str] | None = None,
                     copy: bool = True) -> Obj:
        """DELETE with these DeleteOptions; the object (or Status) the server answers."""
        options = {"kind": "DeleteOptions", "apiVersion": "v1", **delete_options(
            propagation_policy, grace_period_seconds, preconditions)}
        answer: Obj = await self.request("DELETE", self.path(resource, namespace, name),
                                         body=options)
        return answer
