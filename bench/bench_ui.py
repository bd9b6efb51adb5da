"""The web view in headless Chromium against `fakeapi serve --http --node-profile gpu` children
(issue 20's speed goals), in parts:

- `paint`: with 500 nodes x 8 GPUs, from navigation to the page's `fakeapi-grid` mark (the
  whole grid drawn from the lists, by the browser's performance API), over a few loads (<= 1 s);
  then the server's CPU share on the idle cluster without the page and with it open;
- `lag`: the page open while this process creates claim+pod pairs at `--rate` a second (each
  claim one GPU, allocated by the scheduler): every 100 ms, how far the revision the page has
  drawn (its pods and claims; `<body data-pods-revision>`) is behind the server's, in time
  (since the server reached the drawn revision), and the time to catch up after the last create;
- `cpu`: `--pods` pairs created as fast as the server takes them until all are Running, on a
  fresh server with the view closed and again with it open: the server's CPU seconds for each
  and what the view adds (goal <= 5%).

Run with `.venv/bin/python bench/bench_ui.py [--parts paint lag cpu] [--nodes N] [--loads N]
[--rate R] [--seconds S] [--pods N]` (needs Debian's chromium and chromium-driver, as the
browser tests do).
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import json
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchlib import CpuMeter, Server, cpu_seconds, header, max_line, percentile, start_server  # noqa: E402

from tests.support.browser import browser  # noqa: E402

GPUS = 8
IDLE_SECONDS = 5.0
NAMESPACE = "default"
CONNECTIONS = 16


def slices(url: str) -> int:
    """How many ResourceSlices the server holds."""
    with urllib.request.urlopen(url + "/apis/resource.k8s.io/v1/resourceslices") as answer:
        return len(json.load(answer)["items"])


def gpu_server(nodes: int) -> Server:
    """A server with `nodes` emulated nodes of GPUS GPUs, once their slices are published."""
    server = start_server(extra=("--nodes", str(nodes), "--node-profile", "gpu"))
    t0 = time.perf_counter()
    while slices(server.url) < nodes and time.perf_counter() - t0 < 60:
        time.sleep(0.2)
    print(f"{nodes} nodes' slices published in {time.perf_counter() - t0:.1f} s")
    return server


def claim_and_pod(i: int) -> list[tuple[str, dict]]:
    """A claim for one GPU and the pod that uses it."""
    name = f"ui-{i:05d}"
    return [
        (f"/apis/resource.k8s.io/v1/namespaces/{NAMESPACE}/resourceclaims", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name}, "spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}),
        (f"/api/v1/namespaces/{NAMESPACE}/pods", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"claims": [{"name": "gpu"}]}}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": name}]}})]


async def create(url: str, count: int, rate: float | None) -> float:
    """POST `count` claim+pod pairs, paced at `rate` pairs a second (None: flat out); the
    pairs a second reached."""
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=CONNECTIONS))
    t0 = time.perf_counter()
    next_i = 0

    async def worker() -> None:
        nonlocal next_i
        while next_i < count:
            i, next_i = next_i, next_i + 1
            if rate is not None:
                await asyncio.sleep(max(0.0, t0 + i / rate - time.perf_counter()))
            for path, body in claim_and_pod(i):
                async with session.post(url + path, json=body) as resp:
                    if resp.status != 201:
                        raise RuntimeError(f"POST {path}: {resp.status} {await resp.text()}")

    async with session:
        await asyncio.gather(*(worker() for _ in range(CONNECTIONS)))
    return count / (time.perf_counter() - t0)


KINDS = ("pods", "resourceclaims")


class Seen:
    """The server's events of KINDS, each with when this process first saw it in the log."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.events: dict[str, list[tuple[int, float]]] = {k: [] for k in KINDS}

    def poll(self) -> None:
        """Read the log's new events of KINDS."""
        for kind, events in self.events.items():
            since = events[-1][0] if events else 1
            with urllib.request.urlopen(
                    f"{self.url}/debug/fakeapi/log?kind={kind}&object=false&since={since}"
                    ) as answer:
                now = time.perf_counter()
                for line in answer.read().splitlines():
                    revision = json.loads(line)["revision"]
                    if not events or revision > events[-1][0]:
                        events.append((revision, now))

    def lag(self, page: dict[str, int], now: float) -> float:
        """How long the oldest event the page has not drawn has been in the log."""
        worst = 0.0
        for kind, events in self.events.items():
            at = bisect.bisect_right([r for r, _ in events], page[kind])
            if at < len(events):
                worst = max(worst, now - events[at][1])
        return worst

    def newest(self) -> dict[str, int]:
        """The newest revision of each kind seen."""
        return {k: e[-1][0] if e else 0 for k, e in self.events.items()}


def running(url: str) -> int:
    """How many pods are Running."""
    with urllib.request.urlopen(url + "/api/v1/pods?fieldSelector=status.phase%3DRunning"
                                ) as answer:
        return len(json.load(answer)["items"])


def drawn(driver: object) -> dict[str, int] | None:
    """The revision of each of KINDS the page has drawn (None before it drew them all)."""
    got = driver.execute_script(  # type: ignore[attr-defined]
        "const d = document.body.dataset; return [d.podsRevision, d.resourceclaimsRevision]")
    return dict(zip(KINDS, (int(r) for r in got), strict=True)) if all(got) else None


def behind(page: dict[str, int] | None, want: dict[str, int]) -> bool:
    """Whether the page has not yet drawn every kind at `want`'s revision."""
    return page is None or any(page[k] < want[k] for k in KINDS)


