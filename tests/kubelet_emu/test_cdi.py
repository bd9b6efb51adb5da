"""CDI specs on disk and the runtime's spec cache: atomic writes with an exact mode (folders
made on demand), and resolution that always follows the files, even though it keeps an
index between lookups (a rewritten, removed, new or unreadable spec)."""

from __future__ import annotations

import os
from pathlib import Path

import kubelet_emu.cdi as cdi

KIND = "k8s.gpu.example.com/gpu"


def device(name: str, *env: str) -> dict[str, object]:
    return {"name": name, "containerEdits": {"env": list(env)}}


def test_write_atomically_makes_the_folder_and_sets_the_mode(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "metadata.json"
    old = os.umask(0o077)
    try:
        cdi.write_atomically(path, b"one", 0o444)
        assert path.read_bytes() == b"one" and path.stat().st_mode & 0o777 == 0o444
        cdi.write_atomically(path, b"two" * 10_000, 0o644)  # replaced, read-only or not
    finally:
        os.umask(old)
    assert path.read_bytes() == b"two" * 10_000 and path.stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in path.parent.iterdir()) == ["metadata.json"]  # no tmp left


def test_the_spec_cache_follows_the_files(tmp_path: Path) -> None:
    folder = tmp_path / "cdi"
    specs = cdi.SpecCache(folder)
    name = cdi.qualified(KIND, "uid-gpu-0")
    assert specs.resolve([name]) == (cdi.ContainerEdits(), [name])  # no folder yet
    cdi.write_spec(folder, "claim.json", cdi.spec(KIND, [device("uid-gpu-0", "A=1")]))
    assert specs.resolve([name])[0].env == ("A=1",)
    # rewritten at once with other content: the new file is read
    cdi.write_spec(folder, "claim.json", cdi.spec(KIND, [device("uid-gpu-0", "A=2")]))
    assert specs.resolve([name])[0].env == ("A=2",)
    # another spec appears: its devices are found, the first one's still resolve
    other = cdi.qualified(KIND, "common")
    cdi.write_spec(folder, "common.json", cdi.spec(KIND, [device("common", "NODE=n")]))
    edits, missing = specs.resolve([other, name, other])
    assert (edits.env, missing) == (("NODE=n", "A=2"), [])
    # an unreadable spec is skipped; a removed one no longer resolves
    (folder / "broken.json").write_text("{not json")
    cdi.remove(folder / "claim.json")
    assert specs.resolve([name, other]) == (cdi.ContainerEdits(env=("NODE=n",)), [name])
