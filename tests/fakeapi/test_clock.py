"""Timestamps on the wire (fakeapi.clock): the per-second cache of `rfc3339` changes nothing."""

from __future__ import annotations

import datetime as dt
import random
import zoneinfo

import pytest

from fakeapi.clock import rfc3339


def _plain(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_rfc3339_matches_strftime_across_second_boundaries() -> None:
    rng = random.Random(7)
    base = dt.datetime(2026, 11, 30, 23, 59, 58, tzinfo=dt.UTC)
    times = [base + dt.timedelta(microseconds=rng.randrange(3_000_000)) for _ in range(2000)]
    times += [base + dt.timedelta(seconds=s, microseconds=us)
              for s in (0, 1, 2) for us in (0, 1, 999_999)]
    times += [t - dt.timedelta(days=400) for t in times[:50]]  # and back in time
    for t in times:
        assert rfc3339(t) == _plain(t), t


@pytest.mark.parametrize("t", [
    dt.datetime(2026, 1, 1, 1, 0, 0, 500_000, tzinfo=dt.timezone(dt.timedelta(hours=2))),
    dt.datetime(2026, 10, 25, 2, 30, tzinfo=zoneinfo.ZoneInfo("Europe/Berlin"), fold=0),
    dt.datetime(2026, 10, 25, 2, 30, tzinfo=zoneinfo.ZoneInfo("Europe/Berlin"), fold=1),
    dt.datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=dt.UTC),
    dt.datetime(1, 1, 1, tzinfo=dt.UTC),
])
def test_rfc3339_other_zones_and_extremes(t: dt.datetime) -> None:
    rfc3339(dt.datetime(2026, 10, 25, 0, 30, tzinfo=dt.UTC))  # something else cached first
    assert rfc3339(t) == _plain(t)
    assert rfc3339(t) == _plain(t)


def test_rfc3339_same_second_is_cached_text() -> None:
    t = dt.datetime(2030, 5, 6, 7, 8, 9, 10, tzinfo=dt.UTC)
    assert rfc3339(t) == "2030-05-06T07:08:09Z"
    assert rfc3339(t + dt.timedelta(microseconds=999_989)) == "2030-05-06T07:08:09Z"
    assert rfc3339(t + dt.timedelta(microseconds=999_990)) == "2030-05-06T07:08:10Z"
