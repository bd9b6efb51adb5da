"""`fakeapi.machinery.protowire`: what the writer writes the reader reads back, and the
reader's errors (gogo-protobuf's wording, which the apiserver answers with; the HTTP
decoder's own cases are in test_protobuf.py, PodResources' in test_podresources.py)."""

from __future__ import annotations

import pytest

from fakeapi.machinery import protowire as pw


def test_the_reader_reads_what_the_writer_writes() -> None:
    data = (pw.key(1, pw.VARINT) + pw.varint(300) + pw.delimited(2, b"abc")
            + pw.key(3, pw.VARINT) + pw.varint(-2) + pw.key(4, pw.FIXED64) + bytes(8)
            + pw.key(5, pw.FIXED32) + b"\x01\x00\x00\x00"
            + pw.delimited(6, pw.varint(1) + pw.varint(150)))
    fields = list(pw.read_fields(data, "M"))
    assert [(n, w) for n, w, _ in fields] == [(1, 0), (2, 2), (3, 0), (4, 1), (5, 5), (6, 2)]
    assert fields[0][2] == 300 and fields[1][2] == b"abc" and fields[4][2] == 1
    assert pw.signed(fields[2][2]) == -2 and pw.signed(fields[2][2], 32) == -2
    assert list(pw.read_packed(fields[5][2])) == [1, 150]
    assert pw.read_varint(pw.varint(2**64 - 1), 0) == (2**64 - 1, 10)


@pytest.mark.parametrize(("data", "message"), [
    (b"\x08", "unexpected EOF"),
    (b"\x08\xff", "unexpected EOF"),
    (b"\x08" + b"\xff" * 11, "proto: integer overflow"),
    (b"\x12\x05ab", "unexpected EOF"),
    (b"\x09\x01", "unexpected EOF"),
    (b"\x0d\x01", "unexpected EOF"),
    (b"\x0f", "proto: illegal wireType 7"),
    (b"\x0b", "proto: illegal wireType 3"),
    (b"\x02\x00", "proto: M: illegal tag 0 (wire type 2)"),
    (b"\x12" + pw.varint(1 << 63), "proto: negative length found during unmarshaling"),
])
def test_malformed_bytes(data: bytes, message: str) -> None:
    with pytest.raises(pw.WireError) as err:
        list(pw.read_fields(data, "M"))
    assert err.value.message == message and isinstance(err.value, ValueError)
