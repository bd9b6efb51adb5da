"""Bounded memory in a real durable server, measured from /proc: 300 updates of a 1 MB
ConfigMap keep RSS within the retention bound (--log-retention-bytes); watchers that stop
reading are closed (a stalled one with a 410 Expired ERROR event it can read if it comes
back in time), and a watch that never reads still ends at its timeoutSeconds."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from tests.support.processes import ServerProcess, start_server

CM = "/api/v1/namespaces/default/configmaps"
RETENTION_MIB = 16
SLACK_MIB = 20  # transient request bodies, encodings, allocator: measured ~+5 over the bound
STALL = 2


def rss_mib(pid: int) -> float:
    """The process's resident set size, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def silent_watch(srv: ServerProcess, query: str) -> socket.socket:
    """A watch whose client never reads (a tiny receive window, so the server's writes block)."""
    host, port = srv.url.removeprefix("http://").rsplit(":", 1)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    sock.sendall(f"GET {CM}?watch=1&{query} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    return sock


def read_to_the_end(sock: socket.socket, within: float) -> tuple[bytes, str]:
    """Everything the server still sends, and how the connection ended ("eof", "reset");
    fails if it is still open after `within` seconds."""
    sock.settimeout(within)
    data = bytearray()
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(1 << 20)
        except ConnectionResetError:
            return bytes(data), "reset"
        except TimeoutError:
            break
        if not chunk:
            return bytes(data), "eof"
        data += chunk
    raise AssertionError(f"the watch is still open after {within} s ({len(data)} bytes read)")


def watch_lines(data: bytes) -> list[dict[str, Any]]:
    """The complete JSON lines in a chunked watch body."""
    lines = []
    for raw in data.split(b"\n"):
        start = raw.find(b'{"type"')
        if start != -1:
            try:
                lines.append(orjson.loads(raw[start:]))
            except orjson.JSONDecodeError:
                pass
    return lines


async def update(session: aiohttp.ClientSession, url: str, obj: dict[str, Any],
                 i: int) -> dict[str, Any]:
    obj["data"] = {"d": f"{i:05d}" + "x" * 1_000_000}
    async with session.put(f"{url}{CM}/big", json=obj) as resp:
        assert resp.status == 200, await resp.text()
        return await resp.json()


def test_rss_stays_within_the_retention_bound_and_silent_watchers_are_closed(
        tmp_path: Path) -> None:
    srv = start_server(tmp_path / "data", "--http", "--log-retention-bytes",
                       f"{RETENTION_MIB}Mi", "--watch-stall-timeout", str(STALL))
    try:
        asyncio.run(_scenario(srv))
    finally:
        assert srv.stop() == 0


async def _scenario(srv: ServerProcess) -> None:
    pid = srv.proc.pid
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{srv.url}{CM}", json={"metadata": {"name": "big"}}) as resp:
            obj = await resp.json()
        for i in range(20):  # warm up: the allocator and the caches reach their steady state
            obj = await update(session, srv.url, obj, i)
        baseline = rss_mib(pid)
        rv = obj["metadata"]["resourceVersion"]
        stalled = [silent_watch(srv, f"resourceVersion={rv}") for _ in range(5)]
        timed_out = silent_watch(srv, f"resourceVersion={rv}&timeoutSeconds=1")
        peak = baseline
        for i in range(300):
            obj = await update(session, srv.url, obj, i)
            if i % 10 == 0:
                peak = max(peak, rss_mib(pid))
        assert peak - baseline <= RETENTION_MIB + SLACK_MIB, (
            f"RSS grew {peak - baseline:.0f} MiB over {baseline:.0f} with a "
            f"{RETENTION_MIB} MiB retention bound")

        # a watcher that comes back soon after the stall bound reads the 410 and relists
        comeback = silent_watch(srv, f"resourceVersion={obj['metadata']['resourceVersion']}")
        started = time.monotonic()
        n = 1000
        while time.monotonic() - started < STALL + 2:
            # a few MB fill its socket buffers, and its writes block for more than STALL;
            # it is closed then, and dropped only 2 x STALL later: read before that
            n += 1
            obj = await update(session, srv.url, obj, n)
        data, _ = read_to_the_end(comeback, 10)
        last = watch_lines(data)[-1]
        assert last["type"] == "ERROR", last["type"]
        assert (last["object"]["code"], last["object"]["reason"]) == (410, "Expired")
        assert "the client read nothing" in last["object"]["message"]

    for sock in stalled:  # closed for good, without anyone reading
        read_to_the_end(sock, 15)
    data, _ = read_to_the_end(timed_out, 15)
    assert all(line["type"] != "ERROR" for line in watch_lines(data)), "a timeout, not a stall"
    assert rss_mib(pid) - baseline <= RETENTION_MIB + SLACK_MIB


def test_a_watch_that_is_never_read_still_ends_at_its_timeout(tmp_path: Path) -> None:
    """With a stall bound far away, only timeoutSeconds can end this watch: it ends then,
    cleanly (the end of the chunked stream, no ERROR), although its client never read (the
    read fails if the stream is still open 30 s after the timeout: no stall bound ends it
    before 600 s)."""
    srv = start_server(tmp_path / "data", "--http", "--watch-stall-timeout", "600")
    try:
        asyncio.run(_never_read(srv))
    finally:
        assert srv.stop() == 0


async def _never_read(srv: ServerProcess) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{srv.url}{CM}", json={"metadata": {"name": "big"}}) as resp:
            obj = await resp.json()
        watch = silent_watch(srv, f"resourceVersion={obj['metadata']['resourceVersion']}"
                                  "&timeoutSeconds=2")
        started = time.monotonic()
        for i in range(12):  # more than its socket buffers hold: its writes block
            obj = await update(session, srv.url, obj, i)
        # not a wait for a condition: reading sooner would unblock the writes, so the client
        # stays silent until the (real-time) server's 2 s deadline has surely passed
        await asyncio.sleep(max(0.0, 4 - (time.monotonic() - started)))
        data, how = read_to_the_end(watch, 30)
    assert how == "eof", "the stream ends; the connection isn't dropped"
    assert data.endswith(b"0\r\n\r\n"), "the chunked stream is terminated"
    lines = watch_lines(data)
    assert lines and all(line["type"] == "MODIFIED" for line in lines)
