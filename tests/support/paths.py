"""Where things are: the repository root and the tests' data directory."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository root (the working directory of the server processes the tests start)."""
DATA = ROOT / "tests" / "data"
"""The tests' data files (seeds, upstream tables, manifests)."""
