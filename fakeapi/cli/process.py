"""How `fakeapi serve` tunes the Python process it owns (benchmarks that run the control plane
in process do the same, to measure what the server does).

- glibc's mmap threshold is fixed, so RSS follows the retained log. glibc serves allocations
  above its mmap threshold (128 KiB at start) with their own mappings, which `free` unmaps at
  once. But the threshold adapts: freeing such a block raises it to the block's size, so from
  then on every 1 MB object (request bodies, encoded events) comes from the heap, whose freed
  pages stay in the process. With large objects churning, RSS then grows far past what the
  event log retains. Fixing the threshold (`mallopt(M_MMAP_THRESHOLD)`) turns the adaptation
  off; small objects are unaffected (Python's own allocator and glibc's arenas).
- the cyclic garbage collector runs after 100,000 net allocations instead of 700. A server
  allocates JSON dicts at a high rate and frees nearly all of them by reference counting;
  with the default threshold the collector ran ~7,400 times while 10,000 GPU pods started
  (3.5 s of 45 s), with this one 6 times (0.2 s). Cycles still get collected, later.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc

GC_THRESHOLDS = (100_000, 20, 20)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 128 * 1024


def tune() -> None:
    """Apply the server's process settings (idempotent)."""
    fix_mmap_threshold()
    gc.set_threshold(*GC_THRESHOLDS)


def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD) -> bool:
    """Fix glibc's mmap threshold at `threshold` bytes; False where there is no glibc."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl, macOS)
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, threshold))
