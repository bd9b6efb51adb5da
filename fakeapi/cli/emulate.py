"""`fakeapi emulate --kubeconfig K`: run the chosen components and emulated nodes in a process
of their own against the API server of K (`fakeapi serve --components none --nodes 0`, a kind
cluster, any kube-apiserver). See `fakeapi.emulation` for who the components act as.

Importing this module is cheap: the components, aiohttp and the clients are imported when the
command runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fakeapi.cli.serve import add_log_level, add_plane_settings, emulator_settings, run_main

IDENTITY_CHOICES = ("auto", "service-accounts", "kubeconfig")
"""`--identities` (the same names as `fakeapi.emulation.IDENTITIES`, which a test checks)."""


def parse_shard(text: str) -> tuple[int, int]:
    """`--shard i/n`: shard i (from 0) of n."""
    index, slash, count = text.partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        i = n = -1
    if not slash or n < 1 or not 0 <= i < n:
        raise argparse.ArgumentTypeError(f"invalid shard {text!r}: i/n with 0 <= i < n")
    return i, n


def parse_lease_duration(text: str) -> float:
    """A `--leader-elect-*` duration in Go's syntax (`15s`, `1m30s`), in seconds."""
    from fakeapi.machinery.durations import DurationError, parse_duration
    try:
        seconds = parse_duration(text) / 1e9
    except DurationError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"invalid duration {text!r}: must be positive")
    return seconds


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`fakeapi emulate` and its options."""
    cmd = sub.add_parser(
        "emulate", help="run components and emulated nodes against any API server",
        description="Run the chosen components (scheduler, controllers, emulated kubelets "
                    "with fake DRA drivers) in this process, against the API server of a "
                    "kubeconfig, over HTTPS.")
    cmd.add_argument("--kubeconfig", type=Path, required=True,
                     help="the API server to attach to, and the credentials")
    cmd.add_argument("--identities", choices=IDENTITY_CHOICES, default="auto",
                     help="service-accounts: each component impersonates its kube-system "
                          "service account (as in fakeapi serve); kubeconfig: all act as the "
                          "kubeconfig's user; auto (default): service-accounts against a "
                          "fakeapi server, else kubeconfig")
    cmd.add_argument("--shard", type=parse_shard, default=(0, 1), metavar="i/n",
                     help="run only the nodes of shard i of n (of --nodes and of the Nodes "
                          "clients create), by a hash of the node's name: n processes with "
                          "0/n ... n-1/n run each node exactly once")
    cmd.add_argument("--data-dir", type=Path,
                     help="the emulated nodes' folders (default: a temporary one)")
    cmd.add_argument("--leader-elect", action=argparse.BooleanOptionalAction, default=True,
                     help="run the scheduler and the controllers only while holding their "
                          "Lease (kube-system/kube-scheduler, kube-controller-manager), as "
                          "upstream's binaries do (default on)")
    for flag, default, what in (("lease-duration", "15s", "how long a Lease holds unrenewed"),
                                ("renew-deadline", "10s", "how long a leader tries to renew"),
                                ("retry-period", "2s", "how often candidates try")):
        cmd.add_argument(f"--leader-elect-{flag}", type=parse_lease_duration, default=default,
                         metavar="DURATION", help=f"{what} (default {default})")
    cmd.add_argument("--kubelet-address", default="127.0.0.1", metavar="IP",
                     help="where the kubelet API of this process's nodes listens, advertised as "
                          "each node's InternalIP (default 127.0.0.1)")
    cmd.add_argument("--kubelet-port", type=int, default=0, metavar="PORT",
                     help="the kubelet API's port, advertised in each node's "
                          "daemonEndpoints (default 0: a free one)")
    cmd.add_argument("--health-address", default="127.0.0.1", metavar="IP",
                     help="where /readyz, /livez and /healthz of this process listen, over "
                          "plain HTTP (default 127.0.0.1)")
    cmd.add_argument("--health-port", type=int, default=0, metavar="PORT",
                     help="their port (default 0: a free one, printed in the ready line)")
    add_plane_settings(cmd)
    add_log_level(cmd)
    cmd.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Emulate until SIGINT/SIGTERM."""
    return run_main(args, emulate)


async def emulate(args: argparse.Namespace) -> int:
    """Attach, start, print one ready line, run until SIGINT/SIGTERM, exit 0; exit 1 saying
    why when the server can't be used."""
    import asyncio
    import dataclasses
    import shutil
    import signal

    from fakeapi.auth.kubeconfig import read_ca
    from fakeapi.emulation import EmulatedPlane, KubeletListen, StartError
    from fakeapi.machinery.statedir import make_temporary_state
    from fakeapi.remote_client import RemoteClient
    from fakeapi.runtime.healthserver import HealthServer
    from fakeapi.runtime.leaderelection import LeaseTiming

    state_dir = args.data_dir or make_temporary_state(prefix="fakeapi-emulate-")
    try:
        remote = RemoteClient.from_kubeconfig(args.kubeconfig)
        client_ca = read_ca(args.kubeconfig)
    except Exception as e:  # missing, unreadable or not a kubeconfig
        print(f"fakeapi emulate: cannot read the kubeconfig {args.kubeconfig}: {e}",
              file=sys.stderr, flush=True)
        return 1
    plane = EmulatedPlane(remote, components=args.components,
                          emulator=dataclasses.replace(emulator_settings(args, state_dir),
                                                       shard=args.shard),
                          identities=args.identities, feature_gates=args.feature_gates,
                          seed=args.seed, leader_elect=args.leader_elect,
                          lease_timing=LeaseTiming(
                              lease_duration=args.leader_elect_lease_duration,
                              renew_deadline=args.leader_elect_renew_deadline,
                              retry_period=args.leader_elect_retry_period),
                          kubelet_api=KubeletListen(address=args.kubelet_address,
                                                    port=args.kubelet_port,
                                                    client_ca=client_ca))
    try:
        await plane.start()
    except StartError as e:
        print(f"fakeapi emulate: {e}", file=sys.stderr, flush=True)
        await remote.close()
        return 1
    health = HealthServer(plane.health)
    try:
        await health.start(args.health_address, args.health_port)
    except OSError as e:
        print(f"fakeapi emulate: cannot serve /readyz on {args.health_address}:"
              f"{args.health_port}: {e.strerror or e}", file=sys.stderr, flush=True)
        await plane.stop()
        return 1
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    kubelet = plane.kubelet_server
    endpoint = f" kubelet={args.kubelet_address}:{kubelet.port}" if kubelet else ""
    print(f"fakeapi emulate ready against {remote.server}: components="
          f"{','.join(plane.components) or 'none'} nodes={args.nodes}{endpoint} "
          f"shard={args.shard[0]}/{args.shard[1]} identities={plane.identities} "
          f"identity={plane.identity} health={args.health_address}:{health.port}", flush=True)
    await stop.wait()
    await health.stop()
    await plane.stop()
    if args.data_dir is None:
        shutil.rmtree(state_dir, ignore_errors=True)
    return 0
