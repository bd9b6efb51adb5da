"""Golden logs: a test's event log compared with a checked-in file, a readable diff when
they differ, `pytest --update-golden` to rewrite the file.

The file is a YAML stream with one document per event after the cluster was ready (the
test's own writes and what the components did about them): a header comment naming the
revision, the event type, the resource, namespace/name, the actor and the clock time, then
the object with sorted keys. On the virtual clock with a seed the log is reproducible, so
nothing in it is dropped: names, UIDs, resourceVersions and timestamps are all compared.
Only what depends on the process rather than on the test is normalised: the server's
address (`<server>`; its port is ephemeral) and the cluster's temporary folder (`<state>`).
A test may drop fields it doesn't want to pin with `ignore` (dotted paths).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from fakeapi.testing.cluster import FakeapiCluster, LoggedEvent

HEADER = "# fakeapi golden log: {count} events after the cluster was ready " \
         "(pytest --update-golden rewrites it)\n"
MAX_DIFF_LINES = 400
"""A longer diff is cut (the rest is counted): the first differences are what matter."""
_HUNK = re.compile(r"^@@ -(\d+)")


def normalize(value: Any, replacements: Sequence[tuple[str, str]]) -> Any:
    """`value` with each replaced text (the server's address, the state folder) swapped for
    its placeholder wherever a string holds it."""
    if isinstance(value, str):
        for text, placeholder in replacements:
            value = value.replace(text, placeholder)
        return value
    if isinstance(value, dict):
        return {k: normalize(v, replacements) for k, v in value.items()}
    if isinstance(value, list):
        return [normalize(v, replacements) for v in value]
    return value


def drop(value: Any, path: Sequence[str]) -> None:
    """Remove the field at `path` (dotted keys; a list applies the rest to each item)."""
    if isinstance(value, list):
        for item in value:
            drop(item, path)
    elif isinstance(value, dict) and path:
        if len(path) == 1:
            value.pop(path[0], None)
        elif path[0] in value:
            drop(value[path[0]], path[1:])


def render(events: Iterable[LoggedEvent], *, replacements: Sequence[tuple[str, str]] = (),
           ignore: Iterable[str] = ()) -> str:
    """The golden text of `events` (see the module docstring)."""
    import yaml

    paths = [p.split(".") for p in ignore]
    docs = []
    for e in events:
        obj = normalize(e.object, replacements)
        for path in paths:
            drop(obj, path)
        body = yaml.safe_dump(obj, sort_keys=True, default_flow_style=False,
                              allow_unicode=True, width=1 << 16)
        where = f"{e.namespace}/{e.name}" if e.namespace else e.name
        docs.append(f"--- # {e.revision} {e.type} {e.resource} {where} by {e.actor} "
                    f"at {e.time}\n{body}")
    return HEADER.format(count=len(docs)) + "".join(docs)


def _event_headers(lines: Sequence[str]) -> Iterator[tuple[int, str]]:
    for i, line in enumerate(lines):
        if line.startswith("--- # "):
            yield i, line[len("--- # "):].rstrip("\n")


def _first_change(hunk: Sequence[str], start: int) -> int:
    """The golden file's 0-based line of a hunk's first change (`start`: its 1-based first
    line, from the `@@` header)."""
    line = start - 1
    for text in hunk:
        if text.startswith(("-", "+")):
            return line
        line += 1
    return line


def readable_diff(expected: str, actual: str, *, name: str) -> str:
    """A unified diff of the golden text against this run's, each hunk headed by the event
    it falls in (as git names a function), cut after `MAX_DIFF_LINES`."""
    want = expected.splitlines(keepends=True)
    headers = list(_event_headers(want))
    lines = [line if line.endswith("\n") else line + "\n" for line in difflib.unified_diff(
        want, actual.splitlines(keepends=True), fromfile=f"{name} (golden)",
        tofile=f"{name} (this run)", n=3)]
    out: list[str] = []
    for k, line in enumerate(lines):
        hunk = _HUNK.match(line)
        if hunk is not None:
            changed = _first_change(lines[k + 1:], int(hunk.group(1)))
            inside = [h for i, h in headers if i <= changed]
            if inside:
                line = f"{line.rstrip()} event {inside[-1]}\n"
        out.append(line)
    if len(out) > MAX_DIFF_LINES:
        out = out[:MAX_DIFF_LINES] + [f"... {len(out) - MAX_DIFF_LINES} more diff lines\n"]
    return "".join(out)


def assert_matches_golden(cluster: FakeapiCluster, path: str | Path, *,
                          since: int | None = None, ignore: Iterable[str] = ()) -> None:
    """Fail, with a readable diff, unless the cluster's log after `since` (default: the
    revision it was ready at) matches the golden file at `path` (relative to the test
    module's folder); with `--update-golden`, write the file instead."""
    __tracebackhide__ = True
    if cluster.settings.clock != "virtual" or cluster.settings.seed is None:
        pytest.fail("assert_matches_golden needs a reproducible log: the virtual clock and a "
                    f"seed (this cluster has clock={cluster.settings.clock!r}, "
                    f"seed={cluster.settings.seed!r})", pytrace=False)
    target = Path(path)
    if not target.is_absolute() and cluster.golden.directory is not None:
        target = cluster.golden.directory / target
    cluster.settle()
    events = cluster.events(cluster.ready_revision if since is None else since)
    address = cluster.url.split("://", 1)[1]
    replacements = [(address, "<server>"), (str(cluster.state_dir), "<state>")]
    actual = render(events, replacements=replacements, ignore=ignore)
    if cluster.golden.update:
        if not target.exists() or target.read_text(encoding="utf-8") != actual:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(actual, encoding="utf-8")
            cluster.golden.written.append(target)
        return
    if not target.exists():
        pytest.fail(f"golden log {target} does not exist: run pytest with --update-golden "
                    "to write it", pytrace=False)
    expected = target.read_text(encoding="utf-8")
    if expected != actual:
        pytest.fail(f"the log differs from the golden log {target} (pytest --update-golden "
                    "rewrites it):\n" + readable_diff(expected, actual, name=target.name),
                    pytrace=False)
