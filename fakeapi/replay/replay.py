"""`fakeapi replay`: a recording's external inputs fed into a fresh control plane.

The control plane is built on a virtual clock with the recording's seed and settings and
served on a loopback port (`fakeapi.http.serving.listen`, the server `fakeapi serve` runs,
advertising the recorded server's address). The port speaks plain HTTP (TLS on loopback
only cost time: the recorded requests go through the same handlers either way) and admits
one credential, a random bearer token of this replay's (a request without it is anonymous).
Each input is sent, over one kept-alive connection, as the recorded user (the token with
Impersonate-User and Impersonate-Group), with the recorded
method, path and query, content type, body and User-Agent (a header it didn't have is left
out, not filled in by aiohttp); the server's input turns settle the
control plane before each one (`fakeapi.machinery.inputturns`), as they did while a
virtual-clock recording was made, so the components make the same writes again. For a
real-clock recording the clock is moved to each input's recorded time first.

`replay()` returns the new log's records; `fakeapi.replay.check` compares them with the
recording, and `read_only_cluster` holds the state at a revision of them (time travel).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import secrets
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import aiohttp
import orjson
from multidict import CIMultiDict
from tqdm import tqdm

from fakeapi.auth import authn
from fakeapi.auth.authz import IMPERSONATE_GROUP, IMPERSONATE_USER
from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.controlplane import ControlPlane
from fakeapi.http import serving
from fakeapi.machinery.clock import VirtualClock
from fakeapi.machinery.timestamps import parse_time, rfc3339
from fakeapi.replay.inputs import Input, Recording
from kubelet_emu.settings import DEFAULT_NODES, EmulatorSettings

if TYPE_CHECKING:
    from kubelet_emu.profile import NodeProfile

log = logging.getLogger(__name__)
UNBOUNDED = 2**62
"""The replay keeps its whole log in memory (the check reads it back)."""
REPLAYER = authn.UserInfo("fakeapi:replay", groups=(authn.MASTERS, authn.AUTHENTICATED))
"""Who the replay's bearer token authenticates (it impersonates each recorded user)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReplaySettings:
    """What a replay's control plane is built with (`fakeapi serve`'s flags and defaults)."""

    seed: int | None = None
    feature_gates: dict[str, bool] = dataclasses.field(default_factory=dict)
    runtime_config: dict[str, str] = dataclasses.field(default_factory=dict)
    nodes: int = DEFAULT_NODES
    node_profile: NodeProfile | None = None
    components: str = "*"
    adopt_nodes: bool = True
    drivers: str = "in-process"
    disabled_drivers: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, kw_only=True)
class Replayed:
    """What a replay did: inputs sent, the answers that refused one, the new log."""

    inputs: int
    refused: list[tuple[Input, int, str]]
    """(input, HTTP status, message) of each input the replayed server did not accept."""
    records: list[bytes]
    """The new log's records (of revisions base+1 on)."""
    seconds: float
    base: int = 0
    """The recording's base (a compacted recording: the replay starts from its state)."""

    @property
    def revision(self) -> int:
        """The newest revision of the replayed log."""
        return self.base + len(self.records)


