"""A snapshot: the objects of a state as multi-document YAML that both `kubectl apply -f` and
`fakeapi serve --from` load.

Each object is written as stored, status, finalizers, owner references, creation time and
generation included, minus what the target server assigns and `kubectl apply` would choke on
(`STRIPPED`). Its uid and resourceVersion at the snapshot's revision go in a comment line
above it (`# fakeapi: {...}`), which kubectl ignores and `--from` reads, so a restored
cluster keeps every uid that owner references, reservations and events name. Namespaces come
first, then CRDs and the objects others need at admission (service accounts, RBAC, classes),
then the rest by resource and key, as kubectl applies a file from the top.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import orjson
import yaml
from tqdm import tqdm

from fakeapi.machinery.jsonio import loads
from fakeapi.machinery.yamlbody import YamlBodyError, parse_yaml
from fakeapi.registry.kinds import (
    CLOCKS,
    CLUSTER_ROLE_BINDINGS,
    CLUSTER_ROLES,
    CONFIG_MAPS,
    CUSTOM_RESOURCE_DEFINITIONS,
    DEVICE_CLASSES,
    LIMIT_RANGES,
    NAMESPACES,
    PRIORITY_CLASSES,
    RESOURCE_QUOTAS,
    ROLE_BINDINGS,
    ROLES,
    SECRETS,
    SERVICE_ACCOUNTS,
)
from fakeapi.storage.store import Store

Obj = dict[str, Any]
STRIPPED = ("resourceVersion", "uid", "managedFields", "selfLink")
"""Metadata a snapshot leaves out of the objects: a create that names a resourceVersion is
refused and a patch with one fails its precondition on any other server; a uid is immutable,
so patching an object the target already has (the default namespace, the bootstrap roles)
with the recorded one is refused; managedFields would hand the recording's field managers to
the target; selfLink is gone since 1.20. The target assigns all four itself."""
HEADER = "# fakeapi: "
"""The comment line above each object: its recorded uid and resourceVersion, as JSON."""
FIRST = tuple(row.resource_id for row in (
    NAMESPACES, CUSTOM_RESOURCE_DEFINITIONS, PRIORITY_CLASSES, SERVICE_ACCOUNTS, SECRETS,
    CONFIG_MAPS, LIMIT_RANGES, RESOURCE_QUOTAS, CLUSTER_ROLES, CLUSTER_ROLE_BINDINGS, ROLES,
    ROLE_BINDINGS, DEVICE_CLASSES))
"""Resources written first, in this order: what others' admission or schema needs."""
LEFT_OUT = (CLOCKS.resource_id,)
"""Resources a snapshot leaves out: the emulator's Clock is the serving server's own (every
cluster seeds one; nobody may create or patch it), not state to carry over."""
_SEPARATOR = re.compile(r"(?m)^---[ \t]*$\n?")


class SnapshotError(Exception):
    """A snapshot file that can't be loaded (the message names the document and why)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class SnapshotDocument:
    """One object of a snapshot file, and what its header comment recorded."""

    index: int
    """1-based position in the file."""
    object: Obj
    uid: str | None
    resource_version: str | None


def order(resource: str) -> tuple[int, str]:
    """Where a resource's objects go in a snapshot (and in a restore)."""
    return (FIRST.index(resource), "") if resource in FIRST else (len(FIRST), resource)


def items(store: Store) -> Iterator[tuple[str, Obj]]:
    """(resource id, object) of every object of the store, in snapshot order."""
    for resource in sorted(store.resources(), key=order):
        if resource in LEFT_OUT:
            continue
        for item in store.scan(resource):
            yield resource, item.object if not isinstance(item, dict) else item


def objects(store: Store) -> Iterator[Obj]:
    """Every object of the store, in snapshot order."""
    return (obj for _, obj in items(store))


