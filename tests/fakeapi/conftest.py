"""Fixtures of the HTTP tests of tests/fakeapi: a served cluster, seeded or not (what they
build on is in `tests.support.httpapi`)."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from fakeapi.cluster import Cluster
from tests.support.httpapi import Serve, seed, server_factory


@pytest.fixture
def serve(aiohttp_client: Any) -> Serve:
    """Start a server over a fresh cluster (deterministic names, virtual clock)."""
    return server_factory(aiohttp_client)


@pytest.fixture
async def served(serve: Serve) -> tuple[Cluster, TestClient]:
    """A server with the default configuration."""
    return await serve()


@pytest.fixture
async def seeded(served: tuple[Cluster, TestClient]) -> tuple[Cluster, TestClient]:
    """`served`, with a ConfigMap and a ResourceClaim in `default`, and a Terminating
    namespace `doomed` (no controller runs, so it stays Terminating)."""
    await seed(served[1])
    return served
