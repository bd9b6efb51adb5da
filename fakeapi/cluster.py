"""The API-server core of one emulated cluster: the log, the store, the registry, RBAC.

It knows nothing of components: the composition root (`fakeapi.controlplane`) builds the
scheduler, controllers and kubelets on top of it. They reach it only through
`Cluster.client()`, as identities that RBAC authorizes (the bootstrap policy binds the
components' service accounts to their roles).

Imports: the client and the layers below it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fakeapi.auth import bootstrap
from fakeapi.auth.authn import (
    MASTERS,
    NODE_NAME_KEY,
    service_account_groups,
    service_account_username,
    split_service_account,
)
from fakeapi.auth.tokens import TokenIssuer
from fakeapi.client import Client
from fakeapi.kube.podio import PodIO
from fakeapi.machinery.clock import Clock, RealClock, VirtualClock, clock_mode
from fakeapi.machinery.decode import json_copy
from fakeapi.machinery.features import FeatureGates
from fakeapi.machinery.inputturns import InputTurns
from fakeapi.machinery.randomness import RandomSource
from fakeapi.machinery.runtimeconfig import RuntimeConfig
from fakeapi.machinery.timestamps import parse_time, rfc3339
from fakeapi.registry.context import RequestContext
from fakeapi.registry.generic import Registry, uuid4
from fakeapi.registry.kinds import (
    CLOCKS,
    CLUSTER_ROLE_BINDINGS,
    CLUSTER_ROLES,
    ENDPOINT_SLICES,
    ENDPOINTS,
    NAMESPACES,
    SERVICES,
    KindTable,
    served_kinds,
)
from fakeapi.schema.emulator import CLOCK_NAME
from fakeapi.storage import compaction, recording
from fakeapi.storage.log import DEFAULT_RETENTION, DEFAULT_RETENTION_BYTES, EventLog
from fakeapi.storage.store import ADDED, Store
from fakeapi.storage.wal import WriteAheadLog

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
KUBERNETES_SERVICE_IP = "10.96.0.1"
"""The `kubernetes` Service's ClusterIP: the first address of the service range."""
SYSTEM_ACTOR = "system:apiserver"
SYSTEM_CONTEXT = RequestContext(user=SYSTEM_ACTOR, field_manager="fakeapi")
"""How the cluster itself writes what it seeds (default namespaces, bootstrap RBAC)."""


@dataclasses.dataclass(frozen=True)
class ClusterConfig:
    """How to build a cluster."""

    data_dir: Path | None = None
    feature_gates: dict[str, bool] = dataclasses.field(default_factory=dict)
    runtime_config: dict[str, str] = dataclasses.field(default_factory=dict)
    """`--runtime-config`'s keys and values: the group/versions served besides the default
    ones (`RuntimeConfigError` at start for what upstream refuses)."""
    retention: int = DEFAULT_RETENTION
    retention_bytes: int = DEFAULT_RETENTION_BYTES
    seed: int | None = None
    bookmark_interval: float = 60.0
    watch_stall_timeout: float = 30.0
    """Seconds a watch's write may wait on a client that doesn't read before it is closed."""
    settings: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """How the run was started (JSON values), written into the header of a new log so that a
    replay can rebuild the same control plane (`fakeapi serve` fills it in); a log that
    exists keeps the header it has."""
    base: int = 0
    base_records: tuple[bytes, ...] = ()
    """A state to start from without its history (a compacted log's base: each live
    object's event record, none above revision `base`); the log begins at `base`. A data
    directory whose log was compacted brings its own."""
    restore: tuple[tuple[str, dict[str, Any]], ...] = ()
    """(resource id, object) pairs a new cluster starts with, committed as its own writes
    before it seeds anything (`fakeapi serve --from`, `fakeapi.replay.restore`): the objects
    as given, uids included (a fresh one where none is), at new revisions."""
    history: tuple[bytes, ...] = ()
    """Log records (revision i at index i - 1) a read-only cluster serves the state of."""
    read_only: str = ""
    """When set, the cluster is a view of `history`: nothing is seeded or advertised, and
    every write over HTTP is refused with 405 MethodNotAllowed and this reason."""


class RestoreRefused(Exception):
    """Objects to restore, but the data directory's log already holds a cluster."""