def kept(obj: Obj) -> Obj:
    """What a snapshot keeps of an object: a new dict, metadata without `STRIPPED`, the
    fields in the order manifests have them (type, metadata, the rest, status last)."""
    meta = {k: v for k, v in obj["metadata"].items() if k not in STRIPPED}
    out: Obj = {k: obj[k] for k in ("apiVersion", "kind") if k in obj}
    out["metadata"] = meta
    out.update((k, v) for k, v in obj.items() if k not in out and k != "status")
    if "status" in obj:
        out["status"] = obj["status"]
    return out


class _Dumper(yaml.CSafeDumper):
    """PyYAML's C emitter, with multi-line strings as literal blocks (container scripts)."""


def _str(dumper: _Dumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def document(obj: Obj) -> str:
    """One object as a snapshot document: `---`, its header comment, its YAML."""
    meta = obj["metadata"]
    header = orjson.dumps({"uid": meta.get("uid"),
                           "resourceVersion": meta.get("resourceVersion")}).decode()
    body = yaml.dump(kept(obj), Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     width=100)
    return f"---\n{HEADER}{header}\n{body}"


def write(store: Store, out: IO[str], *, title: str, progress: bool | None = None) -> int:
    """Write the store's objects to `out` as a snapshot (with a title comment); how many."""
    count = 0
    out.write(f"# {title}\n# kubectl apply -f FILE, or fakeapi serve --from FILE\n")
    total = sum(store.count(r) for r in store.resources() if r not in LEFT_OUT)
    with tqdm(total=total, unit="object", desc="writing", file=sys.stderr, leave=False,
              disable=not (sys.stderr.isatty() if progress is None else progress)) as bar:
        for obj in objects(store):
            out.write(document(obj))
            count += 1
            bar.update()
    return count


def parse(text: str, source: str) -> list[SnapshotDocument]:
    """The objects of a snapshot (or any multi-document manifest) and their header comments;
    SnapshotError naming the document for one that isn't an object."""
    docs: list[SnapshotDocument] = []
    for chunk in _SEPARATOR.split(text):
        index = len(docs) + 1  # counting objects, as a reader of the file does
        try:  # as sigs.k8s.io/yaml reads it (timestamps stay strings), like kubectl
            obj, duplicates = parse_yaml(chunk.encode())
        except YamlBodyError as e:
            raise SnapshotError(f"{source}: document {index} is not YAML: {e.message}") from None
        if obj is None:
            continue
        where = f"{source}: document {index}"
        if duplicates:
            raise SnapshotError(f"{where} has duplicate fields: {', '.join(duplicates)}")
        if not isinstance(obj, dict):
            raise SnapshotError(f"{where} is not an object but {type(obj).__name__}")
        meta = obj.get("metadata")
        for field, value in (("apiVersion", obj.get("apiVersion")), ("kind", obj.get("kind")),
                             ("metadata.name", meta.get("name") if isinstance(meta, dict)
                              else None)):
            if not isinstance(value, str) or not value:
                raise SnapshotError(f"{where} has no {field}")
        header = _header(chunk, where)
        docs.append(SnapshotDocument(index=index, object=obj, uid=header.get("uid"),
                             resource_version=header.get("resourceVersion")))
    return docs


def _header(chunk: str, where: str) -> dict[str, str]:
    for line in chunk.splitlines():
        if line.startswith(HEADER):
            try:
                value = loads(line[len(HEADER):].encode())
            except ValueError:
                value = None
            if not isinstance(value, dict) or not all(
                    v is None or isinstance(v, str) for v in value.values()):
                raise SnapshotError(f"{where}: its {HEADER.strip()} comment is not what a "
                                    "snapshot writes (a JSON object of uid and resourceVersion)")
            return {k: v for k, v in value.items() if isinstance(v, str)}
    return {}


def read(path: Path) -> list[SnapshotDocument]:
    """The documents of a snapshot file (SnapshotError when it can't be read)."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise SnapshotError(f"can't read the snapshot {path}: {e}") from None
    return parse(text, str(path))
