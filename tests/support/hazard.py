"""A fresh interpreter that stores one ResourceClaim through the HTTP API, patches it, reads
it back and replays the log: for bodies that close long runs of lists, which make every
encoding of the process take the stdlib's encoder from then on (`jsonio.hazard()`). That
latch lasts for the process, so a test runs this in a child of its own instead of resetting
it: `python -m tests.support.hazard < body` prints what happened as JSON.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.http.app import create_app
from fakeapi.machinery import jsonio
from fakeapi.machinery.clock import VirtualClock
from fakeapi.storage.log import EventLog
from fakeapi.storage.store import Store
from tests.support.httpapi import MERGE, RC, seed

CLAIMS = "resourceclaims.resource.k8s.io"


async def _send(api: TestClient, method: str, path: str, raw: bytes,
                ctype: str = "application/json") -> tuple[int, Any]:
    """One request, its reply parsed by the stdlib (orjson stops at 1,024 levels)."""
    async with api.request(method, path, data=raw, headers={"Content-Type": ctype}) as resp:
        return resp.status, json.loads(await resp.read())


async def round_trip(raw: bytes) -> dict[str, Any]:
    """Create the claim `raw` on a seeded server, label it, replay the log; every answer."""
    cluster = Cluster(ClusterConfig(seed=7), clock=VirtualClock())
    out: dict[str, Any] = {"hazard_before": jsonio.hazard()}
    async with TestClient(TestServer(create_app(cluster))) as api:
        await seed(api)
        out["created"] = await _send(api, "POST", RC, raw)
        out["hazard_after"] = jsonio.hazard()
        out["patched"] = await _send(api, "PATCH", f"{RC}/{json.loads(raw)['metadata']['name']}",
                                     b'{"metadata":{"labels":{"a":"b"}}}', MERGE)
    replayed = Store(log=EventLog(), clock=cluster.clock)
    replayed.replay([e.record() for e in cluster.log])
    stored = replayed.get(CLAIMS, "default", json.loads(raw)["metadata"]["name"])
    out["replayed"] = stored.object if stored is not None else None
    return out


def main() -> None:
    """Read the claim's JSON from stdin; print the outcome of `round_trip` as JSON."""
    print(json.dumps(asyncio.run(round_trip(sys.stdin.buffer.read()))))


if __name__ == "__main__":
    main()
