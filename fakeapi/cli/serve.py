"""`fakeapi serve`: run the API server and the emulated control plane in one process.

Importing this module is cheap (`fakeapi --help` loads no server): the server, the control
plane and their dependencies are imported when the command runs.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fakeapi.catalog import ALL_COMPONENTS
from fakeapi.cel.engines import ENGINES, ENV_VAR, EngineUnavailable
from fakeapi.machinery import features
from fakeapi.runtime.spec import ComponentSelectionError, select
from kubelet_emu.settings import DEFAULT_NODES, DEFAULT_PROFILE, DRIVER_MODES, EmulatorSettings

if TYPE_CHECKING:
    from fakeapi.auth import authn
    from kubelet_emu.profile import NodeProfile


def parse_feature_gates(text: str) -> dict[str, bool]:
    """`A=true,B=false` → {"A": True, "B": False}, refused as kube-apiserver refuses it."""
    try:
        return features.parse_feature_gates(text)
    except features.FeatureGateError as e:
        raise argparse.ArgumentTypeError(f'invalid argument "{text}" for "--feature-gates" '
                                         f"flag: {e}") from None


def parse_runtime_config(text: str) -> dict[str, str]:
    """`resource.k8s.io/v1beta2=true,api/alpha=false` → its keys and values (a
    ConfigurationMap; what they name is checked when the server starts)."""
    from fakeapi.machinery import runtimeconfig
    return dict(runtimeconfig.parse_runtime_config(text).overrides)


class MergeRuntimeConfig(argparse.Action):
    """Each `--runtime-config` adds its keys to what the earlier ones set, a later key
    winning (kube-apiserver's flag is a ConfigurationMap, which a repeat adds to)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, {**getattr(namespace, self.dest), **values})


def parse_token_file(path: str) -> dict[str, authn.UserInfo]:
    """`--token-auth-file`: kube-apiserver's static token CSV (token,user,uid,"groups")."""
    from fakeapi.auth import authn
    try:
        return authn.load_token_file(Path(path))
    except authn.TokenFileError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def parse_components(text: str) -> str:
    """`--components`: kube-controller-manager's `--controllers` syntax, names checked."""
    try:
        select(ALL_COMPONENTS, text)
    except ComponentSelectionError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def parse_cel_engine(text: str) -> str:
    """`--cel-engine`: one of the CEL engines, installed here."""
    from fakeapi.cel import engines
    try:
        engines.load(text)
    except EngineUnavailable as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def parse_profile(text: str) -> NodeProfile:
    """`--node-profile`: a shipped profile's name or a profile file, validated."""
    from kubelet_emu.profile import ProfileError, load_profile
    try:
        return load_profile(text)
    except ProfileError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def parse_clock(text: str) -> str:
    """`--clock`: real, virtual or virtual:auto."""
    from fakeapi.machinery.clock import CLOCK_MODES  # asyncio: not for `fakeapi --help`
    if text not in CLOCK_MODES:
        raise argparse.ArgumentTypeError(f"unknown clock {text!r}: one of "
                                         + ", ".join(CLOCK_MODES))
    return text


def parse_node_count(text: str) -> int:
    """`--nodes`: how many emulated nodes (0 or more)."""
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"invalid node count {text!r}: a number >= 0")
    return n


_BYTE_UNITS = {"": 1, "k": 1000, "m": 1000**2, "g": 1000**3, "ki": 1024, "mi": 1024**2,
               "gi": 1024**3}


