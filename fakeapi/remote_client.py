"""A client of any Kubernetes API server over HTTPS, for components that run in a process of
their own (`fakeapi driver`, `fakeapi emulate`): it implements `fakeapi.client.ApiClient`, so
the shared informers and every component run over it unchanged.

`RemoteClient` offers the object calls of `fakeapi.client.ObjectClient` (get, list, create,
update, patch, delete of a resource named by id, and subresources such as `status`) with a
kubeconfig's credentials: a client certificate or a bearer token, and the cluster's CA. A
resource id (`resourceclaims.resource.k8s.io`) becomes its URL path through the kind table's
rows (group, version, plural, scope), never a per-kind case. A server's error `Status` is
raised as the `ApiError` it describes (code, reason, message, details), so a caller handles a
remote 404 or 409 as it handles the in-process client's; a server that can't be reached (or
whose certificate doesn't verify) is `Unreachable`, an OSError.

Lists are read in pages of 500 (client-go's reflector's page size) and are consistent at the
first page's resourceVersion; watches ask for bookmarks, and a revision the server has
compacted comes back as an ERROR event with a 410 Status whichever way the server says it (an
HTTP 410 or the event), so the informer relists. `impersonating()` gives a client of another
identity over the same connections (`Impersonate-User`, `-Group`, `-Extra-*`): how an emulate
process acts as each component's own service account against `fakeapi serve`.

Imports: machinery, auth (the kubeconfig), the in-process client (its patch types and delete
options) and the kind table: the layer beside the in-process client.
"""

from __future__ import annotations

import builtins
import copy as copying
import ssl
import urllib.parse
from collections.abc import AsyncIterator, Iterable, Mapping
from pathlib import Path
from typing import Any

import aiohttp

from fakeapi import KUBERNETES_VERSION
from fakeapi.auth.kubeconfig import read_kubeconfig, read_token
from fakeapi.client import PATCH_TYPES, delete_options
from fakeapi.kube.podio import NodeStreams
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.gvk import ResourceType
from fakeapi.machinery.jsonio import dumps, loads
from fakeapi.machinery.watchtypes import ERROR
from fakeapi.registry.kinds import KINDS, Kind

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
LIST_PAGE = 500
"""Objects per list page (client-go's reflector asks for 500)."""
WATCH_TIMEOUT = 300
"""Seconds a watch asks the server to keep it open (the informer then watches again from
where it stopped; client-go picks 5 to 10 minutes)."""
IMPERSONATE_EXTRA = "Impersonate-Extra-"


class Unreachable(ConnectionError):
    """The API server could not be reached, or its answer not read (the message says which
    server and why)."""


class _Connections:
    """The connection pool a client and the clients impersonating through it share, and the
    pod streams their nodes registered (served by the emulate process, not the API)."""

    def __init__(self, ssl_context: ssl.SSLContext | None) -> None:
        self.ssl = ssl_context
        self.session: aiohttp.ClientSession | None = None
        self.pod_streams: dict[str, NodeStreams] = {}

    def get(self) -> aiohttp.ClientSession:
        """The session (opened on first use, again after `close`)."""
        if self.session is None:
            self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(
                ssl=self.ssl if self.ssl is not None else True, limit=0))
        return self.session

    async def close(self) -> None:
        """Close the connections."""
        session, self.session = self.session, None
        if session is not None:
            await session.close()


