"""Protobuf's wire format, the writing side: varints, field keys and length-delimited fields.

One encoder for the server's protobuf answers (`/openapi/v2` as gnostic's messages) and the
emulated kubelet's gRPC messages (PodResources); reading request bodies is
`fakeapi.http.protobuf`'s, with the apiserver's error wording.
"""

from __future__ import annotations

VARINT, FIXED64, LENGTH_DELIMITED = 0, 1, 2
"""Wire types."""


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
