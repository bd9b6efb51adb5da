"""Device attributes as a node profile gives them (short form: `true`, `3`, `"x"`) and as a
ResourceSlice carries them (a DeviceAttribute dict)."""

from __future__ import annotations

from typing import Any

Scalar = bool | int | str
"""An attribute given in short form: a bool, an int or a string."""


def attribute_value(name: str, value: Any) -> dict[str, Any]:
    """A DeviceAttribute dict from the short form (`true`, `3`, `"x"`) or the wire form
    (`{version: 1.0.0}`); ValueError naming the attribute when it is neither."""
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, str):
        return {"string": value}
    keys = ("bool", "int", "string", "version", "bools", "ints", "strings", "versions")
    if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in keys:
        return dict(value)
    raise ValueError(f"attribute {name}: {value!r} is not a bool, int, string or one of "
                     f"{{{', '.join(keys)}: ...}}")
