"""`fakeapi.machinery.durations` reads and writes Go durations as Go's time package does, on
Go's own test tables (tests/data/durations)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fakeapi.machinery.durations import DurationError, format_duration, is_duration, parse_duration

TABLES: dict[str, dict[str, Any]] = yaml.safe_load(
    (Path(__file__).resolve().parents[1] / "data" / "durations" / "go_parse_duration.yaml"
     ).read_text(encoding="utf-8"))


@pytest.mark.parametrize(("text", "ns"), TABLES["valid"].items())
def test_go_parses_these(text: str, ns: int) -> None:
    assert parse_duration(text) == ns
    assert is_duration(text)


@pytest.mark.parametrize(("text", "message"), TABLES["invalid"].items())
def test_go_refuses_these_with_its_message(text: str, message: str) -> None:
    with pytest.raises(DurationError) as e:
        parse_duration(text)
    assert str(e.value) == message
    assert not is_duration(text)


@pytest.mark.parametrize(("text", "ns"), TABLES["strings"].items())
def test_duration_string_is_gos(text: str, ns: int) -> None:
    assert format_duration(ns) == text
    assert parse_duration(text) == ns  # and it reads back