class Cluster:
    """Log + store + registry + authorizer: what the HTTP server and in-process clients share."""

    def __init__(self, config: ClusterConfig, *, clock: Clock | None = None) -> None:
        self.config = config
        self.clock = clock or RealClock()
        self.gates = FeatureGates(config.feature_gates)  # FeatureGateError: refuse to start
        self.kinds: KindTable = served_kinds(self.gates, RuntimeConfig(config.runtime_config))
        self.wal: WriteAheadLog | None = None
        records: list[bytes] = []
        if config.data_dir is not None:
            config.data_dir.mkdir(parents=True, exist_ok=True)
            self.wal, records = WriteAheadLog.open(
                recording.log_file(config.data_dir),
                header=recording.header_record(config.settings, rfc3339(self.clock.now()),
                                               base=config.base))
        self.log = EventLog(retention=config.retention, retention_bytes=config.retention_bytes,
                            wal=self.wal, clock=self.clock)
        self.store = Store(log=self.log, clock=self.clock)
        base, base_records = config.base, config.base_records
        self._base_time = ""
        if self.wal is not None and self.wal.header is not None:
            header = recording.parse_header(self.wal.header, self.wal.path)
            if header.base:
                self._base_time = header.base_time
                if records or config.base != header.base:  # a compacted log: its own base
                    base = header.base
                    base_records = tuple(compaction.read_base(self.wal.path.parent, base))
                else:  # a new log that starts from the given base: its file goes beside it
                    compaction.write_base(self.wal.path.parent, base, list(base_records))
        if base:
            self.store.load_base(base, base_records)
        self.store.replay(records or list(config.history))
        self.randomness = RandomSource(config.seed)
        """Names and UIDs per write; `randomness.for_component(name)` for a component's own."""
        if config.restore:
            self._restore(config.restore)
        self.tokens = TokenIssuer.load(
            config.data_dir / "pki" / "sa.key" if config.data_dir else None,
            now=self.clock.now, lookup=self._lookup)
        """Signs and verifies service-account tokens (the server authenticates them)."""
        self.pod_io = PodIO()
        """Where emulated kubelets serve their pods' logs and exec (see fakeapi.kube.podio)."""
        self.registry = Registry(store=self.store, kinds=self.kinds, randomness=self.randomness,
                                 gates=self.gates,
                                 services={"tokens": self.tokens, "pod_io": self.pod_io})
        self.authorizer = self.registry.authorizer
        self.inputs = InputTurns(self.clock)
        """External writes take turns through it (settled first on a deterministic clock)."""
        if config.read_only:
            self.log.flush_now()
            return
        self._seed_namespaces()
        self._seed_rbac()
        self._seed_kubernetes_service()
        self._seed_clock()
        self.log.flush_now()  # what the cluster seeds is durable and visible from the start

    def _restore(self, objects: tuple[tuple[str, dict[str, Any]], ...]) -> None:
        """Commit the objects to restore, before the registry serves the CRDs among them."""
        if self.log.revision:
            raise RestoreRefused(
                f"{self.wal.path if self.wal else 'the log'} already holds {self.log.revision} "
                "events: restoring needs a new data directory (start without it to serve it)")
        for resource, obj in objects:
            obj = json_copy(obj)
            meta = obj["metadata"]
            meta.pop("resourceVersion", None)
            if not meta.get("uid"):
                meta["uid"] = uuid4(self.randomness.for_write(self.log.revision + 1,
                                                             SYSTEM_ACTOR))
            self.store.commit(ADDED, resource, obj, actor=SYSTEM_ACTOR)

    def _lookup(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        event = self.store.get(resource, namespace, name)
        return event.object if event is not None else None

    def _seed_kubernetes_service(self) -> None:
        """Same as kube-apiserver: the `kubernetes` Service in `default`."""
        kind = self.kinds.by_id(SERVICES.resource_id)
        if kind is None or self.store.get(kind.resource_id, "default", "kubernetes") is not None:
            return
        self.registry.create(kind, "default", {"metadata": {
            "name": "kubernetes", "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {"clusterIP": KUBERNETES_SERVICE_IP, "ports": [
                {"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}]}},
            SYSTEM_CONTEXT)

    def _seed_clock(self) -> None:
        """The Clock `cluster`, its status the clock's mode and reading (written again when a
        restart changes the mode). A virtual clock restarted on a log continues from its
        newest event."""
        current = self.store.get(CLOCKS.resource_id, "", CLOCK_NAME)
        if current is None:
            self.registry.create(CLOCKS, "", {"metadata": {"name": CLOCK_NAME}}, SYSTEM_CONTEXT)
            return
        if isinstance(self.clock, VirtualClock):
            if self.log.revision > self.log.base:
                [newest] = self.log.since(self.log.revision - 1)
                self.clock.resume_at(parse_time(newest.time))
            elif self._base_time:  # a compacted log with no events after its base
                self.clock.resume_at(parse_time(self._base_time))
        if current.object.get("status", {}).get("mode") != clock_mode(self.clock):
            self.registry.update(CLOCKS, "", CLOCK_NAME, dict(current.object), SYSTEM_CONTEXT)

    def advertise(self, host: str, port: int) -> None:
        """Same as kube-apiserver's endpoint reconciler: the `kubernetes` Service's
        EndpointSlice and Endpoints name the address clients reach this server at."""
        if self.config.read_only:
            return
        address = "127.0.0.1" if host in ("", "0.0.0.0", "localhost") else host
        labels = {"kubernetes.io/service-name": "kubernetes",
                  "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}
        objects: dict[str, dict[str, Any]] = {
            ENDPOINT_SLICES.resource_id: {
                "metadata": {"name": "kubernetes", "labels": labels},
                "addressType": "IPv6" if ":" in address else "IPv4",
                "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
                "ports": [{"name": "https", "port": port, "protocol": "TCP"}]},
            ENDPOINTS.resource_id: {
                "metadata": {"name": "kubernetes",
                             "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
                "subsets": [{"addresses": [{"ip": address}],
                             "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}]},
        }
        for resource, obj in objects.items():
            kind = self.kinds.by_id(resource)
            if kind is None:
                continue
            current = self.store.get(resource, "default", "kubernetes")
            if current is None:
                self.registry.create(kind, "default", obj, SYSTEM_CONTEXT)
            elif {k: v for k, v in current.object.items() if k not in ("metadata", "kind",
                                                                        "apiVersion")} != {
                    k: v for k, v in obj.items() if k != "metadata"}:
                obj["metadata"]["resourceVersion"] = current.object["metadata"][
                    "resourceVersion"]
                self.registry.update(kind, "default", "kubernetes", obj, SYSTEM_CONTEXT)

    def _seed_namespaces(self) -> None:
        ns_kind = self.kinds.by_id(NAMESPACES.resource_id)
        assert ns_kind is not None
        for name in DEFAULT_NAMESPACES:
            if self.store.get(ns_kind.resource_id, "", name) is None:
                self.registry.create(ns_kind, "", {"metadata": {"name": name}},
                                     SYSTEM_CONTEXT)

    def _seed_rbac(self) -> None:
        """The bootstrap ClusterRoles and ClusterRoleBindings (missing ones are recreated)."""
        for row, objects in ((CLUSTER_ROLES, bootstrap.bootstrap_cluster_roles()),
                             (CLUSTER_ROLE_BINDINGS, bootstrap.bootstrap_cluster_role_bindings())):
            resource = row.resource_id
            kind = self.kinds.by_id(resource)
            assert kind is not None
            for obj in objects:
                if self.store.get(resource, "", obj["metadata"]["name"]) is None:
                    self.registry.create(kind, "", obj, SYSTEM_CONTEXT)

    def client(self, identity: str, groups: tuple[str, ...] | None = None, *,
               extra: Mapping[str, tuple[str, ...]] | None = None) -> Client:
        """An in-process API client acting as `identity` (named in every event it causes).

        Every call is authorized by RBAC. A service account (`system:serviceaccount:NS:NAME`)
        gets its groups; any other identity given without groups is a privileged loopback
        client (system:masters), as kube-apiserver's own client is.
        """
        if groups is None:
            sa = split_service_account(identity)
            groups = service_account_groups(sa[0]) if sa else (MASTERS,)
        return Client(registry=self.registry, authorizer=self.authorizer, user=identity,
                      groups=groups, extra=extra)

    def component_client(self, name: str, *, node: str | None = None) -> Client:
        """The client of an emulator component: service account kube-system/NAME (its role is
        in `bootstrap.COMPONENT_ROLES`), bound to `node` through the node-name extra if given."""
        return self.client(service_account_username(bootstrap.COMPONENT_NAMESPACE, name),
                           extra={NODE_NAME_KEY: (node,)} if node else None)

    def health(self) -> list[tuple[str, bool, str]]:
        """The core's readiness checks: the log takes writes (not after a WAL I/O error)."""
        return [("log", self.log.writable, self.log.failure or "")]

    async def close(self) -> None:
        """Wake watchers so their streams end, and flush the log to disk."""
        await self.log.close()
