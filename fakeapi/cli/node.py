"""`fakeapi node env NODE`: what to run a DRA driver's kubelet plugin with against an emulated
node of a running server, ready to paste: the kubeconfig, the node's name and its plugin
registration, plugin and CDI folders, as environment variables (the dra-example-driver's
kubelet plugin reads these) or as flags."""

from __future__ import annotations

import argparse
import shlex
import sys
import urllib.parse

from fakeapi.cli import remote

FLAGS = (("KUBECONFIG", "--kubeconfig"), ("NODE_NAME", "--node-name"),
         ("KUBELET_REGISTRAR_DIRECTORY_PATH", "--kubelet-registrar-directory-path"),
         ("KUBELET_PLUGINS_DIRECTORY_PATH", "--kubelet-plugins-directory-path"),
         ("CDI_ROOT", "--cdi-root"))
"""Each setting as the example kubelet plugin's environment variable and flag."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`fakeapi node` and its subcommands."""
    node = sub.add_parser("node", help="emulated nodes of a running server")
    verbs = node.add_subparsers(dest="verb", required=True)
    env = verbs.add_parser("env", help="the settings a driver's kubelet plugin needs to run "
                                       "against an emulated node")
    env.add_argument("name", metavar="NODE")
    remote.add_kubeconfig_argument(env)
    env.add_argument("-o", "--output", choices=["env", "flags"], default="env",
                     help="`export` lines (default) or the plugin's command-line flags")
    env.set_defaults(run=node_env)


def settings(kubeconfig: str, folders: dict[str, str]) -> list[tuple[str, str, str]]:
    """(environment variable, flag, value) of each setting."""
    values = (kubeconfig, folders["node"], folders["registry"], folders["plugins"],
              folders["cdi"])
    return [(var, flag, value) for (var, flag), value in zip(FLAGS, values, strict=True)]


def node_env(args: argparse.Namespace) -> int:
    """Print the node's settings (exit 1 on an error Status or an unreachable server)."""
    try:
        folders = remote.request(args.kubeconfig,
                                 f"/emulator/nodes/{urllib.parse.quote(args.name)}")
    except remote.RemoteError as e:
        print(e, file=sys.stderr)
        return 1
    kubeconfig = str(remote.kubeconfig_path(args.kubeconfig).resolve())
    rows = settings(kubeconfig, folders)
    if args.output == "flags":
        print(" ".join(f"{flag}={shlex.quote(value)}" for _, flag, value in rows))
    else:
        for var, _, value in rows:
            print(f"export {var}={shlex.quote(value)}")
    return 0
