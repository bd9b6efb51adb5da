"""Crash safety: kill -9 rounds under 24 concurrent writers and a watcher (see crash_rounds):
every acknowledged write and every watched event survives, and no revision is reused.
Three rounds always; the full twenty with `pytest -m crash_full` (or bench/bench_crash.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest

from tests.support.crash import CM, run_rounds
from tests.support.processes import start_server


def _assert_rounds(data: Path, rounds: int) -> None:
    ledger = run_rounds(data, rounds)
    assert len(ledger.rounds) == rounds
    assert all(r["acked"] >= 300 for r in ledger.rounds)
    assert sum(r["watched"] for r in ledger.rounds) > 0, "the watcher saw nothing"
    assert [r["last_revision"] for r in ledger.rounds] == sorted(
        r["last_revision"] for r in ledger.rounds)


def test_kill_9_rounds_lose_nothing_anyone_saw(tmp_path: Path) -> None:
    _assert_rounds(tmp_path / "data", 3)


@pytest.mark.crash_full
def test_twenty_kill_9_rounds_lose_nothing_anyone_saw(tmp_path: Path) -> None:
    _assert_rounds(tmp_path / "data", 20)


def test_a_restarted_server_serves_every_acknowledged_object(tmp_path: Path) -> None:
    """After a round, LIST over HTTP (not only the file) has every acknowledged object, and
    new writes get revisions after every old one."""
    data = tmp_path / "data"
    ledger = run_rounds(data, 1)
    srv = start_server(data, "--http")

    async def probe() -> tuple[dict[str, int], int]:
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{srv.url}{CM}") as resp:
                items = (await resp.json())["items"]
            body = {"metadata": {"name": "after-the-crash"}}
            async with session.post(f"{srv.url}{CM}", json=body) as resp:
                assert resp.status == 201
                created = int((await resp.json())["metadata"]["resourceVersion"])
        return {o["metadata"]["name"]: int(o["metadata"]["resourceVersion"])
                for o in items}, created

    try:
        stored, created = asyncio.run(probe())
    finally:
        assert srv.stop() == 0
    for rev, (_, name, _) in ledger.acked.items():
        assert name in stored and stored[name] >= rev, f"{name} (rev {rev}) not served"
    assert created > max([*ledger.acked, *ledger.watched])