def parse_bytes(text: str) -> int:
    """A byte count, plain or with a Kubernetes quantity suffix (`64Mi`, `1G`); at least 1."""
    digits = text.rstrip("KkMmGgi")
    unit = text[len(digits):].lower()
    try:
        value = int(digits) * _BYTE_UNITS[unit]
    except (ValueError, KeyError):
        raise argparse.ArgumentTypeError(f"invalid byte count: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"invalid byte count: {text!r} (must be positive)")
    return value


def parse_disabled_driver(text: str) -> str:
    """`--disable-driver`: a driver name, optionally `@` a node name."""
    driver, at, node = text.partition("@")
    if not driver or (at and not node):
        raise argparse.ArgumentTypeError(f"invalid driver {text!r}: DRIVER or DRIVER@NODE")
    return text


def add_log_level(parser: argparse.ArgumentParser) -> None:
    """`--log-level` of the commands that run a server or a component (see `run_main`)."""
    parser.add_argument("--log-level", default="WARNING",
                        help="Python logging level: DEBUG, INFO, WARNING (default), ERROR")


def add_run_settings(parser: argparse.ArgumentParser) -> None:
    """The flags that make a run what it is (`fakeapi replay` takes them too): the feature
    gates, the served versions, the seed, the components and the emulated nodes."""
    parser.add_argument("--runtime-config", type=parse_runtime_config, default={},
                        action=MergeRuntimeConfig, metavar="group/version=true,...",
                        help="API group/versions to serve besides the defaults, or not to "
                             "serve (kube-apiserver's syntax: also api/all, api/ga, api/beta, "
                             "api/alpha and group/version/resource)")
    add_plane_settings(parser)


def add_plane_settings(parser: argparse.ArgumentParser) -> None:
    """The flags of the components and the emulated nodes (`fakeapi emulate` takes these):
    the feature gates, the seed, the components and the nodes."""
    parser.add_argument("--feature-gates", type=parse_feature_gates, default={},
                        metavar="A=true,B=false",
                        help="feature gates over the 1.37 defaults (kube-apiserver's syntax)")
    parser.add_argument("--seed", type=int, help="deterministic names and UIDs")
    parser.add_argument(
        "--components", type=parse_components, default="*", metavar="LIST",
        help="components to run: '*' for all on by default, 'name' to enable, '-name' to "
             "disable (kube-controller-manager's --controllers syntax), 'none' for none; known: "
             + ", ".join(s.name for s in ALL_COMPONENTS))
    parser.add_argument("--nodes", type=parse_node_count, default=DEFAULT_NODES, metavar="N",
                        help=f"emulated nodes to register (default {DEFAULT_NODES})")
    parser.add_argument("--node-profile", type=parse_profile, metavar="NAME|FILE",
                        help="what each node offers: a shipped profile (default, gpu, net, "
                             "cpu, partitionable, shareable, large, empty) or a profile YAML "
                             "file "
                             f"(default: {DEFAULT_PROFILE}, loaded when the nodes register)")
    parser.add_argument("--adopt-nodes", action=argparse.BooleanOptionalAction, default=True,
                        help="run an emulated kubelet for Nodes that clients create (a node "
                             "labelled or annotated emulator.fakeapi.dev/managed=false is "
                             "always left alone)")
    parser.add_argument("--drivers", choices=DRIVER_MODES, default=None,
                        help="how the built-in fake drivers run: in-process (default), or grpc: "
                             "each a kubelet plugin on the node's sockets, registered and "
                             "called over gRPC as an external driver is")
    parser.add_argument("--disable-driver", dest="disabled_drivers", action="append",
                        type=parse_disabled_driver, metavar="DRIVER[@NODE]",
                        help="turn off a built-in driver of the node profile, on every node "
                             "or on one (repeatable), so that your own plugin can take its "
                             "place under the same name")


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`fakeapi serve` and its options."""
    serve = sub.add_parser("serve", help="run the API server with an emulated cluster")
    serve.add_argument("--host", default="127.0.0.1",
                       help="the address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=6443,
                       help="the port to listen on (default 6443; 0 picks a free one)")
    serve.add_argument("--data-dir", type=Path, help="keep the event log and PKI here")
    serve.add_argument("--kubeconfig", type=Path, help="write an admin kubeconfig here")
    add_run_settings(serve)
    serve.add_argument("--http", action="store_true", help="plain HTTP instead of HTTPS")
    serve.add_argument("--token-auth-file", type=parse_token_file, default={}, metavar="PATH",
                       help="bearer tokens: CSV lines token,user,uid,\"group1,group2\"")
    serve.add_argument("--clock", type=parse_clock, default="real",
                       metavar="real|virtual|virtual:auto",
                       help="real (default); virtual: emulated time moves only when told "
                            "(`fakeapi clock advance 5m`); virtual:auto: also, whenever "
                            "everything has settled, it jumps to the next timer")
    serve.add_argument(
        "--cel-engine", type=parse_cel_engine, metavar="ENGINE",
        help="CEL engine for selectors and derived attributes: " + ", ".join(ENGINES)
             + f" (default: ${ENV_VAR}, else the first that is installed)")
    serve.add_argument("--log-retention-bytes", type=parse_bytes,
                       metavar="BYTES",
                       help="cap on the JSON bytes of recent events kept in memory for watches "
                            "and paginated lists (e.g. 64Mi; default 128Mi)")
    serve.add_argument("--watch-stall-timeout", type=float, default=30.0, metavar="SECONDS",
                       help="close a watch whose client has read nothing for this long")
    serve.add_argument("--from", dest="from_snapshot", type=Path, metavar="FILE",
                       help="start with the objects of a snapshot (fakeapi snapshot), status "
                            "included, as the server's own writes (a new --data-dir only)")
    add_log_level(serve)
    serve.set_defaults(run=run)


def recorded_settings(args: argparse.Namespace, emulator: EmulatorSettings) -> dict[str, Any]:
    """What a new log's header records of how `fakeapi serve` was started: everything that
    shapes the run, so a replay elsewhere can rebuild the same control plane (the node
    profile by content, as a profile file's JSON, not by its path)."""
    profile = emulator.node_profile().model_dump(mode="json", by_alias=True)
    return {"seed": args.seed, "clock": args.clock, "feature_gates": dict(args.feature_gates),
            "runtime_config": dict(args.runtime_config),
            "components": args.components, "nodes": args.nodes, "node_profile": profile,
            "adopt_nodes": args.adopt_nodes, "drivers": emulator.drivers,
            "disabled_drivers": list(emulator.disabled_drivers), "cel_engine": args.cel_engine,
            "from": str(args.from_snapshot) if args.from_snapshot is not None else None}


def emulator_settings(args: argparse.Namespace, state_dir: Path) -> EmulatorSettings:
    """The node emulator's settings from `add_plane_settings`' flags."""
    return EmulatorSettings(nodes=args.nodes, profile=args.node_profile,
                            adopt_nodes=args.adopt_nodes, state_dir=state_dir,
                            drivers=args.drivers or DRIVER_MODES[0],
                            disabled_drivers=tuple(args.disabled_drivers or ()))


def run(args: argparse.Namespace) -> int:
    """Serve until SIGINT/SIGTERM (on uvloop where it is installed)."""
    return run_main(args, serve)


def run_main(args: argparse.Namespace,
             main: Callable[[argparse.Namespace], Coroutine[Any, Any, int]]) -> int:
    """Run a server command's coroutine with `--log-level`'s logging, on uvloop where it is
    installed."""
    logging.basicConfig(level=getattr(logging, args.log_level.upper(), logging.WARNING),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        import uvloop
    except ImportError:  # uvloop is a speed-up, not a requirement
        import asyncio
        return asyncio.run(main(args))
    return uvloop.run(main(args))


async def serve(args: argparse.Namespace) -> int:
    """Start, print one ready line, run until SIGINT/SIGTERM, flush, exit 0."""
    import asyncio
    import dataclasses
    import shutil
    import signal

    from fakeapi import cel
    from fakeapi.cli import process
    from fakeapi.cluster import ClusterConfig, RestoreRefused
    from fakeapi.controlplane import ControlPlane
    from fakeapi.http import serving
    from fakeapi.machinery.clock import SettleTimeout, clock_for
    from fakeapi.machinery.runtimeconfig import RuntimeConfigError
    from fakeapi.machinery.statedir import make_temporary_state
    from fakeapi.storage import logcheck
    from fakeapi.storage.store import ReplayError
    from fakeapi.storage.walformat import WalDamagedError, WalError

    if args.cel_engine:
        cel.set_default_engine(args.cel_engine)
    process.tune()  # RSS follows the retained log; the collector runs less often
    state_dir = args.data_dir or make_temporary_state()
    emulator = emulator_settings(args, state_dir)
    config = ClusterConfig(data_dir=args.data_dir, feature_gates=args.feature_gates,
                           runtime_config=args.runtime_config, seed=args.seed,
                           watch_stall_timeout=args.watch_stall_timeout,
                           settings=recorded_settings(args, emulator) if args.data_dir else {})
    if args.log_retention_bytes is not None:
        config = dataclasses.replace(config, retention_bytes=args.log_retention_bytes)
    if args.from_snapshot is not None:
        from fakeapi.replay import restore
        from fakeapi.replay.snapshot import SnapshotError
        try:
            objects = restore.load(args.from_snapshot, feature_gates=args.feature_gates)
        except SnapshotError as e:
            print(f"fakeapi: refusing to start: {e}", file=sys.stderr, flush=True)
            return 2
        config = dataclasses.replace(config, restore=objects)
    try:
        plane = ControlPlane(config, clock=clock_for(args.clock), components=args.components,
                             emulator=emulator)
    except (WalDamagedError, ReplayError):
        print(logcheck.refusal(args.data_dir), file=sys.stderr, flush=True)
        return 1
    except (WalError, RestoreRefused) as e:  # not a fakeapi log, open in another server, or
        print(f"fakeapi: refusing to start: {e}", file=sys.stderr, flush=True)  # no new one
        return 1
    except RuntimeConfigError as e:  # checked before the log is opened: nothing written
        print(f"fakeapi: refusing to start: --runtime-config: {e}", file=sys.stderr, flush=True)
        return 1
    kubeconfig = args.kubeconfig or state_dir / "kubeconfig"
    try:
        listener = await serving.listen(plane.cluster, host=args.host, port=args.port,
                                        pki_dir=None if args.http else state_dir / "pki",
                                        kubeconfig=kubeconfig, tokens=args.token_auth_file,
                                        checks=plane.health, metrics=plane.metrics_text,
                                        routes=plane.routes())
    except OSError as e:  # the port is taken, or the address is not this machine's
        import os
        reason = os.strerror(e.errno) if e.errno else str(e)
        print(f"fakeapi: cannot listen on {args.host}:{args.port}: {reason}", file=sys.stderr,
              flush=True)
        await plane.cluster.close()
        return 1
    await plane.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):  # before the ready line: a SIGTERM sent as
        loop.add_signal_handler(sig, stop.set)  # soon as it is read still shuts down cleanly
    try:  # ready means the cluster is there: its nodes registered, their slices published
        await plane.settle()
    except SettleTimeout as e:  # a component that never idles: say so, serve all the same
        logging.getLogger(__name__).warning("starting work has not settled: %s", e)
    print(f"fakeapi ready at {listener.url} kubeconfig={kubeconfig}", flush=True)
    await stop.wait()
    await listener.close()
    await plane.stop()
    if args.data_dir is None:  # nothing there outlives the process
        shutil.rmtree(state_dir, ignore_errors=True)
    return 0
