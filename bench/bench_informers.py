"""Shared informers vs per-component watches: consumer CPU per event.

Run with `.venv/bin/python bench/bench_informers.py [--pods N] [--components N] [--rounds R]`.
Issue-6 target: with 5 components watching pods while 2,000 pods are created, one shared
informer (one watch, one cache, 5 handlers) costs less CPU per event than the 5
per-component watches the controllers had before (each its own `client.watch`, decoding a
copy of every object as the namespace controller did, or sharing the stored objects as the
garbage collector did). Each component only turns an event into a work-queue key.

Two measurements, each the best of `--rounds` (modes interleaved, so a drift in machine
speed hits every mode alike):

- `live`: this process's CPU (time.process_time) for creating the pods while the components
  watch, minus the same creates with no watcher. Realistic (watchers wake once per 2 ms
  window of commits) but the difference of two large numbers: noisy on a busy box.
- `catch-up`: the pods are created first; then the components start watching from the
  revision before the creates and the CPU until every component has every event is taken.
  No writes are in the measurement, so it is precise; all events come in large batches.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable

from benchlib import header

from fakeapi.client import Client
from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.runtime.informer import Handler, Informers, object_key

Stop = Callable[[], Awaitable[None]]
Setup = Callable[[Cluster, int, int, int], Awaitable[Stop]]
"""setup(cluster, components, pods, from_revision) starts the watching; stop() waits for all
events, then stops it. from_revision 0: from now."""


def pod(name: str) -> dict:
    """A small Pod."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "bench"}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


class Tally:
    """Counts what each component got; set when every one has `pods` events."""

    def __init__(self, components: int, pods: int) -> None:
        self.seen = [0] * components
        self.pods = pods
        self.done = asyncio.Event()
        self.keys: list[set[str]] = [set() for _ in range(components)]

    def handler(self, i: int) -> Handler:
        """Component i's handler: every change becomes a key."""
        return lambda type_, obj, old: self.got(i, obj)

    def got(self, i: int, obj: dict) -> None:
        """Component i turns an event into a key."""
        self.keys[i].add(object_key(obj))
        self.seen[i] += 1
        if self.seen[i] >= self.pods and min(self.seen) >= self.pods:
            self.done.set()


async def no_watcher(cluster: Cluster, components: int, pods: int, since: int) -> Stop:
    """Nobody watches: the cost of the creates alone."""

    async def stop() -> None:
        return None

    return stop


def watches(copy: bool) -> Setup:
    """`components` tasks, each with its own `client.watch("pods")`."""

    async def setup(cluster: Cluster, components: int, pods: int, since: int) -> Stop:
        tally = Tally(components, pods)

        async def component(i: int, client: Client) -> None:
            async for _type, obj in client.watch("pods", copy=copy,
                                                 resource_version=str(since or "")):
                tally.got(i, obj)

        tasks = [asyncio.create_task(component(i, cluster.client(f"c{i}")))
                 for i in range(components)]
        await asyncio.sleep(0)

        async def stop() -> None:
            await tally.done.wait()
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        return stop

    return setup


async def shared(cluster: Cluster, components: int, pods: int, since: int) -> Stop:
    """One shared informer of pods with one handler per component."""
    informer = Informers(client=cluster.client("system:kube-controller-manager")).get("pods")
    tally = Tally(components, pods)
    for i in range(components):
        informer.add_handler(tally.handler(i))
    if since:  # resume from a revision, as a restarted informer does
        informer.revision, informer.synced = since, True
    task = asyncio.create_task(informer.run())
    await asyncio.sleep(0)

    async def stop() -> None:
        await tally.done.wait()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    return stop


async def create(cluster: Cluster, pods: int) -> None:
    writer = cluster.client("writer")
    for i in range(pods):
        await writer.create("pods", pod(f"p{i}"))


async def live(setup: Setup, components: int, pods: int) -> float:
    """CPU seconds to create `pods` pods and deliver them to the components meanwhile."""
    cluster = Cluster(ClusterConfig(seed=1))
    stop = await setup(cluster, components, pods, 0)
    t0 = time.process_time()
    await create(cluster, pods)
    await stop()
    return time.process_time() - t0


async def catch_up(setup: Setup, components: int, pods: int) -> float:
    """CPU seconds to deliver `pods` already committed pods to the components."""
    cluster = Cluster(ClusterConfig(seed=1))
    since = cluster.store.revision
    await create(cluster, pods)
    t0 = time.process_time()
    stop = await setup(cluster, components, pods, since)
    await stop()
    return time.process_time() - t0


def report(title: str, cpu: dict[str, float], events: int) -> None:
    per_event = {name: seconds / events * 1e6 for name, seconds in cpu.items()}
    informer = per_event["one shared informer"]
    print(title)
    for name, us in per_event.items():
        print(f"  {name:<40} {us:8.2f} µs CPU per event and component   "
              f"x{us / informer:5.2f} of the shared informer")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--components", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    header(f"informers: {args.components} components watching pods, {args.pods} pods created")
    modes: dict[str, Setup] = {"watch per component (copy)": watches(True),
                               "watch per component (shared objects)": watches(False),
                               "one shared informer": shared}
    n, events = args.pods, args.pods * args.components
    best_live = {name: float("inf") for name in ("no watcher", *modes)}
    best_catch_up = {name: float("inf") for name in modes}
    for _ in range(args.rounds):
        for name, setup in {"no watcher": no_watcher, **modes}.items():
            best_live[name] = min(best_live[name], await live(setup, args.components, n))
        for name, setup in modes.items():
            best_catch_up[name] = min(best_catch_up[name],
                                      await catch_up(setup, args.components, n))
    base = best_live.pop("no watcher")
    print(f"creates alone: {base / n * 1e6:.1f} µs CPU per pod")
    report("live (CPU with watchers minus creates alone):",
           {name: cpu - base for name, cpu in best_live.items()}, events)
    report("catch-up (delivery only):", best_catch_up, events)


if __name__ == "__main__":
    asyncio.run(main())
