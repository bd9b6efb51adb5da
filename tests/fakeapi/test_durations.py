"""Go's duration syntax, case by case after Go's `time.ParseDuration` tests: what it reads
and the message it refuses the rest with."""

from __future__ import annotations

import pytest

from fakeapi.machinery.durations import DurationError, parse_duration


@pytest.mark.parametrize(("text", "seconds"), [
    ("0", 0.0), ("5s", 5.0), ("30s", 30.0), ("478s", 478.0), ("-5s", -5.0), ("+5s", 5.0),
    ("-0", 0.0), ("+0", 0.0), ("5.0s", 5.0), ("5.6s", 5.6), ("5.s", 5.0), (".5s", 0.5),
    ("1.0s", 1.0), ("1.00s", 1.0), ("1.004s", 1.004), ("100.00100s", 100.001),
    ("10ns", 10e-9), ("11us", 11e-6), ("12µs", 12e-6), ("12μs", 12e-6), ("13ms", 0.013),
    ("14s", 14.0), ("15m", 900.0), ("16h", 57600.0), ("3h30m", 12600.0),
    ("10.5s4m", 250.5), ("-2m3.4s", -123.4), ("1h2m3s4ms5us6ns", 3723.004005006),
    ("39h9m14.425s", 140_954.425), ("52763797000ns", 52.763797),
    ("0.3333333333333333333h", 1200.0), ("1.5h", 5400.0), ("300ms", 0.3),
])
def test_go_durations_read_as_go_reads_them(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize(("text", "message"), [
    ("", 'time: invalid duration ""'),
    ("3", 'time: missing unit in duration "3"'),
    ("-", 'time: invalid duration "-"'),
    ("s", 'time: invalid duration "s"'),
    (".", 'time: invalid duration "."'),
    ("-.", 'time: invalid duration "-."'),
    (".s", 'time: invalid duration ".s"'),
    ("+.s", 'time: invalid duration "+.s"'),
    ("1d", 'time: unknown unit "d" in duration "1d"'),
    ("3000000h.", 'time: invalid duration "3000000h."'),
    ("1h 30m", 'time: unknown unit "h " in duration "1h 30m"'),
    ("1.5.3s", 'time: missing unit in duration "1.5.3s"'),
    ("--5s", 'time: invalid duration "--5s"'),
])
def test_what_go_refuses_is_refused_with_its_message(text: str, message: str) -> None:
    with pytest.raises(DurationError) as e:
        parse_duration(text)
    assert str(e.value) == message
