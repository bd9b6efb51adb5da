"""JSON encoding and decoding of objects the API accepted: orjson, with the stdlib where orjson
refuses the data.

orjson stops at 254 levels of nesting when encoding and 1,024 when decoding, and can't encode
integers beyond 64 bits. Upstream accepts JSON nested up to 10,000 levels (Go's
encoding/json limit: deep free-form fields such as a claim's opaque parameters), so such
objects take the stdlib's C encoder and decoder instead. Both recurse once per level within
Python's recursion limit, which is raised here to what that nesting needs; their C stack use
per level is small (20,000 levels of decoding, encoding, deep copy and comparison fit in the
default 8 MB main-thread stack).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import orjson

MAX_DEPTH = 10_000
"""Deepest nesting a request body may have (Go encoding/json's maxNestingDepth)."""
RECURSION_LIMIT = 4 * MAX_DEPTH + 5_000
"""Python frames the accepted nesting may need: a few per level in the recursive walks of
validation, patching and managedFields, plus the server's own stack."""

if sys.getrecursionlimit() < RECURSION_LIMIT:
    sys.setrecursionlimit(RECURSION_LIMIT)


def dumps(value: Any, *, sort_keys: bool = False) -> bytes:
    """Compact JSON of `value` (orjson's output; the stdlib's for what orjson can't encode)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else None)
    except TypeError:  # nested deeper than orjson encodes, or an integer beyond 64 bits
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys,
                          allow_nan=False).encode()


def loads(raw: bytes | str) -> Any:
    """Decode JSON this server encoded (the stdlib takes what is nested deeper than orjson
    decodes)."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)
