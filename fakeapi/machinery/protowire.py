"""Protobuf's wire format: varints, field keys and length-delimited fields, written and read.

One codec for the server's protobuf answers (`/openapi/v2` as gnostic's messages) and request
bodies (`fakeapi.http.protobuf`), and the emulated kubelet's gRPC messages (PodResources).
The reader is strict, with gogo-protobuf's error wording (what the apiserver answers for a
malformed body); callers word errors of their own on top.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

VARINT, FIXED64, LENGTH_DELIMITED, FIXED32 = 0, 1, 2, 5
"""Wire types."""
_MASK64 = (1 << 64) - 1


def varint(value: int) -> bytes:
    """A base-128 varint (negative int64s as two's complement, as protobuf does)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def key(number: int, wire: int) -> bytes:
    """A field's key: its number and wire type."""
    return varint(number << 3 | wire)


def delimited(number: int, data: bytes) -> bytes:
    """A length-delimited field (bytes, strings, messages, packed scalars)."""
    return key(number, LENGTH_DELIMITED) + varint(len(data)) + data


class WireError(ValueError):
    """The bytes are not protobuf's wire format; the text is gogo-protobuf's wording."""

    @property
    def message(self) -> str:
        """The error's text."""
        return str(self)


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """The varint at `pos` (as an unsigned 64-bit value) and the position after it."""
    result = shift = 0
    while True:
        if shift >= 64:
            raise WireError("proto: integer overflow")
        if pos >= len(buf):
            raise WireError("unexpected EOF")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result & _MASK64, pos
        shift += 7


def read_fields(buf: bytes, message: str) -> Iterator[tuple[int, int, Any]]:
    """Each field of an encoded `message` (its name is for errors) as (field number, wire
    type, value): an int for varints and fixed-size fields, bytes for length-delimited ones."""
    pos, end = 0, len(buf)
    while pos < end:
        key, pos = read_varint(buf, pos)
        number, wire = key >> 3, key & 7
        if number <= 0:
            raise WireError(f"proto: {message}: illegal tag {number} (wire type {wire})")
        value: int | bytes
        if wire == VARINT:
            value, pos = read_varint(buf, pos)
        elif wire == FIXED64 or wire == FIXED32:
            size = 8 if wire == FIXED64 else 4
            if pos + size > end:
                raise WireError("unexpected EOF")
            value, pos = int.from_bytes(buf[pos:pos + size], "little"), pos + size
        elif wire == LENGTH_DELIMITED:
            length, pos = read_varint(buf, pos)
            if length >= 1 << 63:
                raise WireError("proto: negative length found during unmarshaling")
            if pos + length > end:
                raise WireError("unexpected EOF")
            value, pos = buf[pos:pos + length], pos + length
        else:
            raise WireError(f"proto: illegal wireType {wire}")
        yield number, wire, value


def read_packed(buf: bytes) -> Iterator[int]:
    """The varints of a packed repeated scalar field."""
    pos = 0
    while pos < len(buf):
        value, pos = read_varint(buf, pos)
        yield value


def signed(value: int, bits: int = 64) -> int:
    """A varint's value as a signed `bits`-bit integer (two's complement)."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value
