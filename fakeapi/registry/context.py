"""Who is asking and how: the per-request options every registry operation takes."""

from __future__ import annotations

import dataclasses


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

    @property
    def manager(self) -> str:
        """The field manager: the explicit one, else derived from the user agent like upstream."""
        from fakeapi.apply import manager_from_user_agent

        return self.field_manager or manager_from_user_agent(self.user_agent) or "unknown"
