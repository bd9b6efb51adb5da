"""The composition root of `fakeapi emulate`: the chosen components and emulated nodes in a
process of their own, against any Kubernetes API server over HTTPS.

The same components, informers and supervisor as the in-process control plane
(`fakeapi.controlplane`), built by the same function (`runtime.assembly`), but every client is
a `RemoteClient`. Who they act as (`IDENTITIES`):

- `service-accounts`: each component impersonates its kube-system service account, the
  kubelets and drivers bound to their node with the node-name extra, and the shared
  informers act as `system:kube-controller-manager`: the identities the in-process plane
  uses, so RBAC, managedFields and the log's actors are the same whether a component runs in
  `fakeapi serve` or here. The kubeconfig's user needs the `impersonate` verb (fakeapi
  serve's admin has it).
- `kubeconfig`: everything acts as the kubeconfig's own user (a real cluster; the README
  lists the ClusterRoles it needs).
- `auto` (the default): `service-accounts` when the server is a fakeapi server (it serves
  the emulator's API group), else `kubeconfig`.

The singletons run under leader election (`runtime.leaderelection`, unless turned off), as
upstream's binaries do: the scheduler holds the Lease kube-system/kube-scheduler as its own
identity, the controllers kube-system/kube-controller-manager as the controller manager's.
The kubelets are not elected: each process runs its shard's nodes.

With `kubelet_api`, the process serves the kubelet API of its nodes on one HTTPS port
(`kubelet_emu.kubelet_api`), which each node advertises as its InternalIP and
`daemonEndpoints.kubeletEndpoint.Port`, so that the API server proxies `kubectl logs` and
`exec` to it. Its serving cert is self-signed (the kubeconfig's CA key is not ours to have),
as a kubelet without one makes; client certificates are verified against the kubeconfig's CA.

Imports: machinery, auth (identities), the clients, the runtime, the catalogue and the
components' settings: the composition root beside `fakeapi.controlplane`.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fakeapi.auth.authn import (
    MASTERS,
    NODE_NAME_KEY,
    service_account_groups,
    service_account_username,
)
from fakeapi.auth.bootstrap import COMPONENT_NAMESPACE
from fakeapi.auth.tls import kubelet_serving_context
from fakeapi.catalog import all_components
from fakeapi.client import ApiClient
from fakeapi.machinery.clock import Clock, RealClock
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.features import FeatureGates
from fakeapi.machinery.randomness import RandomSource
from fakeapi.registry.kinds import NODES, PODS
from fakeapi.remote_client import RemoteClient, Unreachable
from fakeapi.runtime.assembly import build_components
from fakeapi.runtime.informer import Informer, Informers
from fakeapi.runtime.leaderelection import (
    DEFAULT_TIMING,
    LeaderElector,
    LeaseTiming,
    candidate_identity,
)
from fakeapi.runtime.spec import ComponentSpec, select
from fakeapi.runtime.supervisor import Component, Health, Supervisor
from kubelet_emu.kubelet_api import KubeletApiServer
from kubelet_emu.settings import EmulatorSettings

log = logging.getLogger(__name__)
IDENTITIES = ("auto", "service-accounts", "kubeconfig")
"""How an emulate process's components authenticate (see the module docstring)."""
INFORMERS_USER = "system:kube-controller-manager"
"""Who the shared informers list and watch as (the in-process plane's informers' user)."""
EMULATOR_GROUP = "emulator.fakeapi.dev"
"""The API group only a fakeapi server serves (how `auto` tells one)."""
SCHEDULER_LEASE = "kube-scheduler"
CONTROLLERS_LEASE = "kube-controller-manager"
PROBE_SECONDS = 2.0
"""How often `/readyz`'s `apiserver` check asks the server."""
NOT_ELECTED = frozenset({"kubelet"})
"""Components every process runs for its own nodes (no leader election)."""


class StartError(Exception):
    """The emulate process can't start against this server (the message says why)."""


def refusal(server: str, e: ApiError) -> str:
    """What a refusal of the API server at `server` says (at start-up and in `/readyz`)."""
    return f"the API server at {server} refused ({e.code} {e.reason}): {e.message}"


