"""Give large allocations back to the OS as soon as they are freed (glibc's malloc).

glibc serves allocations above its mmap threshold (128 KiB at start) with their own mappings,
which `free` unmaps at once. But the threshold adapts: freeing such a block raises it to the
block's size, so from then on every 1 MB object (request bodies, encoded events) comes from the
heap, whose freed pages stay in the process. With large objects churning, RSS then grows far
past what the event log retains. Fixing the threshold (`mallopt(M_MMAP_THRESHOLD)`) turns the
adaptation off; small objects are unaffected (Python's own allocator and glibc's arenas).
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 128 * 1024


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
