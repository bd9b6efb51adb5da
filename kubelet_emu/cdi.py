"""Container Device Interface specs: what drivers write under the node's CDI folder
(`<state>/nodes/<node>/var/run/cdi/`) and what the emulated container runtime reads back to
give a container the environment and mounts of its CDI devices.

The spec format is CDI's JSON (cdiVersion, kind `vendor/class`, devices with containerEdits);
the runtime side resolves fully qualified device names (`vendor/class=name`) as containerd
does, so a container sees exactly what the files on disk say.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

Obj = dict[str, Any]
EARLIEST_VERSION = "0.3.0"
NAME_START_VERSION = "0.5.0"
"""Device names starting with something other than a letter need CDI 0.5.0."""


def minimum_version(devices: Sequence[Obj]) -> str:
    """The lowest CDI version the spec's features need (as cdi's MinimumRequiredVersion)."""
    if any(not d["name"][:1].isalpha() for d in devices):
        return NAME_START_VERSION
    return EARLIEST_VERSION


def spec(kind: str, devices: Sequence[Obj], version: str | None = None) -> Obj:
    """A CDI spec document."""
    return {"cdiVersion": version or minimum_version(devices), "kind": kind,
            "devices": list(devices)}


def write_atomically(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Replace `path` with `data` at once (write a temporary file, then rename it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def write_spec(folder: Path, file_name: str, document: Obj) -> Path:
    """Write one spec file (pretty JSON, as the cdi library writes it)."""
    path = folder / file_name
    write_atomically(path, orjson.dumps(document, option=orjson.OPT_INDENT_2))
    return path


def remove(path: Path) -> None:
    """Remove a spec file if it is there."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def qualified(kind: str, name: str) -> str:
    """`vendor/class=name`."""
    return f"{kind}={name}"


@dataclasses.dataclass(frozen=True)
class ContainerEdits:
    """The edits a container gets from its CDI devices: environment and mounts."""

    env: tuple[str, ...] = ()
    mounts: tuple[Obj, ...] = ()


class Registry:
    """The runtime's view of a CDI folder: specs parsed once per file version."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._cache: dict[Path, tuple[float, Obj | None]] = {}

    def _specs(self) -> Iterable[Obj]:
        try:
            paths = sorted(p for p in self.folder.iterdir() if p.suffix == ".json")
        except FileNotFoundError:
            return []
        out = []
        for path in paths:
            try:
                mtime = path.stat().st_mtime
            except FileNotFoundError:
                continue
            hit = self._cache.get(path)
            if hit is None or hit[0] != mtime:
                try:
                    doc: Obj | None = json.loads(path.read_bytes())
                except (OSError, ValueError):
                    doc = None  # an unreadable spec is skipped, as the cdi cache does
                hit = self._cache[path] = (mtime, doc)
            if hit[1] is not None:
                out.append(hit[1])
        return out

    def resolve(self, names: Iterable[str]) -> tuple[ContainerEdits, list[str]]:
        """The edits of fully qualified device names, and the names no spec defines."""
        wanted = list(dict.fromkeys(names))
        devices: dict[str, Obj] = {}
        for doc in self._specs():
            for d in doc.get("devices") or []:
                devices[qualified(str(doc.get("kind")), str(d.get("name")))] = d
        env: list[str] = []
        mounts: list[Obj] = []
        missing = []
        for name in wanted:
            device = devices.get(name)
            if device is None:
                missing.append(name)
                continue
            edits = device.get("containerEdits") or {}
            env += edits.get("env") or []
            mounts += edits.get("mounts") or []
        return ContainerEdits(tuple(env), tuple(mounts)), missing
