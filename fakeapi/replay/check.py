"""`fakeapi replay --check`: a replay's log against the recording's, event by event.

Two events agree when their revision, type, resource, namespace/name, actor and object bytes
are the same. The first event that doesn't is the divergence, told with the object, the
actors and a field-level diff of the expected object against the actual one; a replay that
ends early or goes on past the recording diverges where one log ends.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson

from fakeapi.machinery.fielddiff import changes, render

Head = dict[str, Any]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Divergence:
    """The first event where a replay differs from its recording (None: the log ended)."""

    revision: int
    expected: bytes | None
    actual: bytes | None

    def text(self) -> str:
        """Lines for people: where, what, who, and the diff expected -> actual."""
        exp, act = _split(self.expected), _split(self.actual)
        if exp is None:
            assert act is not None
            return (f"divergence at revision {self.revision}: the replay has more events than "
                    f"the recording, which ends at revision {self.revision - 1}; the first "
                    f"extra is {_what(act[0])} by {act[0]['a']}")
        if act is None:
            return (f"divergence at revision {self.revision}: the replay ended at revision "
                    f"{self.revision - 1}; the recording goes on with {_what(exp[0])} by "
                    f"{exp[0]['a']}")
        (eh, eobj), (ah, aobj) = exp, act
        lines = [f"divergence at revision {self.revision}: {_what(eh)}"]
        if _object(eh) != _object(ah):
            lines.append(f"  object: expected {_what(eh)}, got {_what(ah)}")
        if eh["t"] != ah["t"]:
            lines.append(f"  type: expected {eh['t']}, got {ah['t']}")
        if eh["a"] != ah["a"]:
            lines.append(f"  actor: expected {eh['a']}, got {ah['a']}")
        else:
            lines.append(f"  actor: {eh['a']}")
        if _object(eh) == _object(ah):
            diff = render(changes(eobj, aobj), indent="    ")
            lines.append("  expected -> actual:\n" + diff if diff else
                         "  the objects differ only in their encoding")
        return "\n".join(lines)


def _split(record: bytes | None) -> tuple[Head, Any] | None:
    if record is None:
        return None
    head, _, raw = record.partition(b"\n")
    return orjson.loads(head), orjson.loads(raw)


def _object(head: Head) -> tuple[str, str, str]:
    return head["res"], head["ns"], head["n"]


def _what(head: Head) -> str:
    key = f"{head['ns']}/{head['n']}" if head["ns"] else head["n"]
    return f"{head['t']} {head['res']} {key}"


_COMPARED = ("r", "t", "res", "ns", "n", "a")


def _agree(expected: bytes, actual: bytes) -> bool:
    if expected == actual:
        return True
    ehead, _, eraw = expected.partition(b"\n")
    ahead, _, araw = actual.partition(b"\n")
    if eraw != araw:
        return False
    eh, ah = orjson.loads(ehead), orjson.loads(ahead)
    return all(eh[k] == ah[k] for k in _COMPARED)


def first_divergence(expected: list[bytes], actual: list[bytes], *,
                     base: int = 0) -> Divergence | None:
    """The first revision where the records (of revisions base+1 on) disagree, or where one
    list ends before the other (None when they agree throughout)."""
    for i, (exp, act) in enumerate(zip(expected, actual, strict=False)):
        if not _agree(exp, act):
            return Divergence(revision=base + i + 1, expected=exp, actual=act)
    if len(expected) == len(actual):
        return None
    n = min(len(expected), len(actual))
    return Divergence(revision=base + n + 1, expected=expected[n] if n < len(expected) else None,
                      actual=actual[n] if n < len(actual) else None)
