"""Shared helpers for the benchmarks: a server subprocess, /proc readings, stats, report lines.

Not a benchmark itself. The bench scripts put this directory on `sys.path` (running
`python bench/X.py` does that already) and import it as `benchlib`.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import ssl
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fakeapi.auth.kubeconfig import read_kubeconfig  # noqa: E402 (needs ROOT on sys.path)

CLK_TCK = os.sysconf("SC_CLK_TCK")
RESOURCECLAIMS = "resourceclaims.resource.k8s.io"


def configmap(name: str, namespace: str = "default") -> dict:
    """A small ConfigMap (about 150 B of JSON)."""
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace, "labels": {"bench": "1"}},
            "data": {"key": "value", "n": name}}


def resource_claim(name: str, namespace: str = "default") -> dict:
    """A small ResourceClaim asking for one GPU of a device class."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace, "labels": {"bench": "1"}},
            "spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}


# ----- server subprocess -------------------------------------------------------------------


@dataclasses.dataclass
class Server:
    """A `fakeapi serve` child process and what its ready line said."""

    proc: subprocess.Popen[bytes]
    url: str
    kubeconfig: Path
    ready_seconds: float

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self.proc.pid

    def stop(self, grace: float = 5.0) -> float:
        """SIGTERM, wait for the flush-and-exit, SIGKILL after `grace`; return seconds taken.

        A server that needs the SIGKILL is reported (a shutdown bug, not a benchmark result).
        """
        t0 = time.perf_counter()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                print(f"      WARNING: server pid {self.pid} ignored SIGTERM for {grace:.0f} s "
                      "and was killed")
        return time.perf_counter() - t0


def child_env() -> dict[str, str]:
    """This process's environment for a child Python, with bytecode caching on: a user's
    installed package runs from its .pyc files, so the benches measure that (an inherited
    PYTHONDONTWRITEBYTECODE would make every start compile every module)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def start_server(*, tls: bool = False, data_dir: Path | None = None,
                 extra: tuple[str, ...] = (), python_args: tuple[str, ...] = (),
                 timeout: float = 20.0) -> Server:
    """Start `fakeapi serve --port 0` in a child process and wait for its ready line (plain
    HTTP unless `tls`; with TLS and no data directory it is the default `fakeapi serve`).

    `python_args` go before `-m fakeapi.cli` (e.g. `-m cProfile -o FILE` to profile it).
    """
    cmd = [sys.executable, *python_args, "-m", "fakeapi.cli", "serve", "--port", "0"]
    if not tls:
        cmd.append("--http")
    if data_dir is not None:
        cmd += ["--data-dir", str(data_dir)]
    cmd += list(extra)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=child_env())
    assert proc.stdout is not None
    deadline = t0 + timeout
    line = b""
    while time.perf_counter() < deadline:
        line = proc.stdout.readline()
        if not line or line.startswith(b"fakeapi ready at "):
            break
    ready = time.perf_counter() - t0
    if not line.startswith(b"fakeapi ready at "):
        proc.kill()
        raise RuntimeError(f"server did not start: {line!r}")
    url, _, kc = line.decode().removeprefix("fakeapi ready at ").strip().partition(" ")
    return Server(proc=proc, url=url, kubeconfig=Path(kc.removeprefix("kubeconfig=")),
                  ready_seconds=ready)


def client_ssl_context(kubeconfig: Path) -> ssl.SSLContext:
    """A client TLS context with the kubeconfig's CA and admin client certificate."""
    ctx = read_kubeconfig(kubeconfig)[1]
    assert ctx is not None, f"{kubeconfig} is not an https kubeconfig"
    return ctx


# ----- /proc readings ----------------------------------------------------------------------


