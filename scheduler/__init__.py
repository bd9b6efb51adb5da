"""The scheduler: the structured allocator and the pod scheduling loop (to come)."""

from __future__ import annotations

from fakeapi.runtime.component import ComponentSpec

COMPONENTS: tuple[ComponentSpec, ...] = ()
"""The scheduler's components (none yet)."""
