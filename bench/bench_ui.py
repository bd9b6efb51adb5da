"""The web view's first paint (issue 20: <= 1 s with 500 nodes x 8 GPUs), in headless Chromium
against a `fakeapi serve --http --nodes 500 --node-profile gpu` child: from navigation to the
page's `fakeapi-grid` mark (the whole grid drawn from the lists, by the browser's performance
API), over a few loads; then the server's CPU share on the idle cluster (its kubelets'
heartbeats) without the page and with it open (what its watches and polls add).

Run with `.venv/bin/python bench/bench_ui.py [--nodes N] [--loads N]` (needs Debian's chromium
and chromium-driver, as the browser tests do).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchlib import CpuMeter, header, max_line, start_server  # noqa: E402

from tests.support.browser import browser  # noqa: E402

GPUS = 8
IDLE_SECONDS = 5.0


def slices(url: str) -> int:
    """How many ResourceSlices the server holds."""
    with urllib.request.urlopen(url + "/apis/resource.k8s.io/v1/resourceslices") as answer:
        return len(json.load(answer)["items"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--loads", type=int, default=3)
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
