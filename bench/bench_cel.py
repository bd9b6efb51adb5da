"""CEL interface speed, per engine: the compile-cache hit path, a cold compile, and one
selector evaluation per device (a fresh device each time, and a device reused).

Prints calls per second of wall time and per CPU second (the steadier number on the shared
box), with the machine's speed index and the other cores' load.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable

import benchlib

from fakeapi import cel

REALISTIC = ('device.driver == "gpu.example.com" && '
             'device.attributes["gpu.example.com"].type == "gpu" && '
             'device.capacity["gpu.example.com"].memory.compareTo(quantity("10Gi")) >= 0 && '
             'device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.0.0")) '
             '&& (!has(device.attributes["gpu.example.com"].numa) || '
             'device.attributes["gpu.example.com"].numa == 0)')
SIMPLE = 'device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].type == "gpu"'


def device(i: int) -> dict[str, object]:
    """A ResourceSlice device like the example driver's (varied so a cache can't help)."""
    return {"name": f"gpu-{i}", "attributes": {
        "type": {"string": "gpu"}, "driverVersion": {"version": f"1.{i % 7}.0"},
        "numa": {"int": i % 2}, "uuid": {"string": f"gpu-{i:08d}"},
        "model": {"string": "LATEST-GPU-MODEL"}},
        "capacity": {"memory": {"value": f"{40 + i % 3 * 40}Gi"}}}


def timed(label: str, step: Callable[[int], object], seconds: float, unit: str) -> float:
    """Run `step(i)` for `seconds` after a warm-up; print wall and CPU rates; return CPU rate."""
    for i in range(50):
        step(i)
    gc.collect()
    meter = benchlib.CpuMeter(me=None)
    n, t0, c0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        for i in range(n, n + 50):
            step(i)
        n += 50
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    other = meter.shares()["other"]
    per_cpu = n / max(cpu, 1e-9)
    print(f"  {label:<46} {n / wall:>12,.0f} {unit}/s  per CPU s {per_cpu:>12,.0f}  "
          f"{cpu / n * 1e6:>9.1f} µs  (other {other:.2f} cores)")
    return per_cpu


def bench_engine(engine: str, devices: list[dict[str, object]], seconds: float) -> None:
    """The compile and evaluation measurements for one engine."""
    print(f"engine {engine}")
    timed("compile, cache hit (realistic selector)",
          lambda i: cel.compile(REALISTIC, engine=engine), seconds, "compiles")
    timed("compile, cold (realistic selector, unique text)",
          lambda i: cel.compile(f"{REALISTIC} || {i} == -1", engine=engine), seconds, "compiles")
    inputs = [cel.device_input("gpu.example.com", d) for d in devices]
    for name, text in (("realistic", REALISTIC), ("simple", SIMPLE)):
        program = cel.compile(text, engine=engine)
        assert isinstance(program, cel.Program), program
        bench_matches(name, program, devices, inputs, seconds)


def bench_matches(name: str, program: cel.Program, devices: list[dict[str, object]],
                  inputs: list[cel.DeviceInput], seconds: float) -> None:
    """One selector per device: building each device's input, then reusing it."""
    timed(f"matches, {name}, device input built each time",
          lambda i: cel.matches(program, cel.device_input(
              "gpu.example.com", devices[i % len(devices)])), seconds, "devices")
    timed(f"matches, {name}, device input reused",
          lambda i: cel.matches(program, inputs[i % len(inputs)]), seconds, "devices")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0, help="per measurement")
    args = parser.parse_args()
    benchlib.header("bench_cel: compile cache and selector evaluation per device")
    devices = [device(i) for i in range(2000)]
    for engine in cel.available_engines():
        bench_engine(engine, devices, args.seconds)
    print(f"compile cache: {len(cel.cache)} entries, {cel.cache.hits:,} hits, "
          f"{cel.cache.misses:,} misses")


if __name__ == "__main__":
    main()
