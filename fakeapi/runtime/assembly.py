"""Building the selected components: one function both composition roots call, the in-process
control plane (`fakeapi.controlplane`) and an emulate process against a remote server
(`fakeapi.emulation`). Each component gets a context with its own client (its service
account's identity, from the root's `client_for`), the shared informers, the clock, the gates
and a random stream of its own, and is handed to the supervisor under its name.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Iterable

from fakeapi.client import ApiClient
from fakeapi.machinery.clock import Clock
from fakeapi.machinery.features import GateReader
from fakeapi.runtime.component import ComponentContext
from fakeapi.runtime.informer import Informers
from fakeapi.runtime.spec import ComponentSpec
from fakeapi.runtime.supervisor import Component, Supervisor

log = logging.getLogger(__name__)
ClientFor = Callable[[str, "str | None"], ApiClient]
"""`client_for(account, node)`: the client of a kube-system service account, bound to a node
when one is named."""


def build_components(specs: Iterable[ComponentSpec], *, client_for: ClientFor,
                     informers: Informers, clock: Clock, gates: GateReader,
                     random_for: Callable[[str], random.Random],
                     supervisor: Supervisor) -> dict[str, Component]:
    """Build each spec whose gates are on, add it to `supervisor`; the built ones by name."""
    built: dict[str, Component] = {}
    for spec in specs:
        if spec.gated_off(gates):
            log.info("component %s not started: a feature gate it needs is off", spec.name)
            continue
        ctx = ComponentContext(name=spec.name,
                               client=client_for(spec.service_account or spec.name, None),
                               informers=informers, clock=clock, random=random_for(spec.name),
                               gates=gates, client_for=client_for)
        built[spec.name] = spec.build(ctx)
        supervisor.add(spec.name, built[spec.name])
    return built
