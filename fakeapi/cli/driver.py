"""`fakeapi driver`: one of the fake drivers of a node profile as a standalone kubelet plugin
process (`kubelet_emu.standalone`), against any API server and the kubelet of a node: an
emulated node of `fakeapi serve` or a real one. It publishes the driver's ResourceSlices for
the node through the API, with the kubeconfig's credentials over HTTPS, and serves the plugin
API on the node's sockets until SIGINT/SIGTERM.

The settings are the dra-example-kubeletplugin's flags, each also read from its environment
variable, so `eval "$(fakeapi node env worker-0)"; fakeapi driver --profile gpu` works.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from fakeapi import KUBERNETES_VERSION
from fakeapi.cli import remote
from fakeapi.cli.serve import add_log_level, parse_profile, run_main

NAME = "fakeapi driver"
DEFAULT_REGISTRY = "/var/lib/kubelet/plugins_registry"
DEFAULT_PLUGINS = "/var/lib/kubelet/plugins"
DEFAULT_CDI_ROOT = "/etc/cdi"
"""The example kubelet plugin's defaults: a real node's folders."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`fakeapi driver` and its flags."""
    env = os.environ.get
    driver = sub.add_parser("driver", help="run a fake driver of a node profile as a "
                                           "standalone kubelet plugin")
    driver.add_argument("--profile", type=parse_profile, required=True, metavar="NAME|FILE",
                        help="the node profile whose driver runs: a shipped profile or a file")
    driver.add_argument("--driver", metavar="NAME",
                        help="which of the profile's drivers (needed when it has several)")
    driver.add_argument("--node-name", "--node", dest="node", default=env("NODE_NAME"),
                        metavar="NODE", help="the node the plugin runs on ($NODE_NAME)")
    remote.add_kubeconfig_argument(driver)
    driver.add_argument("--kubelet-registrar-directory-path", dest="registry", type=Path,
                        default=Path(env("KUBELET_REGISTRAR_DIRECTORY_PATH")
                                     or DEFAULT_REGISTRY), metavar="DIR",
                        help="where the kubelet finds plugins' registration sockets "
                             f"($KUBELET_REGISTRAR_DIRECTORY_PATH, default {DEFAULT_REGISTRY})")
    driver.add_argument("--kubelet-plugins-directory-path", dest="plugins", type=Path,
                        default=Path(env("KUBELET_PLUGINS_DIRECTORY_PATH") or DEFAULT_PLUGINS),
                        metavar="DIR",
                        help="where the plugin keeps its socket and files "
                             f"($KUBELET_PLUGINS_DIRECTORY_PATH, default {DEFAULT_PLUGINS})")
    driver.add_argument("--cdi-root", dest="cdi", type=Path,
                        default=Path(env("CDI_ROOT") or DEFAULT_CDI_ROOT), metavar="DIR",
                        help=f"where CDI specs are written ($CDI_ROOT, default {DEFAULT_CDI_ROOT})")
    add_log_level(driver)
    driver.set_defaults(run=lambda args: run_main(args, run_driver))


def _refuse(message: str, code: int) -> int:
    print(f"{NAME}: {message}", file=sys.stderr, flush=True)
    return code


async def run_driver(args: argparse.Namespace) -> int:
    """Start the plugin, print one ready line, serve until SIGINT/SIGTERM, exit 0; bad input
    (no such driver in the profile, no node, a node the server doesn't have) exits 2, a
    server that can't be read or reached 1."""
    import asyncio
    import signal

    from fakeapi.machinery.clock import RealClock
    from fakeapi.machinery.errors import ApiError
    from fakeapi.remote_client import RemoteClient
    from kubelet_emu.standalone import (
        DriverChoiceError,
        NodeNotFound,
        StandaloneDriver,
        pick_driver,
    )

    try:
        chosen = pick_driver(args.profile, args.driver)
    except DriverChoiceError as e:
        return _refuse(str(e), 2)
    if not args.node:
        return _refuse("which node? give --node-name (or set NODE_NAME)", 2)
    config = remote.kubeconfig_path(args.kubeconfig)
    try:
        client = RemoteClient.from_kubeconfig(
            config, user_agent=f"fakeapi-driver/{KUBERNETES_VERSION}",
            field_manager="fakeapi-driver")
    except Exception as e:  # missing, unreadable or not a kubeconfig
        return _refuse(f"cannot read the kubeconfig {config}: {e!r}", 1)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with client:
        plugin = StandaloneDriver(driver=chosen, node=args.node, client=client,
                                  clock=RealClock(), registry=args.registry,
                                  plugins=args.plugins, cdi=args.cdi)
        try:
            await plugin.start()
        except NodeNotFound as e:
            return _refuse(str(e), 2)
        except (ApiError, OSError, RuntimeError) as e:  # RuntimeError: a socket not bound
            return _refuse(f"cannot start {chosen.name} on node {args.node}: {e}", 1)
        try:
            print(f"{NAME} ready: {chosen.name} on node {args.node}, "
                  f"{len(plugin.published)} ResourceSlices, registration socket "
                  f"{plugin.server.registration_socket}", flush=True)
            await stop.wait()
        finally:
            await plugin.stop()
    return 0