def open_page(driver: object, url: str) -> None:
    """Load the view and wait until it has drawn the live cluster."""
    driver.get(url + "/ui/")  # type: ignore[attr-defined]
    t0 = time.perf_counter()
    while drawn(driver) is None and time.perf_counter() - t0 < 30:
        time.sleep(0.05)


def lag_part(args: argparse.Namespace) -> None:
    """The page's drawn revision behind the server's while pairs are created at args.rate."""
    count = int(args.rate * args.seconds)
    nodes = max(10, -(-count // GPUS) + 5)
    header(f"web view: updates while {args.rate:.0f} claims+pods/s are created "
           f"({count} pairs, {nodes} nodes x {GPUS} GPUs)")
    server = gpu_server(nodes)
    try:
        with tempfile.TemporaryDirectory() as profile:
            driver = browser(Path(profile))
            try:
                open_page(driver, server.url)
                seen = Seen(server.url)
                lags: list[float] = []

                def sample() -> None:
                    seen.poll()
                    page = drawn(driver)
                    if page is not None:
                        lags.append(seen.lag(page, time.perf_counter()))

                async def run() -> float:
                    task = asyncio.create_task(create(server.url, count, args.rate))
                    while not task.done():
                        await asyncio.to_thread(sample)
                        await asyncio.sleep(0.1)
                    return await task

                reached = asyncio.run(run())
                end = time.perf_counter()
                seen.poll()
                last = seen.newest()
                while behind(drawn(driver), last) and time.perf_counter() - end < 30:
                    time.sleep(0.02)
                caught = time.perf_counter() - end
                print(f"created {reached:.0f} pairs/s; {len(lags)} samples of the page's lag")
                print(f"  lag p50 {percentile(lags, 50) * 1e3:.0f} ms, p99 "
                      f"{percentile(lags, 99) * 1e3:.0f} ms, max {max(lags) * 1e3:.0f} ms")
                print(max_line("caught up after the last create", caught, 1.0, " s"))
            finally:
                driver.quit()
    finally:
        server.stop()


def cpu_part(args: argparse.Namespace) -> None:
    """Server CPU while args.pods pairs start, with the view closed and then open."""
    nodes = -(-args.pods // GPUS) + 5
    header(f"web view: server CPU while {args.pods} one-GPU pods start ({nodes} nodes)")
    spent = {}
    for view in (False, True):
        server = gpu_server(nodes)
        driver = None
        try:
            with tempfile.TemporaryDirectory() as profile:
                if view:
                    driver = browser(Path(profile))
                    open_page(driver, server.url)
                c0, t0 = cpu_seconds(server.pid), time.perf_counter()
                meter = CpuMeter(server=server.pid)
                reached = asyncio.run(create(server.url, args.pods, None))
                while running(server.url) < args.pods and time.perf_counter() - t0 < 300:
                    time.sleep(0.25)
                spent[view] = cpu_seconds(server.pid) - c0
                print(f"view {'open' if view else 'closed'}: {args.pods} Running in "
                      f"{time.perf_counter() - t0:.1f} s (created at {reached:.0f}/s), server "
                      f"{spent[view]:.1f} CPU s; {meter.text()}")
        finally:
            if driver is not None:
                driver.quit()
            server.stop()
    extra = (spent[True] - spent[False]) / spent[False]
    print(max_line("CPU the open view adds", extra * 100, 5.0, " %"))


def paint_part(args: argparse.Namespace) -> None:
    """First paint with args.nodes nodes, and the idle server's CPU without and with the page."""
    header(f"web view: first paint with {args.nodes} nodes x {GPUS} GPUs")
    server = start_server(extra=("--nodes", str(args.nodes), "--node-profile", "gpu"))
    driver = None
    try:
        t0 = time.perf_counter()
        while slices(server.url) < args.nodes and time.perf_counter() - t0 < 60:
            time.sleep(0.2)
        print(f"{args.nodes} slices published in {time.perf_counter() - t0:.1f} s")
        meter = CpuMeter(server=server.pid)
        time.sleep(IDLE_SECONDS)
        print(f"no page, the idle cluster for {IDLE_SECONDS:.0f} s: {meter.text()}")
        with tempfile.TemporaryDirectory() as profile:
            driver = browser(Path(profile))
            paints = []
            for _ in range(args.loads):
                driver.get(server.url + "/ui/")
                t1 = time.perf_counter()
                while time.perf_counter() - t1 < 30:
                    mark = driver.execute_script(
                        "const m = performance.getEntriesByName('fakeapi-grid');"
                        "return m.length ? m[0].startTime : null")
                    if mark is not None:
                        break
                    time.sleep(0.05)
                cells = driver.execute_script(
                    "return document.querySelectorAll('#grid .cell').length")
                paints.append(mark / 1e3 if mark is not None else float("inf"))
                print(f"  load: grid at {paints[-1]:.3f} s, {cells} cells")
            print(max_line("first paint (best of loads)", min(paints), 1.0, " s"))
            print(max_line("first paint (worst of loads)", max(paints), 1.0, " s"))
            meter = CpuMeter(server=server.pid)
            time.sleep(IDLE_SECONDS)
            print(f"page open on the idle cluster for {IDLE_SECONDS:.0f} s: {meter.text()}")
            driver.quit()
            driver = None
    finally:
        if driver is not None:
            driver.quit()
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--parts", nargs="+", choices=("paint", "lag", "cpu"),
                        default=["paint", "lag", "cpu"])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--loads", type=int, default=3)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--pods", type=int, default=2000)
    args = parser.parse_args()
    parts = {"paint": paint_part, "lag": lag_part, "cpu": cpu_part}
    for name in args.parts:
        parts[name](args)


if __name__ == "__main__":
    main()
