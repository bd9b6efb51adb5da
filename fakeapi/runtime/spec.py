"""How a component package declares what it offers, and how a `--components` value selects.

Declaring costs nothing: a spec names a component and a function that builds it, and that
function imports the component's modules only when it runs. So listing, validating and
choosing components (`fakeapi --help`, `--components`) loads no component code, and a
process loads only the components it runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from fakeapi.machinery.features import GateReader

if TYPE_CHECKING:
    from fakeapi.runtime.component import ComponentContext
    from fakeapi.runtime.supervisor import Component


@dataclasses.dataclass(frozen=True, kw_only=True)
class ComponentSpec:
    """A component a package offers: its name and how to build it."""

    name: str
    build: Callable[[ComponentContext], Component]
    """Builds the component (importing its modules on the first call)."""
    service_account: str = ""
    """The kube-system service account it acts as (its name when empty; see rbac.py)."""
    enabled_by_default: bool = True
    help: str = ""
    required_gates: tuple[str, ...] = ()
    """Feature gates that must all be on for the component to run (upstream's
    requiredFeatureGates of a controller); with one off it is not started."""

    def gated_off(self, gates: GateReader) -> bool:
        """Whether a required gate is off."""
        return not all(gates.enabled(g) for g in self.required_gates)


NONE = "none"
"""The `--components` value that runs no component."""


class ComponentSelectionError(ValueError):
    """A `--components` value that names unknown components."""


def select(specs: Sequence[ComponentSpec], selection: str | Iterable[str]) -> list[ComponentSpec]:
    """The specs `selection` enables, in kube-controller-manager's `--controllers` syntax:
    `*` turns on the default ones, `name` turns one on, `-name` turns one off; `none` alone
    selects nothing (an API-only server)."""
    items = [s.strip() for s in (selection.split(",") if isinstance(selection, str)
                                 else selection) if s.strip()]
    if items == [NONE]:
        return []
    known = {s.name for s in specs}
    unknown = sorted({i.lstrip("-") for i in items if i != "*"} - known)
    if unknown:
        raise ComponentSelectionError(
            f"{', '.join(repr(u) for u in unknown)} not in the list of known components: "
            f"{', '.join(sorted(known))}")
    star = "*" in items
    on = {i for i in items if i != "*" and not i.startswith("-")}
    off = {i[1:] for i in items if i.startswith("-")}
    return [s for s in specs
            if s.name not in off and (s.name in on or (star and s.enabled_by_default))]
