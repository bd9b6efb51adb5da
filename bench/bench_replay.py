"""`fakeapi replay` against recording live, both on the virtual clock (issue-16 goal: a
replay >= 3x faster than the live run it replays):

- live: a control plane with a data directory (the recording) on a seeded virtual clock,
  served over HTTPS as `fakeapi serve` serves it, every component running, 1,250 nodes of
  the `gpu` profile (8 GPUs each); a client in this process POSTs a ResourceClaimTemplate and
  10,000 pods with one GPU claim each from it (200 in flight), then advances the clock 30 s
  (the pods' start) and the plane settles. Timed from the plane's start to settled;
- replay: `fakeapi.replay.replay.replay()` of that recording (a fresh plane, the same seed
  and settings, the inputs sent again as the recorded user, settling between them), then
  `--check`'s comparison of the two logs.

Run with `.venv/bin/python bench/bench_replay.py [--scale F]` (`--scale 0.1`: a tenth).
`--against TREE --rounds N` also replays the same recording N times with this tree's code
and with TREE's (another checkout, e.g. `git archive main | tar -x -C /tmp/before`), each in
a child process, alternating, and prints each time: a before/after pair on a shared box.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchlib import CpuMeter, child_env, header, rate_line, rss_mb  # noqa: E402

from fakeapi.cli import process  # noqa: E402
from fakeapi.cluster import ClusterConfig  # noqa: E402
from fakeapi.controlplane import ControlPlane  # noqa: E402
from fakeapi.http import serving  # noqa: E402
from fakeapi.machinery.clock import VirtualClock  # noqa: E402
from fakeapi.replay import check  # noqa: E402
from fakeapi.replay.inputs import read_recording  # noqa: E402
from fakeapi.replay.replay import ReplaySettings, replay  # noqa: E402
from kubelet_emu.profile import load_profile  # noqa: E402
from kubelet_emu.settings import EmulatorSettings  # noqa: E402

SEED = 16
IN_FLIGHT = 200
TEMPLATES = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaimtemplates"
PODS = "/api/v1/namespaces/default/pods"
ADVANCE = "/apis/emulator.fakeapi.dev/v1alpha1/clocks/cluster/advance"
TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu"},
            "spec": {"spec": {"devices": {"requests": [{
                "name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}}


def pod(i: int) -> dict[str, Any]:
    """A pod with one GPU claim from the template."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"g-{i}"}, "spec": {
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
        "containers": [{"name": "c", "image": "cuda",
                        "resources": {"claims": [{"name": "gpu"}]}}]}}


async def record(data_dir: Path, state: Path, settings: ReplaySettings, pods: int) -> float:
    """The live run; its real seconds from the plane's start to settled."""
    t0 = time.perf_counter()
    plane = ControlPlane(ClusterConfig(data_dir=data_dir, seed=settings.seed),
                         clock=VirtualClock(), components=settings.components,
                         emulator=EmulatorSettings(nodes=settings.nodes,
                                                   profile=settings.node_profile,
                                                   state_dir=state))
    listener = await serving.listen(plane.cluster, host="127.0.0.1", port=0,
                                    pki_dir=state / "pki", kubeconfig=state / "kubeconfig")
    assert listener.pki is not None
    context = ssl.create_default_context(cafile=str(listener.pki.ca_cert))
    context.load_cert_chain(listener.pki.admin_cert, listener.pki.admin_key)
    await plane.start()
    try:
        async with aiohttp.ClientSession(base_url=listener.url,
                                         connector=aiohttp.TCPConnector(ssl=context,
                                                                        limit=IN_FLIGHT)) as s:

            async def post(path: str, body: dict[str, Any]) -> None:
                async with s.post(path, data=orjson.dumps(body),
                                  headers={"Content-Type": "application/json"}) as r:
                    assert r.status < 300, await r.text()

            await post(TEMPLATES, TEMPLATE)
            for start in range(0, pods, IN_FLIGHT):
                await asyncio.gather(*(post(PODS, pod(i))
                                       for i in range(start, min(pods, start + IN_FLIGHT))))
            await post(ADVANCE, {"apiVersion": "emulator.fakeapi.dev/v1alpha1",
                                 "kind": "ClockAdvance", "duration": "30s"})
        await plane.settle()
        running = sum(1 for p in await plane.cluster.client("bench").list(
            "pods", "default", copy=False) if p["status"].get("phase") == "Running")
        took = time.perf_counter() - t0
        print(f"live:   {pods:,} pods, {running:,} Running, {plane.cluster.log.revision:,} "
              f"events")
    finally:
        await listener.close()
        await plane.stop()
    return took


