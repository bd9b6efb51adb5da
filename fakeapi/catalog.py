"""Every component any package offers, in start order: the catalogue `--components` selects
from and the control plane builds from. Listing it loads no component code (each spec
imports its component when it builds it).

Imports: the runtime's component specs and the component packages' declarations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import controllers
import kubelet_emu
import scheduler
from fakeapi.runtime.spec import ComponentSpec

if TYPE_CHECKING:
    from kubelet_emu.settings import EmulatorSettings


def all_components(emulator: EmulatorSettings | None = None) -> tuple[ComponentSpec, ...]:
    """Every component, the node emulator configured by `emulator` (None: the default)."""
    return (*controllers.COMPONENTS, *scheduler.COMPONENTS,
            *kubelet_emu.components(emulator))


ALL_COMPONENTS: tuple[ComponentSpec, ...] = all_components()
"""Every component any package offers, in start order (the default node emulator)."""
