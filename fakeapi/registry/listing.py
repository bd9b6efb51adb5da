"""Lists as upstream's storage pages them: one page of a kind's objects at a revision (the
durable one, an exact resourceVersion, or a continue token's), `limit` and opaque `continue`
tokens, `remainingItemCount`, and the 410 of a compacted revision.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any

import orjson

from fakeapi.machinery.errors import ApiError, Cause, bad_request, expired
from fakeapi.machinery.gvk import ResourceType
from fakeapi.machinery.jsonio import dumps
from fakeapi.storage.log import CompactedError, Event
from fakeapi.storage.store import Store

Obj = dict[str, Any]
CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted between "
    "the time the first chunk was returned and now may show up in the list.")


class ListResult:
    """A page of a list: encoded items, the list's revision, the continue token, and how many
    items follow this page (upstream's remainingItemCount: None when not counted)."""

    __slots__ = ("items", "revision", "continue_token", "remaining")

    def __init__(self, *, items: list[Event | Obj], revision: int, continue_token: str,
                 remaining: int | None = None) -> None:
        self.items = items
        self.revision = revision
        self.continue_token = continue_token
        self.remaining = remaining


def item_raw(item: Event | Obj) -> bytes:
    """JSON of a list item (events carry it; old versions are encoded on demand)."""
    return item.raw if isinstance(item, Event) else dumps(item)


def item_object(item: Event | Obj) -> Obj:
    """The object of a list item."""
    return item.object if isinstance(item, Event) else item


def list_page(store: Store, kind: ResourceType, namespace: str | None, *,
              predicate: Callable[[Obj], bool] | None = None, limit: int = 0,
              continue_token: str = "", resource_version: str = "",
              resource_version_match: str = "") -> ListResult:
    """One page of the kind's matching objects, consistent at the list's revision (the
    durable one unless a continue token or an exact resourceVersion names another)."""
    after: str | None = None
    revision = store.visible_revision
    at: int | None = None
    if continue_token:
        at, after = _decode_continue(continue_token)
        if at < 0:  # same as upstream: a negative revision continues at the latest one
            at = None
        else:
            revision = at
    elif resource_version_match == "Exact":
        at = _parse_rv(resource_version)
        if at > revision:  # same as upstream: etcd's future revision, as for NotOlderThan
            raise _too_large(at, revision)
        revision = at
    elif resource_version not in ("", "0"):
        wanted = _parse_rv(resource_version)
        if wanted > revision:
            raise _too_large(wanted, revision)
    items: list[Event | Obj] = []
    last_key = ""
    more = False
    remaining: int | None = None
    try:
        scan = store.scan(kind.resource_id, namespace, after=after, at_revision=at,
                          visible=True)
        for item in scan:
            obj = item_object(item)
            if predicate is not None and not predicate(obj):
                continue
            if limit and len(items) >= limit:
                more = True
                if predicate is None:  # same as upstream: counted only without selectors
                    remaining = 1 + sum(1 for _ in scan)
                break
            items.append(item)
            if isinstance(item, Event):
                last_key = item.key
            else:
                meta = obj["metadata"]
                last_key = f"{meta.get('namespace', '')}/{meta['name']}"
    except CompactedError as e:
        if continue_token:
            raise expired(CONTINUE_EXPIRED) from e
        raise expired(str(e)) from e
    token = _encode_continue(revision, last_key) if more else ""
    return ListResult(items=items, revision=revision, continue_token=token,
                      remaining=remaining)


def _too_large(wanted: int, current: int) -> ApiError:
    """Upstream storage.NewTooLargeResourceVersionError: a revision the server has not reached."""
    return ApiError(504, "Timeout", f"Timeout: Too large resource version: {wanted}, "
                    f"current: {current}", retry_after=1, causes=[Cause(
                        "", "Too large resource version", "ResourceVersionTooLarge")])


def _parse_rv(value: str) -> int:
    try:
        rv = int(value)
    except ValueError:
        raise bad_request(f"invalid resource version: {value!r}") from None
    if rv < 0:
        raise bad_request(f"invalid resource version: {value!r}")
    return rv


def _encode_continue(revision: int, key: str) -> str:
    raw = orjson.dumps({"v": "meta.k8s.io/v1", "rv": revision, "start": key})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[int, str]:
    """Upstream storage.DecodeContinue, with its errors wrapped as `invalid continue token`."""
    try:
        data = orjson.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (ValueError, binascii.Error, orjson.JSONDecodeError):
        data = None
    if not isinstance(data, dict):
        raise _bad_continue("continue key is not valid")
    if data.get("v") != "meta.k8s.io/v1":
        raise _bad_continue("continue key is not valid: server does not recognize this encoded "
                            f"version {data.get('v') or ''}")
    rv, start = data.get("rv"), data.get("start")
    if not isinstance(rv, int) or isinstance(rv, bool) or rv == 0:
        raise _bad_continue("continue key is not valid: incorrect encoded start resourceVersion "
                            "(version meta.k8s.io/v1)")
    if not isinstance(start, str) or not start:
        raise _bad_continue("continue key is not valid: encoded start key empty "
                            "(version meta.k8s.io/v1)")
    return rv, start


def _bad_continue(why: str) -> ApiError:
    return bad_request(f"invalid continue token: {why}")
