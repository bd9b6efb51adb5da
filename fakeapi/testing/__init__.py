"""The pytest plugin for driver authors and what it stands on: `FakeapiCluster` (an
in-process control plane and HTTPS server in a background thread, on a virtual clock),
`assert_matches_golden` (golden event logs) and the plugin's fixture, marker and options
(`fakeapi.testing.plugin`, registered as the `fakeapi` pytest11 entry point).

Imports: everything but the CLI (it stands beside the CLI, at the top)."""

from fakeapi.testing.cluster import ClusterSettings, FakeapiCluster, LoggedEvent
from fakeapi.testing.golden import assert_matches_golden

__all__ = ["ClusterSettings", "FakeapiCluster", "LoggedEvent", "assert_matches_golden"]
