"""JSON encoding and decoding of objects the API accepted: orjson, with the stdlib where orjson
refuses the data or can't be trusted with it.

orjson stops at 254 levels of nesting when encoding and 1,024 when decoding, and can't encode
integers beyond 64 bits. Upstream accepts JSON nested up to 10,000 levels (Go's
encoding/json limit: deep free-form fields such as a claim's opaque parameters), so such
objects take the stdlib's C encoder and decoder instead. Both recurse once per level within
Python's recursion limit, which is raised here to what that nesting needs; their C stack use
per level is small (20,000 levels of decoding, encoding, deep copy and comparison fit in the
default 8 MB main-thread stack).

orjson's encoder also writes a list's closing bracket without reserving room for it, so a
long run of directly nested lists closing at once (`...]]]]]`, ~230 levels) writes past its
buffer and corrupts the heap (orjson 3.13; upstream's fix, ijl/orjson#634, resizes first).
Such data is a *hazard*: a request body with a run of HAZARD_RUN closing brackets marks its
own request (a context variable), and the store marks the process once it holds any
(`note_stored`); while either holds, every `dumps` takes the stdlib encoder.
"""

from __future__ import annotations

import contextvars
import json
import re
import sys
from collections.abc import Iterable
from typing import Any

import orjson

MAX_DEPTH = 10_000
"""Deepest nesting a request body may have (Go encoding/json's maxNestingDepth)."""
RECURSION_LIMIT = 4 * MAX_DEPTH + 5_000
"""Python frames the accepted nesting may need: a few per level in the recursive walks of
validation, patching and managedFields, plus the server's own stack."""

if sys.getrecursionlimit() < RECURSION_LIMIT:
    sys.setrecursionlimit(RECURSION_LIMIT)

HAZARD_RUN = 24
"""Directly nested lists closing at once from which on orjson's encoder isn't trusted (it
has ~30 bytes of slack after the last value it reserved room for)."""
_RUN = b"]" * HAZARD_RUN
_SPACED_RUN = re.compile(rb"(?:\][ \t\r\n]*){%d}" % HAZARD_RUN)
_request_hazard: contextvars.ContextVar[bool] = contextvars.ContextVar("json_hazard",
                                                                        default=False)
_stored_hazard = False


def is_hazard(raw: bytes | str) -> bool:
    """Whether JSON (or flow YAML) text closes HAZARD_RUN lists in a row."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    return data.count(b"]") >= HAZARD_RUN and (
        _RUN in data or _SPACED_RUN.search(data) is not None)


def list_chain(value: Any) -> int:
    """The longest chain of lists directly inside lists in a decoded value (for bodies whose
    text doesn't show it, such as YAML block sequences)."""
    longest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, chain = stack.pop()
        if isinstance(node, list):
            chain += 1
            longest = max(longest, chain)
            stack.extend((v, chain) for v in node if isinstance(v, (list, dict)))
        elif isinstance(node, dict):
            stack.extend((v, 0) for v in node.values() if isinstance(v, (list, dict)))
    return longest


def note_request_hazard() -> None:
    """The request being served carries a hazard: its encodings take the stdlib."""
    _request_hazard.set(True)


def note_stored(raw: bytes) -> None:
    """An object was stored (or replayed) as `raw`: from the first hazard on, every encoding
    in this process takes the stdlib (a few times slower, never unsafe)."""
    global _stored_hazard
    if not _stored_hazard and _RUN in raw:
        _stored_hazard = True


def may_have_run(datas: Iterable[bytes]) -> bool:
    """Whether `datas` may hold the hazard's run of closing brackets: one search of them
    joined (a run across two of them says yes too), so a replay asks it of a batch of
    records and looks at each object (`note_stored`) only when it says yes."""
    return _RUN in b"".join(datas)


def hazard() -> bool:
    """Whether encodings must avoid orjson right now."""
    return _stored_hazard or _request_hazard.get()


def dumps(value: Any, *, sort_keys: bool = False) -> bytes:
    """Compact JSON of `value` (orjson's output; the stdlib's for what orjson can't encode or
    can't be trusted with)."""
    if not (_stored_hazard or _request_hazard.get()):
        try:
            return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else None)
        except TypeError:  # nested deeper than orjson encodes, or an integer beyond 64 bits
            pass
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys,
                      allow_nan=False).encode()


def loads(raw: bytes | str) -> Any:
    """Decode JSON this server encoded (the stdlib takes what is nested deeper than orjson
    decodes)."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)
