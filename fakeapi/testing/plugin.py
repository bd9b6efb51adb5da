"""The pytest plugin (entry point `fakeapi`, loaded wherever fakeapi is installed): the
`fakeapi_cluster` fixture, the `fakeapi` marker, the `--fakeapi-*` options and
`--update-golden`.

A test's cluster is configured by its `@pytest.mark.fakeapi(...)` markers (a function's
over its class's over its module's), over the command-line options, over the defaults
(`ClusterSettings`). Loading the plugin imports no server: a cluster is built when a test
asks for one.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from fakeapi.machinery import features
from fakeapi.testing.cluster import CLOCK_MODES, ClusterSettings, FakeapiCluster, GoldenOptions

MARKER = "fakeapi"
MARKER_HELP = (f"{MARKER}(feature_gates={{...}}, node_profile='gpu', nodes=1, "
               "clock='virtual', seed=1, components='*'): the fakeapi_cluster of this test")
FIELDS = ("feature_gates", "node_profile", "nodes", "clock", "seed", "components")
"""What a marker may set (the fields of ClusterSettings)."""
_WRITTEN = pytest.StashKey[list]()


def feature_gates(text: str) -> dict[str, bool]:
    """`A=true,B=false`, parsed and refused as kube-apiserver's `--feature-gates`."""
    try:
        gates = features.parse_feature_gates(text)
        features.FeatureGates(gates)
    except features.FeatureGateError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return gates


def pytest_addoption(parser: pytest.Parser) -> None:
    """The `--fakeapi-*` options (defaults for every test's cluster) and `--update-golden`."""
    group = parser.getgroup("fakeapi", "fakeapi: an in-process Kubernetes control plane")
    group.addoption("--fakeapi-feature-gates", type=feature_gates, default={},
                    metavar="A=true,B=false",
                    help="feature gates over the 1.37 defaults (a marker's win)")
    group.addoption("--fakeapi-node-profile", metavar="NAME|FILE",
                    help="what each emulated node offers: a shipped profile or a profile file")
    group.addoption("--fakeapi-nodes", type=int, metavar="N",
                    help="how many emulated nodes (default 2)")
    group.addoption("--fakeapi-clock", choices=CLOCK_MODES,
                    help="virtual (the default: time moves with advance()) or real")
    group.addoption("--update-golden", action="store_true",
                    help="rewrite the golden logs of assert_matches_golden instead of "
                         "comparing them")


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker."""
    config.addinivalue_line("markers", MARKER_HELP)
    config.stash[_WRITTEN] = []


def settings_for(config: pytest.Config, markers: Iterator[pytest.Mark]) -> ClusterSettings:
    """The options over the defaults, then each marker (closest last) over those; a marker
    with an argument it doesn't know fails the test that carries it."""
    chosen: dict[str, Any] = {"feature_gates": dict(config.getoption("fakeapi_feature_gates"))}
    for option in ("node_profile", "nodes", "clock"):
        value = config.getoption(f"fakeapi_{option}")
        if value is not None:
            chosen[option] = value
    for mark in reversed(list(markers)):
        if mark.args:
            pytest.fail(f"@pytest.mark.{MARKER} takes keyword arguments only: "
                        f"{', '.join(FIELDS)}", pytrace=False)
        unknown = sorted(set(mark.kwargs) - set(FIELDS))
        if unknown:
            pytest.fail(f"@pytest.mark.{MARKER} got unknown arguments {', '.join(unknown)}; "
                        f"it takes {', '.join(FIELDS)}", pytrace=False)
        for key, value in mark.kwargs.items():
            if key == "feature_gates":
                chosen[key] = {**chosen[key], **_gates(value)}
            elif key == "node_profile" and isinstance(value, os.PathLike):
                chosen[key] = os.fspath(value)
            else:
                chosen[key] = value
    return _checked(ClusterSettings(**chosen))


def _gates(value: object) -> Mapping[str, bool]:
    if isinstance(value, str):
        try:
            return features.parse_feature_gates(value)
        except features.FeatureGateError as e:
            pytest.fail(f"@pytest.mark.{MARKER}(feature_gates={value!r}): {e}", pytrace=False)
    if not isinstance(value, Mapping) or not all(
            isinstance(k, str) and isinstance(v, bool) for k, v in value.items()):
        pytest.fail(f"@pytest.mark.{MARKER}(feature_gates=...) takes a dict of gate names to "
                    f"True/False or 'A=true,B=false', not {value!r}", pytrace=False)
    return value


def _checked(settings: ClusterSettings) -> ClusterSettings:
    """Refuse settings a cluster can't run with, saying which and why."""
    problems = []
    if settings.clock not in CLOCK_MODES:
        problems.append(f"clock={settings.clock!r}: one of {', '.join(CLOCK_MODES)}")
    if not isinstance(settings.nodes, int) or isinstance(settings.nodes, bool) \
            or settings.nodes < 0:
        problems.append(f"nodes={settings.nodes!r}: a number >= 0")
    if settings.node_profile is not None and not isinstance(settings.node_profile, str):
        problems.append(f"node_profile={settings.node_profile!r}: a profile's name or file")
    if not isinstance(settings.components, str):
        problems.append(f"components={settings.components!r}: a list like '*,-kubelet'")
    if settings.seed is not None and (not isinstance(settings.seed, int)
                                      or isinstance(settings.seed, bool)):
        problems.append(f"seed={settings.seed!r}: a number or None")
    try:
        features.FeatureGates(settings.feature_gates)
    except features.FeatureGateError as e:
        problems.append(f"feature gates: {e}")
    if problems:
        pytest.fail(f"fakeapi_cluster can't run with {'; '.join(problems)}", pytrace=False)
    return settings


@pytest.fixture
def fakeapi_cluster(request: pytest.FixtureRequest) -> Iterator[FakeapiCluster]:
    """A fresh in-process control plane and HTTPS server on an ephemeral loopback port, run
    in a background thread: `url`, `kubeconfig`, `client` (a `kubernetes` ApiClient),
    `advance(duration)`, `settle()`, `events()`. Stopped, with everything it started, after
    the test."""
    from fakeapi.runtime.spec import ComponentSelectionError
    from kubelet_emu.profile import ProfileError

    settings = settings_for(request.config, request.node.iter_markers(MARKER))
    golden = GoldenOptions(directory=request.path.parent,
                           update=request.config.getoption("update_golden"),
                           written=request.config.stash[_WRITTEN])
    cluster = FakeapiCluster(settings, golden=golden)
    try:
        cluster.start()
    except (ProfileError, ComponentSelectionError) as e:
        pytest.fail(f"fakeapi_cluster can't start: {e}", pytrace=False)
    try:
        yield cluster
    finally:
        cluster.close()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Say which golden logs `--update-golden` rewrote."""
    written = config.stash.get(_WRITTEN, [])
    if written:
        terminalreporter.section("fakeapi golden logs rewritten")
        for path in written:
            terminalreporter.write_line(str(path))
