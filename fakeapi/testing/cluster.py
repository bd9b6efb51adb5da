"""An in-process cluster for a synchronous test: the control plane and its HTTPS server on an
ephemeral loopback port, run by an event loop of their own in a background thread, so that a
test written against the (synchronous) `kubernetes` client or a `kubectl` subprocess talks
to it while it works. `advance()` moves its virtual clock and settles; `events()` reads its
log. The heavy modules (the control plane, aiohttp, the `kubernetes` client) are imported
when a cluster starts, so loading the pytest plugin costs a test run nothing.
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import threading
from collections.abc import Coroutine, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from fakeapi.machinery.durations import SECOND, parse_duration
from fakeapi.machinery.jsonio import loads

if TYPE_CHECKING:
    import kubernetes.client

    from fakeapi.controlplane import ControlPlane
    from fakeapi.http.serving import Listener

T = TypeVar("T")
ClockMode = Literal["virtual", "real"]
CLOCK_MODES: tuple[ClockMode, ...] = ("virtual", "real")
DEFAULT_SEED = 1
"""The seed a cluster runs with unless told otherwise: names, UIDs and the log reproduce."""
NOT_RUNNING = "the cluster is not running"
CALL_TIMEOUT = 300.0
"""Real seconds a call into the cluster's loop may take (settling has its own limit)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ClusterSettings:
    """What a test's cluster runs: `fakeapi serve`'s settings that a test may choose."""

    feature_gates: Mapping[str, bool] = dataclasses.field(default_factory=dict)
    node_profile: str | None = None
    """A shipped profile's name or a profile file (None: the `default` profile)."""
    nodes: int = 2
    clock: ClockMode = "virtual"
    seed: int | None = DEFAULT_SEED
    components: str = "*"
    """kube-controller-manager's `--controllers` syntax, as `fakeapi serve --components`."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class GoldenOptions:
    """How `assert_matches_golden` treats a cluster's golden files."""

    directory: Path | None = None
    """What a relative golden path is relative to (the test module's folder under pytest;
    None: the working directory)."""
    update: bool = False
    """Rewrite golden files instead of comparing (`pytest --update-golden`)."""
    written: list[Path] = dataclasses.field(default_factory=list)
    """The golden files rewritten so far (the plugin reports them)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class LoggedEvent:
    """One event of the cluster's log, as a value: the object is a decoded copy."""

    revision: int
    type: str
    """ADDED, MODIFIED or DELETED."""
    resource: str
    """`plural.group` (`pods` for the core group)."""
    namespace: str
    name: str
    actor: str
    """Who wrote it: a user, or a component's service account."""
    time: str
    """The clock's time of the write."""
    object: dict[str, Any]


