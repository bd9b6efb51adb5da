"""Disk faults of one file, injected where the code under test meets the OS.

`os.write` and `os.fdatasync` are replaced for the file at one path (told apart by its inode,
every other file writes as usual), so the WAL runs unchanged: an fsync can be held at a gate
(the window in which a write is appended but not yet durable) or fail, and a write can run
out of space half-way.
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest


class DiskFaults:
    """The faults of the file at `path` (it may be created later); none until asked for."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
        self.path = path
        self.fsync_error: OSError | None = None
        """Raised by each fsync of the file (after its gate) while set."""
        self.write_error: OSError | None = None
        """While set, each write of the file writes half its data, then raises this."""
        self._open = threading.Event()
        self._open.set()
        self._entered = threading.Event()
        real_write, real_fdatasync = os.write, os.fdatasync

        def write(fd: int, data: bytes | memoryview) -> int:
            error = self.write_error
            if error is not None and self._is_ours(fd):
                real_write(fd, data[: len(data) // 2])
                raise error
            return real_write(fd, data)

        def fdatasync(fd: int) -> None:
            if self._is_ours(fd):
                self._entered.set()
                assert self._open.wait(30), "the test never released the fsync"
                if self.fsync_error is not None:
                    raise self.fsync_error
            real_fdatasync(fd)

        monkeypatch.setattr(os, "write", write)
        monkeypatch.setattr(os, "fdatasync", fdatasync)

    def _is_ours(self, fd: int) -> bool:
        try:
            st, target = os.fstat(fd), os.stat(self.path)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == (target.st_dev, target.st_ino)

    def hold(self) -> None:
        """The file's next fsyncs wait until `release()`."""
        self._open.clear()
        self._entered.clear()

    def release(self) -> None:
        """Let held and later fsyncs run."""
        self._open.set()

    async def held(self) -> None:
        """Until an fsync of the file waits at the gate (it runs on the WAL's worker thread)."""
        assert await asyncio.to_thread(self._entered.wait, 30), "no fsync reached the gate"
