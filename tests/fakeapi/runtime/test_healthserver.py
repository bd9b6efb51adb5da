"""The health endpoints of an emulate process (`runtime.healthserver`), over real HTTP: the
texts of kube-apiserver's healthz package for the checks the composition root gives."""

from __future__ import annotations

import aiohttp
import pytest

from fakeapi.machinery.healthtext import Check
from fakeapi.runtime.healthserver import HealthServer

GOOD: list[Check] = [("apiserver", True, ""), ("informer:pods", True, "")]
BAD: list[Check] = [("apiserver", False, "cannot reach the API server at https://x"),
                    ("informer:pods", True, "")]


@pytest.mark.parametrize(("checks", "path", "status", "text"), [
    (GOOD, "/readyz", 200, "ok"),
    (GOOD, "/readyz?verbose", 200,
     "[+]ping ok\n[+]apiserver ok\n[+]informer:pods ok\nreadyz check passed\n"),
    (BAD, "/readyz", 500, "[+]ping ok\n[-]apiserver failed: cannot reach the API server at "
     "https://x\n[+]informer:pods ok\nreadyz check failed\n"),
    (BAD, "/readyz/informer:pods", 200, "ok"),
    (BAD, "/readyz/apiserver", 500,
     "[-]apiserver failed: cannot reach the API server at https://x\nreadyz check failed\n"),
    (BAD, "/readyz/nothing", 404, "404 page not found\n"),
    (BAD, "/livez", 200, "ok"),
    (BAD, "/healthz?verbose", 200, "[+]ping ok\nhealthz check passed\n"),
], ids=["ready", "verbose", "a failed check says why", "one check", "one failed check",
        "no such check", "alive while not ready", "healthz is the process"])
async def test_health_endpoints_answer_as_kube_apiservers(
        checks: list[Check], path: str, status: int, text: str) -> None:
    server = HealthServer(lambda: checks)
    port = await server.start("127.0.0.1", 0)
    try:
        async with aiohttp.ClientSession() as session, \
                session.get(f"http://127.0.0.1:{port}{path}") as answer:
            assert (answer.status, await answer.text()) == (status, text)
    finally:
        await server.stop()