REPLAY_CHILD = """
import asyncio, sys, tempfile, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from fakeapi.cli import process
from fakeapi.replay import check
from fakeapi.replay.inputs import read_recording
from fakeapi.replay.replay import ReplaySettings, replay
from kubelet_emu.profile import load_profile
process.tune()
rec = read_recording(Path(sys.argv[2]))
settings = ReplaySettings(seed=int(sys.argv[3]), nodes=int(sys.argv[4]),
                          node_profile=load_profile("gpu"))
cpu = time.process_time()
done = asyncio.run(replay(rec, settings, state_dir=Path(tempfile.mkdtemp()), progress=False))
cpu = time.process_time() - cpu
same = check.first_divergence(rec.log.records, done.records) is None
print(done.seconds, cpu, "no divergence" if same else "DIVERGED")
"""


def against(tree: Path, rounds: int, data: Path, nodes: int, events: int, live: float) -> None:
    """Replay the recording in `data` with this tree's code and `tree`'s, alternating."""
    here = Path(__file__).resolve().parent.parent
    for _ in range(rounds):
        for name, code in (("before", tree), ("after", here)):
            out = subprocess.run([sys.executable, "-c", REPLAY_CHILD, str(code), str(data),
                                  str(SEED), str(nodes)], capture_output=True, text=True,
                                 env=child_env(), check=True)
            seconds, cpu, verdict = out.stdout.split(maxsplit=2)
            rate = events / float(seconds)
            print(f"{name:>6}: {float(seconds):.2f} s ({float(cpu):.2f} s of CPU), "
                  f"{rate:,.0f} events/s, {rate / (events / live):.2f}x live; "
                  f"{verdict.strip()}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--against", type=Path, help="another source tree to replay with too")
    parser.add_argument("--rounds", type=int, default=2, help="--against: pairs to run")
    args = parser.parse_args()
    header("bench_replay: replaying the 10,000-GPU-pod run against recording it live")
    process.tune()
    nodes, pods = max(1, int(1_250 * args.scale)), max(1, int(10_000 * args.scale))
    settings = ReplaySettings(seed=SEED, nodes=nodes, node_profile=load_profile("gpu"))
    root = Path(tempfile.mkdtemp(prefix="bench-replay-"))
    try:
        meter = CpuMeter(bench=None)
        live = asyncio.run(record(root / "data", root / "live", settings, pods))
        live_cpu = meter.text()
        recording = read_recording(root / "data")
        print(f"        {live:.1f} s; {meter.last('bench'):.2f} of a core; RSS {rss_mb():.0f} MB")
        meter = CpuMeter(bench=None)
        (root / "replay").mkdir()
        done = asyncio.run(replay(recording, settings, state_dir=root / "replay",
                                  progress=False))
        replay_cpu = meter.text()
        print(f"replay: {done.inputs:,} inputs, {done.revision:,} events, {done.seconds:.1f} s; "
              f"{replay_cpu}")
        t0 = time.perf_counter()
        found = check.first_divergence(recording.log.records, done.records)
        verdict = "no divergence" if found is None else found.text()
        print(f"check:  {verdict}\n        ({recording.last:,} events compared in "
              f"{time.perf_counter() - t0:.2f} s)")
        live_rate, replay_rate = recording.last / live, done.revision / done.seconds
        print(rate_line("live events/s", live_rate, live_rate) + f"   ({live_cpu})")
        print(rate_line("replay events/s (target: 3x live)", replay_rate, 3 * live_rate))
        print(f"ratio replay/live: {replay_rate / live_rate:.2f}x")
        if args.against is not None:
            against(args.against.resolve(), args.rounds, root / "data", nodes, recording.last,
                    live)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
