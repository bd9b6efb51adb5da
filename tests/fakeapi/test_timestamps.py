"""`fakeapi.machinery.timestamps`: wire timestamps parsed back (the formatting and its
per-second cache are tested in test_clock.py, where they used to live)."""

from __future__ import annotations

import datetime as dt

import pytest

from fakeapi.machinery.timestamps import (
    RFC3339,
    RFC3339_MICRO,
    canonical_time,
    parse_time,
    parse_time_or_none,
    rfc3339,
    rfc3339_micro,
)

T = dt.datetime(2024, 2, 29, 23, 59, 59, 123456, tzinfo=dt.UTC)


@pytest.mark.parametrize(("text", "want"), [
    ("2024-02-29T23:59:59Z", T.replace(microsecond=0)),
    ("2024-02-29T23:59:59.123456Z", T),
    ("2024-03-01T01:59:59.123456+02:00", T),
    ("2024-02-29T23:59:59", T.replace(microsecond=0)),  # no zone: UTC
])
def test_parse_time(text: str, want: dt.datetime) -> None:
    assert parse_time(text) == want and parse_time(text).tzinfo is not None
    assert parse_time_or_none(text) == want


@pytest.mark.parametrize("value", [None, "", "yesterday", 5, "2024-13-01T00:00:00Z"])
def test_absent_or_malformed_times_are_none(value: object) -> None:
    assert parse_time_or_none(value) is None


def test_parse_time_rejects_malformed_text() -> None:
    with pytest.raises(ValueError):
        parse_time("yesterday")


def test_round_trips() -> None:
    assert parse_time(rfc3339(T)) == T.replace(microsecond=0)
    assert parse_time(rfc3339_micro(T)) == T
    assert canonical_time("2024-03-01T01:59:59.123456+02:00", RFC3339) == "2024-02-29T23:59:59Z"
    assert canonical_time("2024-03-01T01:59:59.123456+02:00", RFC3339_MICRO) == \
        "2024-02-29T23:59:59.123456Z"
