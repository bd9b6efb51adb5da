"""Where a server without --data-dir keeps its files: a RAM-backed folder when one is usable
(as a node's /run), else the system's temporary folder."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from fakeapi.machinery import statedir


@pytest.mark.parametrize(("case", "free", "tmpdir", "chosen"), [
    ("room in RAM", 1 << 30, "", True),
    ("a container's 64 MiB /dev/shm", 64 << 20, "", False),
    ("TMPDIR names the place", 1 << 30, "/somewhere", False),
    ("no RAM folder", None, "", False),
])
def test_temporary_base(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, case: str,
                        free: int | None, tmpdir: str, chosen: bool) -> None:
    ram = tmp_path / "shm"
    if free is not None:
        ram.mkdir()
        real = shutil.disk_usage

        def usage(path: Any) -> Any:
            got = real(path)
            return type(got)(got.total, got.total - free, free) if Path(path) == ram else got

        monkeypatch.setattr(shutil, "disk_usage", usage)
    if tmpdir:
        monkeypatch.setenv("TMPDIR", tmpdir)
    else:
        monkeypatch.delenv("TMPDIR", raising=False)
    assert statedir.temporary_base(ram) == (ram if chosen else None), case
    if chosen:
        made = statedir.make_temporary_state("x-", ram)
        assert made.parent == ram and made.name.startswith("x-") and not os.listdir(made)
