"""Who is asking and how: the per-request options every registry operation takes."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping

from fakeapi.auth.authn import UserInfo
from fakeapi.machinery.requestinfo import HttpRequest, request_head
from fakeapi.patching.managedfields import manager_from_user_agent


@dataclasses.dataclass(frozen=True)
class RequestContext:
    """The caller's identity and the write options of one request."""

    user: str = "system:admin"
    groups: tuple[str, ...] = ("system:masters", "system:authenticated")
    field_manager: str = ""
    field_validation: str = "Warn"
    dry_run: bool = False
    user_agent: str = ""
    force: bool = False
    uid: str = ""
    extra: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict, hash=False)
    """The caller's extra attributes (e.g. the node-name of a node-bound service account)."""
    verb: str = ""
    """The authorization verb of the request (`update`, `patch`, ...), for admission checks."""
    subresource: str = ""
    """The subresource the request writes (`status`, `binding`, ...), for the recording."""
    http: HttpRequest | None = dataclasses.field(default=None, compare=False, hash=False)
    """The HTTP request itself, when the write came over HTTP (the recording keeps it)."""

    @functools.cached_property
    def manager(self) -> str:
        """The field manager: the explicit one, else derived from the user agent like upstream."""
        return self.field_manager or manager_from_user_agent(self.user_agent) or "unknown"

    @functools.cached_property
    def _head(self) -> dict:
        return request_head(verb=self.verb, subresource=self.subresource,
                            field_manager=self.field_manager, dry_run=self.dry_run)

    def recorded(self, revision: int) -> dict:
        """What the event committed at `revision` records about this request (its `q`)."""
        if self.http is None:
            return self._head
        return self.http.head(self._head, revision)

    @functools.cached_property
    def requester(self) -> UserInfo:
        """The caller as the authorizer sees them (for strategies' authorization checks)."""
        return UserInfo(self.user, uid=self.uid, groups=tuple(self.groups), extra=self.extra)
