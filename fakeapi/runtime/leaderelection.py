"""Leader election through a coordination.k8s.io/v1 Lease, as client-go's leaderelection
package does it, so that of several processes asked for a singleton (the scheduler, the
controllers) one runs it.

A candidate reads the Lease and takes it when it is absent, held by itself, or not renewed
for `lease_duration` seconds of the candidate's own observation (client-go judges expiry by
when it last saw the record change, not by the holder's clock). Every write is an update at
the resourceVersion it read (a create for a new Lease), so two candidates never both win:
the loser's write is a 409. The leader renews every `retry_period`; if no renewal has worked
for `renew_deadline` it stops leading (its components are stopped) and campaigns again.
Timers are on the injected clock. The defaults are kube-scheduler's and
kube-controller-manager's flags: 15 s, 10 s, 2 s.
"""

from __future__ import annotations

import dataclasses
import logging
import socket
import uuid
from typing import Any

from fakeapi.client import ApiClient
from fakeapi.machinery.clock import Clock
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.timestamps import rfc3339_micro
from fakeapi.runtime.supervisor import Supervisor

log = logging.getLogger(__name__)
LEASES = "leases.coordination.k8s.io"
Obj = dict[str, Any]


@dataclasses.dataclass(frozen=True, kw_only=True)
class LeaseTiming:
    """How long a Lease holds, how long a leader tries to renew it, how often it tries."""

    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    release_on_cancel: bool = True
    """A leader that is stopped (not killed) releases the Lease, as client-go's
    ReleaseOnCancel does: holder cleared, duration 1 s, so a candidate takes it at once."""


DEFAULT_TIMING = LeaseTiming()
"""Upstream's defaults."""


def candidate_identity() -> str:
    """A holderIdentity unique to this process: the host name and a random id (upstream's
    `hostname_uuid`)."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class LeaderElector:
    """Runs `led` (a supervisor of the singleton components) while holding the Lease
    `namespace/name`; a supervised component itself (see the module docstring)."""

    def __init__(self, *, client: ApiClient, clock: Clock, name: str, led: Supervisor,
                 identity: str, namespace: str = "kube-system",
                 timing: LeaseTiming = DEFAULT_TIMING) -> None:
        self.client = client
        self.clock = clock
        self.name = name
        self.namespace = namespace
        self.identity = identity
        self.timing = timing
        self.led = led
        self.leading = False
        self._observed: tuple[str, str] | None = None
        """(holderIdentity, renewTime) of the record last read."""
        self._observed_at = 0.0

    async def run(self) -> None:
        """Campaign; lead until a renewal deadline passes; campaign again. Stopped, it
        stops what it leads and releases the Lease (`release_on_cancel`)."""
        try:
            while True:
                while not await self._try_acquire_or_renew():
                    await self.clock.sleep(self.timing.retry_period)
                log.info("lease %s/%s: %s became leader", self.namespace, self.name,
                         self.identity)
                self.leading = True
                self.led.start()
                await self._renew_until_lost()
                log.error("lease %s/%s: %s lost leadership", self.namespace, self.name,
                          self.identity)
                self.leading = False
                await self.led.stop()
        finally:
            if self.leading:
                self.leading = False
                await self.led.stop()
                if self.timing.release_on_cancel:
                    await self._release()

    async def _release(self) -> None:
        """Clear the holder of the Lease this candidate holds (client-go's release)."""
        try:
            lease = await self.client.get(LEASES, self.name, self.namespace)
            spec = lease.get("spec") or {}
            if spec.get("holderIdentity") == self.identity:
                now = rfc3339_micro(self.clock.now())
                await self.client.update(LEASES, {**lease, "spec": {
                    **spec, "holderIdentity": "", "leaseDurationSeconds": 1,
                    "acquireTime": now, "renewTime": now}})
        except (ApiError, OSError) as e:  # it expires by itself
            log.warning("lease %s/%s: not released: %s", self.namespace, self.name, e)

    async def _renew_until_lost(self) -> None:
        renewed = self.clock.monotonic()
        while self.clock.monotonic() - renewed < self.timing.renew_deadline:
            await self.clock.sleep(self.timing.retry_period)
            if await self._try_acquire_or_renew():
                renewed = self.clock.monotonic()

    async def _try_acquire_or_renew(self) -> bool:
        """One attempt (client-go's tryAcquireOrRenew); False when someone else holds it or
        the write lost a race."""
        now = rfc3339_micro(self.clock.now())
        mine = {"holderIdentity": self.identity,
                "leaseDurationSeconds": int(self.timing.lease_duration),
                "acquireTime": now, "renewTime": now, "leaseTransitions": 0}
        try:
            lease = await self.client.get(LEASES, self.name, self.namespace)
        except ApiError as e:
            if e.code != 404:
                log.warning("lease %s/%s: %s", self.namespace, self.name, e.message)
                return False
            return await self._write(self.client.create(LEASES, {
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": mine}))
        except OSError as e:  # unreachable: a leader keeps trying until its deadline
            log.warning("lease %s/%s: %s", self.namespace, self.name, e)
            return False
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        record = (holder, str(spec.get("renewTime") or ""))
        if record != self._observed:
            self._observed, self._observed_at = record, self.clock.monotonic()
        held_for = float(spec.get("leaseDurationSeconds") or self.timing.lease_duration)
        if holder and holder != self.identity and \
                self.clock.monotonic() < self._observed_at + held_for:
            return False
        if holder == self.identity:
            mine["acquireTime"] = spec.get("acquireTime") or now
            mine["leaseTransitions"] = spec.get("leaseTransitions") or 0
        else:
            mine["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
        return await self._write(self.client.update(LEASES, {**lease, "spec": {
            **spec, **mine}}))

    async def _write(self, call: Any) -> bool:
        """Await a create or an update at the read resourceVersion: a 409 (or any refusal)
        is a lost race, not an error."""
        try:
            written: Obj = await call
        except ApiError as e:
            if e.code not in (409, 404):
                log.warning("lease %s/%s: %s", self.namespace, self.name, e.message)
            return False
        except OSError as e:
            log.warning("lease %s/%s: %s", self.namespace, self.name, e)
            return False
        spec = written.get("spec") or {}
        self._observed = (self.identity, str(spec.get("renewTime") or ""))
        self._observed_at = self.clock.monotonic()
        return True

    def busy(self) -> bool:
        """Whether what it leads has unfinished work."""
        return self.leading and self.led.busy()

    def ready(self) -> bool:
        """A candidate is ready: leading or waiting to, either is its job."""
        return True
