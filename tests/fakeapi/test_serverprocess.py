"""The process settings `fakeapi serve` applies."""

from __future__ import annotations

import gc

from fakeapi.cli import process as serverprocess


def test_tune_sets_the_collector_thresholds() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)  # Python's defaults (an in-process serve may have run)
        serverprocess.tune()
        serverprocess.tune()  # idempotent
        assert gc.get_threshold() == serverprocess.GC_THRESHOLDS
    finally:
        gc.set_threshold(*before)
