"""Container Device Interface specs: what drivers write under the node's CDI folder
(`<state>/nodes/<node>/var/run/cdi/`) and what the emulated container runtime reads back to
give a container the environment and mounts of its CDI devices.

The spec format is CDI's JSON (cdiVersion, kind `vendor/class`, devices with containerEdits);
the runtime side resolves fully qualified device names (`vendor/class=name`) as containerd
does, so a container sees exactly what the files on disk say.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

Obj = dict[str, Any]
EARLIEST_VERSION = "0.3.0"
SPEC_SUFFIXES = (".json", ".yaml")
"""The spec files a CDI cache reads (the cdi library writes `.yaml` unless told `.json`)."""
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
    """Replace `path` with `data` at once (write a temporary file with `mode`, then rename
    it); the folder is made when it is missing."""
    tmp = path.with_name(f".{path.name}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    try:
        fd = os.open(tmp, flags, mode)
    except FileNotFoundError:
        os.makedirs(path.parent, exist_ok=True)
        fd = os.open(tmp, flags, mode)
    try:
        os.fchmod(fd, mode)  # exactly `mode`, whatever the umask
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
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


@dataclasses.dataclass(frozen=True, kw_only=True)
class ContainerEdits:
    """The edits a container gets from its CDI devices: environment, mounts, device nodes."""

    env: tuple[str, ...] = ()
    mounts: tuple[Obj, ...] = ()
    device_nodes: tuple[Obj, ...] = ()


FileVersion = tuple[int, int, int]
"""(inode, size, mtime in ns): a file replaced by `write_atomically` gets a new inode."""


def _version(path: str) -> FileVersion | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


class SpecCache:
    """The runtime's view of a CDI folder: specs parsed once per file version, and an index
    of the devices they define. A lookup trusts the index while the files its devices came
    from are unchanged; a name it doesn't know makes it look for new files, and a changed
    or removed file (or a name still unknown) makes it check every file again, so a
    container always sees what the files on disk say."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._dir = str(folder)
        self._cache: dict[str, tuple[FileVersion, Obj | None]] = {}
        """By file name: the version read and its spec (None when unreadable)."""
        self._index: dict[str, tuple[str, Obj]] = {}
        """Qualified device name → (file name, device)."""

    def _scan(self, *, recheck: bool) -> None:
        """Read the folder again: files gone are dropped, new ones parsed and, with
        `recheck`, every known file's version checked (and the file parsed again if it
        changed). The index is built again only when a file came, went or changed."""
        try:
            names = {n for n in os.listdir(self._dir) if n.endswith(SPEC_SUFFIXES)}
        except FileNotFoundError:
            names = set()
        changed = [n for n in self._cache if n not in names]
        for name in changed:
            del self._cache[name]
        for name in names:
            hit = self._cache.get(name)
            if hit is not None and not recheck:
                continue
            path = os.path.join(self._dir, name)
            version = _version(path)
            if version is None:
                self._cache.pop(name, None)
                changed.append(name)
                continue
            if hit is None or hit[0] != version:
                try:
                    with open(path, "rb") as f:
                        doc: Obj | None = _parse(name, f.read())
                except (OSError, ValueError):  # (PyYAML's errors are ValueErrors here)
                    doc = None  # an unreadable spec is skipped, as the cdi cache does
                self._cache[name] = (version, doc if isinstance(doc, dict) else None)
                changed.append(name)
        if changed:
            self._reindex()

    def _reindex(self) -> None:
        """Index every spec's devices (a device defined twice keeps the definition of the
        file that sorts last)."""
        index: dict[str, tuple[str, Obj]] = {}
        for name in sorted(self._cache):
            spec_doc = self._cache[name][1]
            if spec_doc is None:
                continue
            kind = str(spec_doc.get("kind"))
            for d in spec_doc.get("devices") or []:
                if isinstance(d, dict):
                    index[qualified(kind, str(d.get("name")))] = (name, d)
        self._index = index

    def _fresh(self, wanted: list[str]) -> bool:
        """Whether the index knows every wanted name, from files still as it read them."""
        files = set()
        for name in wanted:
            hit = self._index.get(name)
            if hit is None:
                return False
            files.add(hit[0])
        return all(_version(os.path.join(self._dir, f)) == self._cache[f][0] for f in files)

    def resolve(self, names: Iterable[str]) -> tuple[ContainerEdits, list[str]]:
        """The edits of fully qualified device names, and the names no spec defines."""
        wanted = list(dict.fromkeys(names))
        if not self._fresh(wanted):
            self._scan(recheck=False)
            if not self._fresh(wanted):
                self._scan(recheck=True)
        env: list[str] = []
        mounts: list[Obj] = []
        nodes: list[Obj] = []
        missing = []
        specs: list[str] = []
        for name in wanted:
            hit = self._index.get(name)
            if hit is None:
                missing.append(name)
                continue
            if hit[0] not in specs:  # the spec's own edits, once for all its devices
                specs.append(hit[0])
                spec_doc = self._cache[hit[0]][1] or {}
                _add_edits(spec_doc.get("containerEdits"), env, mounts, nodes)
            _add_edits(hit[1].get("containerEdits"), env, mounts, nodes)
        edits = ContainerEdits(env=tuple(env), mounts=tuple(mounts), device_nodes=tuple(nodes))
        return edits, missing


def _parse(name: str, data: bytes) -> Obj | None:
    """A spec file's document (JSON, or YAML for `.yaml`: PyYAML is loaded for the first)."""
    if name.endswith(".json"):
        doc = orjson.loads(data)
    else:
        import yaml
        try:
            doc = yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError as e:
            raise ValueError(str(e)) from e
    return doc if isinstance(doc, dict) else None


def _add_edits(edits: Any, env: list[str], mounts: list[Obj], nodes: list[Obj]) -> None:
    """Collect one containerEdits' environment, mounts and device nodes."""
    if not isinstance(edits, dict):
        return
    env += [str(e) for e in edits.get("env") or []]
    mounts += [m for m in edits.get("mounts") or [] if isinstance(m, dict)]
    nodes += [n for n in edits.get("deviceNodes") or [] if isinstance(n, dict) and n.get("path")]
