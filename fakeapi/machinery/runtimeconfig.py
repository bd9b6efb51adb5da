"""kube-apiserver's `--runtime-config`: which API group/versions (and resources) are served.

The syntax and the errors are upstream's (k8s.io/apiserver/pkg/server/resourceconfig,
`MergeAPIResourceConfigs`): comma-separated `key=value` pairs (a ConfigurationMap; a later
key wins, a bare key means `true`); `api/all`, `api/ga`, `api/beta` and `api/alpha` switch
every matching version first, in that order, then `group/version` and
`group/version/resource` keys win over them. A key of a group the server does not know is
ignored; a version the group does not register is refused.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping

API_ALL, API_GA, API_BETA, API_ALPHA = "api/all", "api/ga", "api/beta", "api/alpha"
_GA = re.compile(r"^v\d+$")
_BETA = re.compile(r"^v\d+beta\d+$")
_ALPHA = re.compile(r"^v\d+alpha\d+$")
MATCHERS: dict[str, Callable[[str], bool]] = {
    API_ALL: lambda version: True,
    API_GA: lambda version: bool(_GA.match(version)),
    API_BETA: lambda version: bool(_BETA.match(version)),
    API_ALPHA: lambda version: bool(_ALPHA.match(version)),
}
"""The group-wide keys, in the order upstream applies them."""


class RuntimeConfigError(ValueError):
    """A `--runtime-config` value kube-apiserver refuses at start (upstream's message)."""


GroupVersion = tuple[str, str]
GroupVersionResource = tuple[str, str, str]


@dataclasses.dataclass(frozen=True)
class RuntimeConfig:
    """The parsed flag: each key and its value as given (a ConfigurationMap)."""

    overrides: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def resolve(self, registered: Mapping[str, Iterable[str]],
                defaults: Mapping[GroupVersion, bool]
                ) -> tuple[dict[GroupVersion, bool], dict[GroupVersionResource, bool]]:
        """Which group/versions are on (from `defaults`, every version the server can
        serve and whether it is on by default) and the resources switched one by one.

        `registered`: every version each known group registers (a version it registers but
        doesn't serve may be named, and does nothing).
        """
        versions = dict(defaults)
        for key in MATCHERS:
            value = self.overrides.get(key)
            if value is None:
                continue
            if value not in ("true", "false"):
                raise RuntimeConfigError(f"invalid value {key}={value}")
            for gv in versions:
                if MATCHERS[key](gv[1]):
                    versions[gv] = value == "true"
        known = {group: set(vs) for group, vs in registered.items()}
        resources: dict[GroupVersionResource, bool] = {}
        explicit: dict[GroupVersion, bool] = {}
        for key, value in self.overrides.items():
            if key in MATCHERS:
                continue
            tokens = key.split("/")
            if len(tokens) not in (2, 3):
                continue
            group, version = tokens[0], tokens[1]
            if group not in known:
                continue  # same as upstream: a group the server doesn't register is skipped
            if version not in known[group]:
                raise RuntimeConfigError(
                    f"group version {group}/{version} that has not been registered")
            enabled = _bool(key, value)
            if len(tokens) == 2:
                explicit[(group, version)] = enabled
                continue
            if tokens[2].lower() != tokens[2]:
                raise RuntimeConfigError(
                    f"invalid key {key}: group/version/resource and resource is always "
                    f'lowercase plural, not "{tokens[2]}"')
            resources[(group, version, tokens[2])] = enabled
        for gv, enabled in explicit.items():
            if gv in versions:  # a registered version served by no row: nothing to switch
                versions[gv] = enabled
        return versions, resources


def parse_runtime_config(text: str, into: RuntimeConfig | None = None) -> RuntimeConfig:
    """One `--runtime-config` value added to what earlier ones set (a ConfigurationMap:
    `key=value` pairs split at commas, blanks trimmed, a key without `=` has the value "")."""
    overrides = dict(into.overrides) if into is not None else {}
    for pair in text.split(","):
        if not pair:
            continue
        key, sep, value = pair.partition("=")
        overrides[key.strip()] = value.strip() if sep else ""
    return RuntimeConfig(overrides)


def _bool(key: str, value: str) -> bool:
    """Go's strconv.ParseBool, with upstream's message for anything else ("" is true)."""
    if value == "":
        return True
    if value in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if value in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    raise RuntimeConfigError(f'invalid value of {key}: {value}, err: strconv.ParseBool: '
                             f'parsing "{value}": invalid syntax')

