"""A boolean query parameter as upstream reads it (Convert_Slice_string_To_bool, and the
request-info resolver's `watch`): absent is None; `0` and `false` in any case are false;
anything else, `True` and the empty string included, is true."""

from __future__ import annotations

from typing import Any


def query_bool(query: Any, name: str) -> bool | None:
    """The parameter `name` of a query mapping (aiohttp's MultiDict, a dict) as a bool."""
    value = query.get(name)
    if value is None:
        return None
    return not (value == "0" or value.lower() == "false")


def query_flag(query: Any, name: str) -> bool:
    """The parameter as a flag: absent is false."""
    return bool(query_bool(query, name))
