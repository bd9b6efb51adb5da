"""What the recording keeps of the request behind each write (the `q` of a log record).

Every committed event says how it was asked for: the authorization verb, the subresource,
the field manager and whether it was a dry run (a dry run commits nothing, so a recorded
event never is one). A write that came over HTTP also keeps the request itself (method,
path with its query, content type, body, the caller's groups and user agent, from which a
request without a field manager takes its manager) on the first event it
committed, so a replay can send it again; the further events of the same request (a
collection delete) point back at that first revision with `same`.
"""

from __future__ import annotations

import base64
import dataclasses
from typing import Any


def request_head(*, verb: str, subresource: str = "", field_manager: str = "",
                 dry_run: bool = False) -> dict[str, Any]:
    """The fields every event records about its request (empty ones left out)."""
    head: dict[str, Any] = {"v": verb}
    if subresource:
        head["sub"] = subresource
    if field_manager:
        head["fm"] = field_manager
    if dry_run:
        head["dry"] = True
    return head


@dataclasses.dataclass(slots=True, kw_only=True, eq=False)
class HttpRequest:
    """One HTTP write request as a replay can send it again; it remembers the revision of
    the first event it committed (`first`)."""

    method: str
    path: str
    content_type: str
    body: bytes
    groups: tuple[str, ...]
    user_agent: str = ""
    first: int = 0

    def head(self, base: dict[str, Any], revision: int) -> dict[str, Any]:
        """`base` with the request itself on its first event, or a pointer to that event."""
        if self.first:
            return {**base, "same": self.first}
        self.first = revision
        head = {**base, "m": self.method, "p": self.path, "g": list(self.groups)}
        if self.content_type:
            head["ct"] = self.content_type
        if self.user_agent:
            head["ua"] = self.user_agent
        if self.body:
            try:
                head["b"] = self.body.decode()
            except UnicodeDecodeError:
                head["b64"] = base64.b64encode(self.body).decode()
        return head


def recorded_body(head: dict[str, Any]) -> bytes:
    """The body a recorded request head carries (b"" without one)."""
    if "b64" in head:
        return base64.b64decode(head["b64"])
    body = head.get("b", "")
    return body.encode() if isinstance(body, str) else b""
