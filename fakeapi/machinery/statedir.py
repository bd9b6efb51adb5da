"""Where a server without `--data-dir` keeps its files (certificates, kubeconfig, the emulated
nodes' `/var/run` and `/var/log`).

A real node keeps CDI specs and device-metadata files under `/run`, a tmpfs, so creating and
removing them costs no disk journal. A temporary state folder goes to a RAM-backed folder in
the same way when one is there and has room (`/dev/shm` on Linux), unless `TMPDIR` names
another place; otherwise to the system's temporary folder. Files written per pod on a
virtual disk cost 20 times more system time than on tmpfs (measured: 2,000 pods' folders and
files, 3.95 s against 0.15 s).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

RAM_DIR = Path("/dev/shm")
MIN_FREE_BYTES = 256 << 20
"""Less room than this (a container's default 64 MiB /dev/shm) keeps state on disk."""


def temporary_base(ram: Path = RAM_DIR) -> Path | None:
    """The folder temporary state is made in: `ram` when usable, else None (the system's)."""
    if os.environ.get("TMPDIR"):
        return None
    try:
        usage = shutil.disk_usage(ram)
    except OSError:
        return None
    if usage.free < MIN_FREE_BYTES or not os.access(ram, os.W_OK | os.X_OK):
        return None
    return ram


def make_temporary_state(prefix: str = "fakeapi-", ram: Path = RAM_DIR) -> Path:
    """A new, empty, private folder for one server's state."""
    base = temporary_base(ram)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=base))
