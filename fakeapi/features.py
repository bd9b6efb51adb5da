"""Feature gates: which optional API behaviour is on (the 1.37 defaults table comes here)."""

from __future__ import annotations

from collections.abc import Mapping


class FeatureGates:
    """The gates in effect: explicit settings over the defaults."""

    def __init__(self, overrides: Mapping[str, bool] | None = None) -> None:
        self.overrides = dict(overrides or {})

    def enabled(self, name: str) -> bool:
        """Whether a gate is on (unknown gates count as on until the defaults table lands)."""
        return self.overrides.get(name, True)

    def as_dict(self) -> dict[str, bool]:
        """Explicit settings, for display."""
        return dict(self.overrides)
