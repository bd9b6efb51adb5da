"""Emulated kubelets with fake DRA drivers (to come)."""

from __future__ import annotations

from fakeapi.runtime.component import ComponentSpec

COMPONENTS: tuple[ComponentSpec, ...] = ()
"""The node emulator's components (none yet)."""