class ServerProbe:
    """The `apiserver` readiness check: every `PROBE_SECONDS` the informers' identity lists
    no Node, so `/readyz` says when the server can't be reached or refuses, and why."""

    def __init__(self, client: ApiClient, *, server: str, clock: Clock) -> None:
        self.client = client
        self.server = server
        self.clock = clock
        self.error = ""
        """Why the last probe failed ("" when it answered)."""

    async def probe(self) -> None:
        """Ask once; `error` says what came of it."""
        try:
            await self.client.list(NODES.resource_id, label_selector="none=none")
            self.error = ""
        except Unreachable as e:
            self.error = str(e)
        except ApiError as e:
            self.error = refusal(self.server, e)

    async def run(self) -> None:
        """Probe until cancelled."""
        while True:
            await self.clock.sleep(PROBE_SECONDS)
            await self.probe()

    def busy(self) -> bool:
        """Never busy: the probe writes nothing."""
        return False

    def ready(self) -> bool:
        """Whether the last probe was answered."""
        return not self.error

    def not_ready_reason(self) -> str:
        """The last probe's failure."""
        return self.error


@dataclasses.dataclass(frozen=True, kw_only=True)
class KubeletListen:
    """Where an emulate process serves its nodes' kubelet API (`--kubelet-address`,
    `--kubelet-port`), whom it trusts, and where its self-signed cert is kept."""

    address: str = "127.0.0.1"
    """Bound and advertised as each node's InternalIP."""
    port: int = 0
    """0: a free port."""
    client_ca: bytes | None = None
    """The CA whose client certificates get in (the API server's, from the kubeconfig)."""
    cert_dir: Path | None = None
    """Where `kubelet.crt` is kept (None: `pki` in the nodes' state folder)."""


