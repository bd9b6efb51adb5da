"""Field-level differences between two versions of an object, for people to read.

`changes(old, new)` walks both JSON values and yields one `Change` per leaf that was added,
removed or changed, named by its path (`spec.containers[0].image`, `metadata.labels["a.b/c"]`);
`render(changes)` prints them one per line (`~ path: old -> new`, `+ path: new`,
`- path: old`). `log show --diff` and `replay --check` both print with it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from typing import Any

import orjson

ABSENT: Any = object()
"""The value of a side where the field does not exist."""
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


@dataclasses.dataclass(frozen=True)
class Change:
    """One leaf that differs: its path, and its value before and after (ABSENT when none)."""

    path: str
    old: Any
    new: Any

    @property
    def sign(self) -> str:
        """`+` added, `-` removed, `~` changed."""
        if self.old is ABSENT:
            return "+"
        if self.new is ABSENT:
            return "-"
        return "~"

    def line(self) -> str:
        """The change as one line."""
        if self.old is ABSENT:
            return f"+ {self.path}: {_show(self.new)}"
        if self.new is ABSENT:
            return f"- {self.path}: {_show(self.old)}"
        return f"~ {self.path}: {_show(self.old)} -> {_show(self.new)}"


def _show(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def _key_path(base: str, key: str) -> str:
    if _PLAIN_KEY.match(key):
        return f"{base}.{key}" if base else key
    return f"{base}[{_show(key)}]"


def changes(old: Any, new: Any, path: str = "") -> Iterator[Change]:
    """Every leaf where `new` differs from `old` (dicts by key, lists by index)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() | new.keys()):
            yield from changes(old.get(key, ABSENT), new.get(key, ABSENT), _key_path(path, key))
    elif isinstance(old, list) and isinstance(new, list):
        for i in range(max(len(old), len(new))):
            yield from changes(old[i] if i < len(old) else ABSENT,
                               new[i] if i < len(new) else ABSENT, f"{path}[{i}]")
    elif old is ABSENT and new is ABSENT:
        return
    elif old is ABSENT or new is ABSENT or type(old) is not type(new) or old != new:
        yield Change(path or ".", old, new)


def render(found: Iterator[Change] | list[Change], *, indent: str = "  ",
           skip: tuple[str, ...] = ()) -> str:
    """The changes one per line (those whose path starts with one of `skip` left out)."""
    return "\n".join(indent + c.line() for c in found if not c.path.startswith(skip))
