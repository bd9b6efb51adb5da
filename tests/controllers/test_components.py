"""The controllers as the package declares them: all of them run together on the shared
informers (their indexes must not clash), and each is ready once synced."""

from __future__ import annotations

import controllers
from tests.support import dra
from tests.support.plane import running_plane
from tests.support.seeds import SEED_GATES

GATES = {item.split("=")[0]: True for item in SEED_GATES.split(",")}


async def test_every_controller_runs_beside_the_others() -> None:
    names = {spec.name for spec in controllers.COMPONENTS}
    async with running_plane(",".join(sorted(names)), gates=GATES) as plane:
        assert set(plane.components) == names
        checks = {h.name: h.ok for h in plane.health() if h.name in names}
        assert checks == dict.fromkeys(names, True)
        admin = plane.cluster.client("admin")
        await admin.create(dra.TEMPLATES, dra.template("t"))
        await admin.create("pods", dra.pod("p", claims=[dra.from_template("gpu", "t")]))
        await plane.settle()
        assert len(await dra.claims_of(admin)) == 1