async def replay(recording: Recording, settings: ReplaySettings, *, state_dir: Path,
                 data_dir: Path | None = None, until: int | None = None,
                 progress: bool | None = None) -> Replayed:
    """Replay `recording`'s inputs into a fresh control plane (durable in `data_dir` when
    given; its nodes' files in `state_dir`); with `until`, no input is sent once the replayed
    log has reached that revision (the last one sent may carry it past: its work settles)."""
    started = time.perf_counter()
    clock = VirtualClock(start=recording.start())
    emulator = EmulatorSettings(nodes=settings.nodes, profile=settings.node_profile,
                                adopt_nodes=settings.adopt_nodes, state_dir=state_dir,
                                drivers=settings.drivers,
                                disabled_drivers=settings.disabled_drivers)
    config = ClusterConfig(data_dir=data_dir, feature_gates=settings.feature_gates,
                           runtime_config=settings.runtime_config, seed=settings.seed,
                           retention=UNBOUNDED, retention_bytes=UNBOUNDED,
                           base=recording.log.base,
                           base_records=tuple(recording.base_records))
    plane = ControlPlane(config, clock=clock, components=settings.components,
                         emulator=emulator)
    token = secrets.token_urlsafe(32)
    listener = await serving.listen(plane.cluster, host="127.0.0.1", port=0, pki_dir=None,
                                    kubeconfig=state_dir / "kubeconfig", tokens={token: REPLAYER},
                                    unauthenticated=authn.ANONYMOUS,
                                    checks=plane.health, metrics=plane.metrics_text,
                                    routes=plane.routes(), advertise=recording.address())
    inputs = recording.inputs(plane.is_component_identity)
    sent_count = 0
    refused: list[tuple[Input, int, str]] = []
    try:
        await plane.start()
        await plane.settle()
        async with aiohttp.ClientSession(
                base_url=listener.url, connector=aiohttp.TCPConnector(limit=1),
                headers={"Authorization": f"Bearer {token}"},
                timeout=aiohttp.ClientTimeout(total=None)) as session:
            timed = not recording.exact
            for sent in _bar(inputs, progress):
                if until is not None and plane.cluster.log.revision >= until:
                    break
                if timed:
                    await _move_to(clock, sent)
                status, message = await _send(session, sent)
                sent_count += 1
                if status >= 400:
                    log.warning("revision %d: the replayed server refused %s %s: %s",
                                sent.revision, sent.method, sent.path, message)
                    refused.append((sent, status, message))
        await plane.settle()
        records = [event.record() for event in plane.cluster.log]
    finally:
        await listener.close()
        await plane.stop()
    return Replayed(inputs=sent_count, refused=refused, records=records,
                    seconds=time.perf_counter() - started, base=recording.log.base)


def _bar(inputs: list[Input], progress: bool | None) -> Iterable[Input]:
    show = sys.stderr.isatty() if progress is None else progress
    return tqdm(inputs, unit="input", desc="replaying", file=sys.stderr, disable=not show,
                leave=False)


async def _move_to(clock: VirtualClock, sent: Input) -> None:
    """A real-clock recording: stand at the input's recorded time before it is sent."""
    ahead = (sent.time - clock.now()).total_seconds()
    if ahead > 0:
        await clock.advance(ahead)


async def _send(session: aiohttp.ClientSession, sent: Input) -> tuple[int, str]:
    """Send one input as its recorded user; the answer's status and (on a refusal) message."""
    headers = [(IMPERSONATE_USER, sent.user), *((IMPERSONATE_GROUP, g) for g in sent.groups),
               ("User-Agent", sent.user_agent)]
    skip = ["User-Agent"] if not sent.user_agent else []
    if sent.content_type:
        headers.append(("Content-Type", sent.content_type))
    else:
        skip.append("Content-Type")
    async with session.request(sent.method, sent.path, data=sent.body or None,
                               headers=CIMultiDict(h for h in headers if h[1]),
                               skip_auto_headers=skip) as response:
        if response.status < 400:
            await response.read()
            return response.status, ""
        return response.status, (await response.text())[:500]


def read_only_cluster(records: list[bytes], revision: int, settings: ReplaySettings, *,
                       source: str, base: int = 0, base_records: Iterable[bytes] = (),
                       base_time: dt.datetime | None = None) -> Cluster:
    """The state of `records` (revisions base+1 on, after the base's objects) at `revision`,
    as a cluster that serves reads only: its clock stands at that event's time (at the base
    itself, `base_time`), nothing is seeded, and every write over HTTP is a 405 naming the
    revision of `source`."""
    upto = revision - base
    when = (orjson.loads(records[upto - 1].partition(b"\n")[0])["ts"] if upto > 0 else
            rfc3339(base_time) if base_time is not None else "")
    config = ClusterConfig(feature_gates=settings.feature_gates,
                           runtime_config=settings.runtime_config, history=tuple(records[:upto]),
                           base=base, base_records=tuple(base_records),
                           read_only=f"it serves {source} read-only as it was at revision "
                                     f"{revision} ({when})")
    return Cluster(config, clock=VirtualClock(start=parse_time(when) if when else None))