def cpu_seconds(pid: int | None = None) -> float:
    """User+system CPU seconds used so far by a process (this one by default)."""
    if pid is None:
        t = os.times()
        return t.user + t.system
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def rss_mb(pid: int | None = None) -> float:
    """Resident set size (VmRSS) in MiB."""
    for line in Path(f"/proc/{pid or os.getpid()}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def machine_busy_seconds() -> float:
    """CPU seconds spent busy (not idle/iowait) by all cores since boot, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / CLK_TCK


class CpuMeter:
    """CPU share (1.0 = one full core) of some processes over a measured interval.

    `other` is what every other process on the machine used meanwhile: the box is shared
    (tests, other benchmarks), so a large `other` means the rates are understated.
    """

    def __init__(self, **pids: int | None) -> None:
        self.pids = pids
        self.t0 = time.perf_counter()
        self.c0 = {k: cpu_seconds(p) for k, p in pids.items()}
        self.m0 = machine_busy_seconds()
        self._last: dict[str, float] | None = None

    def shares(self) -> dict[str, float]:
        """Cores used per named process since construction, plus `other`."""
        dt = time.perf_counter() - self.t0
        out = {k: (cpu_seconds(p) - self.c0[k]) / dt for k, p in self.pids.items()}
        out["other"] = max(0.0, (machine_busy_seconds() - self.m0) / dt - sum(out.values()))
        self._last = out
        return out

    def last(self, name: str) -> float:
        """The share of `name` from the latest `shares()`/`text()` call."""
        return (self._last or self.shares())[name]

    def text(self) -> str:
        """`server 0.98 core, client 0.71 core, other 0.05 core`."""
        return ", ".join(f"{k} {v:.2f}" for k, v in self.shares().items()) + " cores"


def calibrate() -> float:
    """µs per op of a fixed dict-building + orjson workload, best of 5 (a machine-speed index).

    The lent VMs change speed by up to 2x from one hour to the next (other tenants), even
    when this box looks idle; compare runs only after scaling by this number.
    """
    import orjson

    best = float("inf")
    for _ in range(5):
        t0 = time.process_time()
        for i in range(2000):
            obj = {"metadata": {"name": f"n-{i}", "labels": {"a": "b"}}, "data": {"k": str(i)}}
            orjson.loads(orjson.dumps(obj))
        best = min(best, (time.process_time() - t0) / 2000 * 1e6)
    return best


def header(title: str) -> None:
    """First line of every benchmark: what, the machine-speed index and the machine's load."""
    load = os.getloadavg()
    print(f"# {title} | speed index {calibrate():.2f} µs/op (lower is faster) | "
          f"load avg {load[0]:.2f} | {os.cpu_count()} CPUs")


# ----- stats and report lines --------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100, nearest rank) of unsorted values; NaN when empty."""
    if not values:
        return float("nan")
    s = sorted(values)
    i = min(len(s) - 1, max(0, round(q / 100 * len(s) + 0.5) - 1))
    return s[i]


def rate_line(label: str, rate: float, target: float, unit: str = "/s") -> str:
    """`label   12,345/s  target >= 3,000/s  x4.12 OK`."""
    ratio = rate / target if target else float("nan")
    verdict = "OK" if ratio >= 1 else "BELOW"
    return (f"{label:<44} {rate:>10,.0f}{unit:<9} target >= {target:>7,.0f}{unit:<5}"
            f" x{ratio:5.2f} {verdict}")


def max_line(label: str, value: float, target: float, unit: str) -> str:
    """Like `rate_line` for an upper-bound target (latency, memory): ratio = target/value."""
    ratio = target / value if value else float("inf")
    verdict = "OK" if value <= target else "ABOVE"
    return (f"{label:<44} {value:>10,.2f}{unit:<9} target <= {target:>7,.2f}{unit:<5}"
            f" x{ratio:5.2f} {verdict}")


def latency_text(seconds: list[float]) -> str:
    """`p50 1.23 ms p99 4.56 ms` of latencies in seconds."""
    return (f"p50 {percentile(seconds, 50) * 1e3:6.2f} ms  "
            f"p99 {percentile(seconds, 99) * 1e3:6.2f} ms")
