"""Unix sockets of the emulated nodes (PodResources, plugin registration, DRA plugins): where
one is bound when its path is too long for the system, and how a gRPC server listens on one
and goes away cleanly."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

MAX_SOCKET_PATH = 107
"""The longest unix socket path (sun_path is 108 bytes with its NUL). gRPC takes that long a
path only in the `unix:PATH` form of an address (`unix://PATH` stops at 105), the one used
here."""


def bind_path(socket: Path) -> Path:
    """Where the socket is bound: `socket` itself, or, when that path is too long for a unix
    socket (a deep data dir), a short one in the temporary folder that `socket` links to
    (clients too long a path away connect to `os.path.realpath(socket)`)."""
    if len(str(socket).encode()) <= MAX_SOCKET_PATH:
        return socket
    digest = hashlib.sha256(str(socket).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"fakeapi-sock-{digest}.sock"


def dial_target(socket: Path) -> str:
    """The gRPC target of a socket another process bound (followed through its link when
    the path is too long to connect to)."""
    path = os.path.realpath(socket) if len(str(socket).encode()) > MAX_SOCKET_PATH or \
        socket.is_symlink() else str(socket)
    return f"unix:{path}"


def release(socket: Path) -> None:
    """After the server on `socket` stopped: remove the socket bound away from it (a long
    path's stand-in in the temporary folder) and the link to it, which nothing else would."""
    target = bind_path(socket)
    for path in {target, socket}:
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def listen(server: Any, socket: Path) -> None:
    """Make the (not yet started) grpc.aio `server` listen on `socket`, replacing a stale
    socket left there (see `bind_path`); call `link` once it started."""
    socket.parent.mkdir(parents=True, exist_ok=True)
    target = bind_path(socket)
    for path in {socket, target}:
        if path.is_symlink() or path.exists():
            path.unlink()
    server.add_insecure_port(f"unix:{target}")


def link(socket: Path) -> None:
    """After the server listening on `socket` started: the link to where it is bound, for a
    path too long to bind."""
    target = bind_path(socket)
    if target != socket:
        socket.symlink_to(target)
