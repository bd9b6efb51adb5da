"""How the node emulator is configured: how many nodes, with which profile, where their
files go, whether nodes that clients create are adopted, and how the built-in drivers run
(`fakeapi serve --nodes`, `--node-profile`, `--adopt-nodes`, `--drivers`, `--disable-driver`)."""

from __future__ import annotations

import atexit
import dataclasses
import functools
import hashlib
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from fakeapi.machinery.statedir import make_temporary_state

if TYPE_CHECKING:
    from kubelet_emu.profile import NodeProfile

DRIVER_MODES = ("in-process", "grpc")
"""How the built-in fake drivers can run (`--drivers`), the default first."""
DEFAULT_NODES = 2
DEFAULT_PROFILE = "default"
"""The shipped profile each node has unless another is named."""
KUBELET_ACCOUNT = "kubelet"
"""The kube-system service account each node's kubelet acts as (bound to its node)."""
PLUGIN_ACCOUNT = "dra-kubelet-plugin"
"""The service account of each node's DRA driver plugins (bound to the node)."""
INSTALLER_ACCOUNT = "dra-driver-installer"
"""Who installs the drivers' DeviceClasses."""
NODE_PREFIX = "worker-"
MANAGED_ANNOTATION = "emulator.fakeapi.dev/managed"
"""On a Node (label or annotation): "false" leaves it to no kubelet at all, as upstream
treats a node whose kubelet is gone."""
PROFILE_ANNOTATION = "emulator.fakeapi.dev/profile"
"""On a Node (label or annotation): the profile whose fake devices its kubelet publishes."""
PROCESS_ANNOTATION = "emulator.fakeapi.dev/process"
"""On a node's Lease in kube-node-lease: the emulate process whose kubelet renews it (its
leader-election identity), so a second process given the same node refuses to run it."""
RUN_SECONDS_ANNOTATION = "emulator.fakeapi.dev/run-seconds"
"""On a Pod: how long its containers run before they exit 0 (a container's own command,
when the emulator can read it, decides otherwise)."""


Shard = tuple[int, int]
"""(i, n): this process runs the nodes of shard i of n (`--shard i/n`)."""
WHOLE: Shard = (0, 1)
"""One shard: every node."""


def shard_of(node: str, shards: int) -> int:
    """The shard that owns a node: a stable hash of its name (SHA-256's first 8 bytes; CRC-32's
    low bits follow a name's last character too closely) modulo the count, so every process
    given the same count agrees on each node's one owner."""
    return int.from_bytes(hashlib.sha256(node.encode()).digest()[:8], "big") % shards


@functools.cache
def _default_profile() -> NodeProfile:
    from kubelet_emu.profile import load_profile  # pydantic: loaded when a node needs it
    return load_profile(DEFAULT_PROFILE)


@dataclasses.dataclass(frozen=True, kw_only=True)
class EmulatorSettings:
    """The node emulator's configuration."""

    nodes: int = DEFAULT_NODES
    """How many nodes to register (`worker-0` ... `worker-<n-1>`; with shards, across all
    of them)."""
    profile: NodeProfile | None = None
    """What each configured node offers; None: the `default` profile, loaded on first use
    (`node_profile()`), so that building the settings loads no pydantic model."""
    adopt_nodes: bool = True
    """Run an emulated kubelet for Nodes created through the API (kwok's manage-all-nodes)."""
    state_dir: Path | None = None
    """Root of the nodes' files (`<state>/nodes/<node>/...`); a temporary folder when None."""

    drivers: str = "in-process"
    """How the built-in fake drivers run: `in-process` (called directly) or `grpc` (each a
    kubelet plugin served on the node's sockets, registered and called over gRPC)."""
    disabled_drivers: tuple[str, ...] = ()
    """Built-in drivers turned off: `DRIVER` on every node, `DRIVER@NODE` on one (so that an
    external plugin can take the driver's place)."""
    shard: Shard = WHOLE
    """The nodes this emulator runs, of those configured and adopted: shard i of n."""
    kubelet_endpoint: tuple[str, int] | None = None
    """(address, port) of the kubelet API serving these nodes (`fakeapi emulate`), which each
    Node advertises as its InternalIP and `daemonEndpoints`; None: no listener (in process,
    each node keeps its emulated address and port 10250)."""
    process: str = ""
    """The emulate process these kubelets run in (`PROCESS_ANNOTATION` on each node Lease);
    "": in process, where no other process runs nodes."""

    def owns(self, node: str) -> bool:
        """Whether `node` is in this emulator's shard."""
        index, count = self.shard
        return count == 1 or shard_of(node, count) == index

    @property
    def grpc_drivers(self) -> bool:
        """Whether the built-in drivers run as gRPC plugins."""
        return self.drivers == "grpc"

    def disabled_on(self, node: str) -> frozenset[str]:
        """The built-in drivers turned off on `node`."""
        out = set()
        for entry in self.disabled_drivers:
            driver, _, where = entry.partition("@")
            if not where or where == node:
                out.add(driver)
        return frozenset(out)

    def node_profile(self) -> NodeProfile:
        """The configured nodes' profile."""
        return self.profile if self.profile is not None else _default_profile()

    def node_names(self) -> list[str]:
        """The names of the nodes the emulator registers: of `worker-0` ... `worker-<n-1>`,
        those of its shard."""
        return [name for name in self.all_node_names() if self.owns(name)]

    def all_node_names(self) -> list[str]:
        """Every configured node's name, whichever shard runs it (their place in the
        emulated network)."""
        return [f"{NODE_PREFIX}{i}" for i in range(self.nodes)]

    def root(self) -> Path:
        """The state folder, absolute (created on first use when none was given): a relative
        `--data-dir .fakeapi` must not make relative socket paths, which gRPC can't bind and
        a plugin started elsewhere couldn't find."""
        if self.state_dir is not None:
            return self.state_dir.absolute()
        return _temporary_root()


@functools.cache
def _temporary_root() -> Path:
    root = make_temporary_state(prefix="fakeapi-nodes-")
    atexit.register(shutil.rmtree, root, ignore_errors=True)  # it may be in RAM: never leak
    return root