class FakeapiCluster:
    """A running in-process cluster (see the module docstring); `close()` stops it all."""

    def __init__(self, settings: ClusterSettings | None = None, *,
                 golden: GoldenOptions | None = None) -> None:
        self.settings = settings or ClusterSettings()
        self.golden = golden or GoldenOptions()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fakeapi-cluster",
                                        daemon=True)
        self._plane: ControlPlane | None = None
        self._listener: Listener | None = None
        self._state: Path | None = None
        self._client: kubernetes.client.ApiClient | None = None
        self.ready_revision = 0
        """The log's revision once the cluster was started and settled: what a test's own
        writes come after."""

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeapiCluster:
        """Build the control plane, serve it, start its components and settle."""
        from fakeapi.machinery.statedir import make_temporary_state
        self._state = make_temporary_state(prefix="fakeapi-test-")
        self._thread.start()
        try:
            self._call(self._start(self._state))
        except BaseException:
            self.close()
            raise
        return self

    async def _start(self, state: Path) -> None:
        from fakeapi.cluster import ClusterConfig
        from fakeapi.controlplane import ControlPlane
        from fakeapi.http import serving
        from fakeapi.machinery.clock import RealClock, VirtualClock
        from kubelet_emu.profile import load_profile
        from kubelet_emu.settings import EmulatorSettings

        s = self.settings
        emulator = EmulatorSettings(
            nodes=s.nodes, profile=load_profile(s.node_profile) if s.node_profile else None,
            state_dir=state)
        plane = ControlPlane(ClusterConfig(feature_gates=dict(s.feature_gates), seed=s.seed),
                             clock=VirtualClock() if s.clock == "virtual" else RealClock(),
                             components=s.components, emulator=emulator)
        self._plane = plane
        self._listener = await serving.listen(
            plane.cluster, host="127.0.0.1", port=0, pki_dir=state / "pki",
            kubeconfig=state / "kubeconfig", checks=plane.health, metrics=plane.metrics_text,
            routes=plane.routes())
        await plane.start()
        await plane.settle()
        self.ready_revision = plane.cluster.log.revision

    def close(self) -> None:
        """Stop the server, the components and the loop; remove the cluster's files. No
        thread, socket or task is left behind. Safe to call twice."""
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._thread.is_alive():
            try:
                self._call(self._stop())
            finally:
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._thread.join()
        if not self._loop.is_closed():
            self._loop.close()
        self._plane = self._listener = None
        if self._state is not None:
            shutil.rmtree(self._state, ignore_errors=True)
            self._state = None

    async def _stop(self) -> None:
        if self._listener is not None:
            await self._listener.close()
        if self._plane is not None:
            await self._plane.stop()
        me = asyncio.current_task()
        left = [task for task in asyncio.all_tasks() if task is not me]
        for task in left:
            task.cancel()
        await asyncio.gather(*left, return_exceptions=True)
        await self._loop.shutdown_asyncgens()
        await self._loop.shutdown_default_executor()

    def __enter__(self) -> FakeapiCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the cluster's loop and wait for its result."""
        if not self._thread.is_alive():
            coro.close()
            raise RuntimeError(NOT_RUNNING)
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(CALL_TIMEOUT)

    # -- what a test uses --------------------------------------------------------------------

    @property
    def plane(self) -> ControlPlane:
        """The control plane (for what the API doesn't show; touch it only through `call`)."""
        return _running(self._plane)

    @property
    def url(self) -> str:
        """The server's address, `https://127.0.0.1:PORT`."""
        return _running(self._listener).url

    @property
    def kubeconfig(self) -> Path:
        """An admin kubeconfig for the server (client certificate of `kubernetes-admin`)."""
        return _running(self._listener).kubeconfig

    @property
    def state_dir(self) -> Path:
        """The cluster's temporary folder (PKI, kubeconfig, the emulated nodes' files)."""
        return _running(self._state)

    @property
    def client(self) -> kubernetes.client.ApiClient:
        """A `kubernetes.client.ApiClient` configured from `kubeconfig` (made on first use;
        pass it to the typed APIs: `kubernetes.client.CoreV1Api(cluster.client)`)."""
        if self._client is None:
            try:
                from kubernetes import config
            except ImportError as e:
                raise RuntimeError("the kubernetes client is not installed: "
                                   "pip install 'fakeapi[testing]'") from e
            self._client = config.new_client_from_config(config_file=str(self.kubeconfig))
        return self._client

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the cluster's event loop (e.g. one using `plane`)."""
        return self._call(coro)

    def settle(self) -> None:
        """Wait until the control plane has done everything its inputs call for (queues
        empty, informers caught up, no timer due), without moving the clock."""
        self._call(self.plane.settle())

    def advance(self, duration: str | float) -> None:
        """Move the virtual clock by `duration` (Go syntax such as "30s" or "1h30m", or
        seconds), firing each timer at its own time and settling after each, then settle."""
        from fakeapi.machinery.clock import VirtualClock
        seconds = (parse_duration(duration) / SECOND if isinstance(duration, str)
                   else float(duration))
        if seconds < 0:
            raise ValueError(f"advance({duration!r}): a clock can't go back")
        clock = self.plane.clock
        if not isinstance(clock, VirtualClock):
            raise RuntimeError("advance() needs the virtual clock: this cluster runs on the "
                               "real one (clock='real')")
        self._call(clock.advance(seconds))

    def events(self, since: int = 0) -> list[LoggedEvent]:
        """The log's events after revision `since` (0: all of them, bootstrap included, as
        far as the retained window goes), oldest first."""
        return self._call(self._events(since))

    async def _events(self, since: int) -> list[LoggedEvent]:
        return [LoggedEvent(revision=e.revision, type=e.type, resource=e.resource,
                            namespace=e.namespace, name=e.name, actor=e.actor, time=e.time,
                            object=loads(e.raw))
                for e in self.plane.cluster.log.since(since)]



def _running(part: T | None) -> T:
    """A part of a started cluster (RuntimeError once it is closed, or before it starts)."""
    if part is None:
        raise RuntimeError(NOT_RUNNING)
    return part
