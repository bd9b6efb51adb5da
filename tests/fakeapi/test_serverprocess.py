"""The process settings `fakeapi serve` applies."""

from __future__ import annotations

import gc

from fakeapi import serverprocess


def test_tune_sets_the_collector_thresholds() -> None:
    before = gc.get_threshold()
    try:
        serverprocess.tune()
        serverprocess.tune()  # idempotent
        assert gc.get_threshold() == serverprocess.GC_THRESHOLDS
        assert serverprocess.GC_THRESHOLDS[0] > before[0]
    finally:
        gc.set_threshold(*before)