class RemoteClient:
    """The calls of `ApiClient` against the server of a kubeconfig (see the module
    docstring). Use it in `async with`, or `close()` it."""

    def __init__(self, *, server: str, ssl_context: ssl.SSLContext | None,
                 token: str | None = None, user_agent: str = USER_AGENT,
                 field_manager: str = "fakeapi", timeout: float = REQUEST_TIMEOUT,
                 kinds: Iterable[ResourceType] = KINDS) -> None:
        self.server = server.rstrip("/")
        self.field_manager = field_manager
        """The manager of server-side apply patches."""
        self.user = ""
        """Whom the client impersonates ("": the credentials' own identity)."""
        self._groups: tuple[str, ...] = ()
        self._connections = _Connections(ssl_context)
        self._headers = {"Accept": JSON, "User-Agent": user_agent}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._watch_timeout = aiohttp.ClientTimeout(total=None, sock_connect=timeout)
        self._kinds = {k.resource_id: k for k in kinds}
        self._served: tuple[Kind, ...] | None = None

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
        """Close the connections, the impersonating clients' too (a later call opens new
        ones)."""
        await self._connections.close()

    def impersonating(self, user: str, groups: Iterable[str] = (),
                      extra: Mapping[str, Iterable[str]] | None = None,
                      field_manager: str | None = None) -> RemoteClient:
        """A client acting as `user` (with these groups and extra values) through this
        one's credentials and connections; the credentials need the `impersonate` verb."""
        other = copying.copy(self)
        other.user = user
        other.field_manager = field_manager or user.rsplit(":", 1)[-1]
        headers = {k: v for k, v in self._headers.items() if not k.startswith("Impersonate-")}
        headers["Impersonate-User"] = user
        other._headers = headers
        other._groups = tuple(groups)
        for key, values in (extra or {}).items():
            headers[IMPERSONATE_EXTRA + urllib.parse.quote(key, safe="")] = ",".join(values)
        return other

    def _request_headers(self, extra: Mapping[str, str]) -> list[tuple[str, str]]:
        """The headers of one request (Impersonate-Group once per group)."""
        return [*self._headers.items(), *(("Impersonate-Group", g) for g in self._groups),
                *extra.items()]

    # ----- discovery --------------------------------------------------------------------

    async def discover(self) -> tuple[Kind, ...]:
        """Ask the server which group/versions it serves; `resources()` and `kind()` then
        answer for those only (before, for every row of the kind table)."""
        core = await self.request("GET", "/api")
        served = {("", v) for v in core.get("versions") or ()}
        groups = await self.request("GET", "/apis")
        for group in groups.get("groups") or ():
            served |= {(group.get("name", ""), v.get("version", ""))
                       for v in group.get("versions") or ()}
        self._served = tuple(k for k in self._kinds.values()
                             if isinstance(k, Kind) and k.group_version in served)
        return self._served

    def resources(self) -> tuple[Kind, ...]:
        """The kind table's rows the server serves (all of them before `discover()`)."""
        if self._served is not None:
            return self._served
        return tuple(k for k in self._kinds.values() if isinstance(k, Kind))

    def latest_revision(self, resource: str) -> int:
        """0: a remote server's newest revision is known only through a watch, so an
        informer over this client is busy until it has synced, never after."""
        return 0

    def serve_pod_streams(self, node: str, streams: NodeStreams | None) -> None:
        """Keep `node`'s pod streams for the emulate process to serve (`pod_streams`); the
        remote API server is not told."""
        if streams is None:
            self._connections.pod_streams.pop(node, None)
        else:
            self._connections.pod_streams[node] = streams

    @property
    def pod_streams(self) -> Mapping[str, NodeStreams]:
        """The pod streams the nodes of this client (and its impersonations) registered."""
        return self._connections.pod_streams

    # ----- paths ------------------------------------------------------------------------

    def kind(self, resource: str) -> ResourceType:
        """The type served under a resource id (404 as the in-process client's when the
        kind table has no such row)."""
        kind = self._kinds.get(resource)
        if kind is None or self._served is not None and kind not in self._served:
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
        session = self._connections.get()
        headers = self._request_headers({"Content-Type": content_type} if body is not None
                                        else {})
        data = None if body is None else dumps(body)
        url = self.server + path
        try:
            async with session.request(method, url, data=data, headers=headers,
                                       params=dict(query or {}), timeout=self._timeout) as resp:
                raw = await resp.read()
                status, phrase = resp.status, resp.reason or ""
        except (TimeoutError, aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as e:
            raise self._unreachable(e) from None
        if status < 400:
            return loads(raw) if raw else {}
        raise _error(status, phrase, raw)

    def _unreachable(self, e: BaseException) -> Unreachable:
        return Unreachable(f"cannot reach the API server at {self.server}: "
                           f"{e or type(e).__name__}")

    async def snapshot(self, resource: str, namespace: str | None = None, *,
                       label_selector: str = "", field_selector: str = "",
                       copy: bool = True) -> tuple[builtins.list[Obj], int]:
        """LIST in pages, with the revision the list is consistent at (the first page's);
        each item has its kind and apiVersion, as the in-process client's."""
        query = {k: v for k, v in (("labelSelector", label_selector),
                                   ("fieldSelector", field_selector)) if v}
        query["limit"] = str(LIST_PAGE)
        path = self.path(resource, namespace)
        kind = self.kind(resource)
        items: builtins.list[Obj] = []
        revision: int | None = None
        while True:
            answer = await self.request("GET", path, query=query)
            meta = answer.get("metadata") or {}
            if revision is None:
                revision = int(meta.get("resourceVersion") or 0)
            items += [{"apiVersion": kind.api_version, "kind": kind.kind, **item}
                      for item in answer.get("items") or ()]
            if not meta.get("continue"):
                return items, revision
            query["continue"] = meta["continue"]

    async def watch(self, resource: str, namespace: str | None = None, *,
                    resource_version: str = "", label_selector: str = "",
                    field_selector: str = "", timeout: float = 1e9, copy: bool = True
                    ) -> AsyncIterator[tuple[str, Obj]]:
        """Watch events as (type, object), with bookmarks, until the server ends the watch
        (after at most `WATCH_TIMEOUT` s); a compacted revision is an ERROR event with a 410
        Status, other refusals raise their `ApiError`."""
        query = {"watch": "true", "allowWatchBookmarks": "true",
                 "timeoutSeconds": str(max(1, int(min(timeout, WATCH_TIMEOUT))))}
        for key, value in (("resourceVersion", resource_version),
                           ("labelSelector", label_selector),
                           ("fieldSelector", field_selector)):
            if value:
                query[key] = value
        session = self._connections.get()
        url = self.server + self.path(resource, namespace)
        try:
            async with session.get(url, params=query, headers=self._request_headers({}),
                                   timeout=self._watch_timeout) as resp:
                if resp.status >= 400:
                    error = _error(resp.status, resp.reason or "", await resp.read())
                    if error.code != 410:
                        raise error
                    yield ERROR, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                  "code": 410, "reason": error.reason,
                                  "message": error.message}
                    return
                buffer = bytearray()
                async for chunk in resp.content.iter_any():
                    buffer += chunk
                    start = 0
                    while (end := buffer.find(b"\n", start)) >= 0:
                        line = bytes(buffer[start:end])
                        start = end + 1
                        if line.strip():
                            event = loads(line)
                            yield event["type"], event["object"]
                    del buffer[:start]
        except (TimeoutError, aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as e:
            raise self._unreachable(e) from None

    async def get(self, resource: str, name: str, namespace: str = "") -> Obj:
        """GET one object."""
        answer: Obj = await self.request("GET", self.path(resource, namespace, name))
        return answer

    async def list(self, resource: str, namespace: str | None = None, *,
                   label_selector: str = "", field_selector: str = "",
                   copy: bool = True) -> builtins.list[Obj]:
        """LIST objects (all namespaces when namespace is None); each item has its kind and
        apiVersion, as the in-process client's."""
        return (await self.snapshot(resource, namespace, label_selector=label_selector,
                                    field_selector=field_selector))[0]

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

    async def create_subresource(self, resource: str, name: str, subresource: str, body: Obj,
                                 *, namespace: str = "", copy: bool = True) -> Obj:
        """POST a body to a subresource that takes one (`pods/NAME/binding`)."""
        answer: Obj = await self.request(
            "POST", self.path(resource, namespace, name, subresource), body=body)
        return answer


def _error(status: int, phrase: str, raw: bytes) -> ApiError:
    """The `ApiError` of an error answer: its Status, or client-go's reading of a page."""
    try:
        answer = loads(raw)
    except ValueError:
        answer = None
    if isinstance(answer, dict) and answer.get("kind") == "Status":
        return ApiError.from_status(answer, status)
    text = raw.decode(errors="replace").strip()[:200]
    return ApiError(status, REASONS.get(status, "Unknown"),
                    f"the server answered {status} {phrase}" + (f": {text}" if text else ""))