class EmulatedPlane:
    """Components and emulated nodes against a remote API server; `start()`, `stop()`."""

    def __init__(self, remote: RemoteClient, *, components: str | Iterable[str] = "*",
                 emulator: EmulatorSettings | None = None, identities: str = "auto",
                 feature_gates: dict[str, bool] | None = None, seed: int | None = None,
                 clock: Clock | None = None, leader_elect: bool = True,
                 lease_timing: LeaseTiming = DEFAULT_TIMING, identity: str = "",
                 kubelet_api: KubeletListen | None = None) -> None:
        if identities not in IDENTITIES:
            raise ValueError(f"unknown identities {identities!r}: one of "
                             + ", ".join(IDENTITIES))
        self.remote = remote
        self.identities = identities
        self.clock = clock or RealClock()
        self.gates = FeatureGates(feature_gates or {})
        self.randomness = RandomSource(seed)
        self.identity = identity or candidate_identity()
        """This process's holderIdentity in the Leases it campaigns for, and the process its
        node Leases name (`kubelet_emu.settings.PROCESS_ANNOTATION`)."""
        self.emulator = dataclasses.replace(emulator or EmulatorSettings(),
                                            process=self.identity)
        self._selection = components
        self.specs = select(all_components(self.emulator), components)
        self.kubelet_api = kubelet_api
        self.kubelet_server: KubeletApiServer | None = None
        """The kubelet API's listener, while it serves (a kubelet runs and `kubelet_api`)."""
        self._pods: Informer | None = None
        self.supervisor = Supervisor(clock=self.clock)
        self.components: dict[str, Component] = {}
        self.informers: Informers | None = None
        self.leader_elect = leader_elect
        self.lease_timing = lease_timing
        self.electors: dict[str, LeaderElector] = {}
        self._clients: dict[tuple[str, str | None], ApiClient] = {}

    def _client_for(self, account: str, node: str | None) -> ApiClient:
        """The client of a component's service account (bound to `node`), made once."""
        if self.identities == "kubeconfig":
            return self.remote
        key = (account, node)
        client = self._clients.get(key)
        if client is None:
            client = self._clients[key] = self.remote.impersonating(
                service_account_username(COMPONENT_NAMESPACE, account),
                service_account_groups(COMPONENT_NAMESPACE),
                {NODE_NAME_KEY: (node,)} if node else None)
        return client

    async def start(self) -> None:
        """Discover the server, check the identities can read, build and start everything;
        `StartError` saying why when the server can't be reached or refuses."""
        try:
            served = await self.remote.discover()
            if self.identities == "auto":
                fakeapi = any(k.group == EMULATOR_GROUP for k in served)
                self.identities = "service-accounts" if fakeapi else "kubeconfig"
            informers_client: ApiClient = self.remote
            if self.identities == "service-accounts":
                informers_client = self.remote.impersonating(INFORMERS_USER, (MASTERS,))
            await informers_client.list(NODES.resource_id, label_selector="none=none")
        except Unreachable as e:
            raise StartError(str(e)) from None
        except ApiError as e:
            raise StartError(refusal(self.remote.server, e)) from None
        self.informers = Informers(client=informers_client)
        self.supervisor.add("apiserver", ServerProbe(informers_client,
                                                     server=self.remote.server,
                                                     clock=self.clock))
        await self._serve_kubelet_api()
        groups = {SCHEDULER_LEASE: [s for s in self.specs if s.name == "scheduler"],
                  CONTROLLERS_LEASE: [s for s in self.specs if s.name != "scheduler"
                                      and s.name not in NOT_ELECTED]}
        free = [s for s in self.specs if s.name in NOT_ELECTED or not self.leader_elect]
        for lease, specs in groups.items():
            if not specs or not self.leader_elect:
                continue
            led = Supervisor(clock=self.clock)
            self.components |= self._build(specs, led)
            self.electors[lease] = LeaderElector(
                client=self._client_for("kube-scheduler", None)
                if lease == SCHEDULER_LEASE else informers_client,
                clock=self.clock, name=lease, led=led, identity=self.identity,
                timing=self.lease_timing)
            self.supervisor.add(f"leader-election:{lease}", self.electors[lease])
        self.components |= self._build(free, self.supervisor)
        if self.kubelet_server is not None:
            self._pods = self.informers.get(PODS.resource_id)
        self.informers.start(self._start_informer)
        self.supervisor.start()

    async def _serve_kubelet_api(self) -> None:
        """Listen for the kubelet API (when a kubelet runs here) and select the components
        again with the nodes advertising where."""
        listen = self.kubelet_api
        if listen is None or not any(s.name in NOT_ELECTED for s in self.specs):
            return
        tls = kubelet_serving_context(listen.cert_dir or self.emulator.root() / "pki",
                                      (listen.address,), listen.client_ca)
        server = KubeletApiServer(pods=self._pod, streams=self.remote.pod_streams, tls=tls)
        try:
            port = await server.start(listen.address, listen.port)
        except OSError as e:
            raise StartError(f"cannot serve the kubelet API on {listen.address}:"
                             f"{listen.port}: {e.strerror or e}") from None
        self.kubelet_server = server
        self.emulator = dataclasses.replace(self.emulator,
                                            kubelet_endpoint=(listen.address, port))
        self.specs = select(all_components(self.emulator), self._selection)

    def _pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        """A pod as this process's kubelets know it (the shared pod informer's cache)."""
        return self._pods.cache.get(name, namespace) if self._pods is not None else None

    def _build(self, specs: list[ComponentSpec], supervisor: Supervisor
               ) -> dict[str, Component]:
        assert self.informers is not None
        return build_components(
            specs, client_for=self._client_for, informers=self.informers, clock=self.clock,
            gates=self.gates, random_for=self.randomness.for_component, supervisor=supervisor)

    def _start_informer(self, informer: Informer) -> None:
        self.supervisor.add(f"informer:{informer.resource}", informer)

    async def stop(self) -> None:
        """Stop every component and informer (the elected ones with their electors), then
        close the connections."""
        await self.supervisor.stop()
        if self.kubelet_server is not None:
            await self.kubelet_server.stop()
        await self.remote.close()

    def health(self) -> list[Health]:
        """Readiness of every supervised component and informer, and of the elected
        components that run here now."""
        return [*self.supervisor.health(),
                *(h for e in self.electors.values() if e.leading for h in e.led.health())]
