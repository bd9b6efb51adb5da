"""What the layers below the kind table know of a served kind: its group, version, kind,
plural and scope (apimachinery's GroupVersionKind and GroupVersionResource in one).

The kind table's rows (`fakeapi.registry.rest.Kind`) extend it with everything else, so a
row can be handed to any layer that needs only the type's identity.
"""

from __future__ import annotations

import dataclasses
import functools


@dataclasses.dataclass(frozen=True, kw_only=True)
class ResourceType:
    """One served group/version/kind, stored and addressed under its plural."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool

    @property
    def singular(self) -> str:
        """Lower-case kind, as upstream's singularResource."""
        return self.kind.lower()

    @property
    def api_version(self) -> str:
        """`group/version`, or just `version` for the core group."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_version(self) -> tuple[str, str]:
        """(group, version) pair."""
        return (self.group, self.version)

    @functools.cached_property
    def resource_id(self) -> str:
        """Storage prefix: `plural.group` (as in RBAC and error messages), `plural` for core
        (worked out once: every store access names it)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def has_status(self) -> bool:
        """Whether `/status` is a subresource (status then changes only through it)."""
        return False
