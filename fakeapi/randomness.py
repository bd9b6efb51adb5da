"""Where UIDs, generated names and the components' random choices come from.

With a seed, every random value is a pure function of the seed and of what it is for:

- a write draws from (seed, revision of the write, actor): `RandomSource.for_write`. The
  revision is new for every write, also after a restart of a durable server (it continues the
  log), so a seeded restart never reuses a UID; and the same writes give the same names and
  UIDs again, whatever other tasks did in between (nothing is shared between writes).
- a component draws from its own stream, derived from (seed, component name):
  `RandomSource.for_component`. Components never share a stream, so one component's draws
  don't shift another's.

Without a seed, both come from OS randomness.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

_BLOCK_BITS = 512  # one BLAKE2b digest


class DerivedRandom(random.Random):
    """A `random.Random` whose bits are BLAKE2b(key, block counter) digests.

    The same key always gives the same stream. Unlike a Mersenne Twister, which costs about
    7 µs to seed, it is cheap enough to make one per write (about 1 µs for a UID). It is not a
    cryptographic generator for secrets, only a reproducible one.
    """

    def __init__(self, key: bytes | str = b"") -> None:
        self._hasher = hashlib.blake2b()
        self._block = 0
        self._pool = 0
        self._pooled = 0
        super().__init__(key)

    def seed(self, a: Any = None, version: int = 2) -> None:
        """Restart the stream at key `a` (bytes, or str encoded as UTF-8; None: empty key)."""
        if isinstance(a, str):
            a = a.encode()
        elif a is None:
            a = b""
        elif not isinstance(a, bytes | bytearray):
            raise TypeError(f"the key must be str or bytes, not {type(a).__name__}")
        self._hasher = hashlib.blake2b(a)
        self._block = 0
        self._pool = 0
        self._pooled = 0

    def getrandbits(self, k: int) -> int:
        """`k` random bits as an int, from the next bits of the stream."""
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        while self._pooled < k:
            h = self._hasher.copy()
            h.update(self._block.to_bytes(8, "little"))
            self._block += 1
            self._pool |= int.from_bytes(h.digest(), "little") << self._pooled
            self._pooled += _BLOCK_BITS
        value = self._pool & ((1 << k) - 1)
        self._pool >>= k
        self._pooled -= k
        return value

    def random(self) -> float:
        """A float in [0, 1) with 53 random bits, like `random.Random.random`."""
        return self.getrandbits(53) * (1.0 / (1 << 53))

    def getstate(self) -> tuple[Any, ...]:
        """The position in the stream (for `setstate`)."""
        return (self._hasher.copy(), self._block, self._pool, self._pooled)

    def setstate(self, state: tuple[Any, ...]) -> None:
        """Go back to a position returned by `getstate`."""
        hasher, self._block, self._pool, self._pooled = state
        self._hasher = hasher.copy()


class RandomSource:
    """The cluster's randomness: deterministic per write and per component with a seed.

    `seed=None` means OS randomness everywhere (`random.SystemRandom`).
    """

    def __init__(self, seed: int | None = None) -> None:
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise TypeError(f"seed must be an int or None, not {type(seed).__name__}")
        self.seed = seed
        self._system = random.SystemRandom()

    @property
    def deterministic(self) -> bool:
        """Whether values are reproducible (a seed was given)."""
        return self.seed is not None

    def for_write(self, revision: int, actor: str) -> random.Random:
        """The stream of the write that will be committed at `revision` by `actor`.

        Registry writes draw their generated name and UID from it, in that order.
        """
        if self.seed is None:
            return self._system
        return DerivedRandom(f"{self.seed}/write/{revision}/{actor}")

    def for_component(self, name: str) -> random.Random:
        """A stream of the component `name`'s own, e.g. for shareIDs or jitter.

        With a seed it is the same on every start; call it once and keep the stream (two calls
        with the same name start the same stream over). Without a seed it is OS-seeded.
        """
        if self.seed is None:
            return random.Random()
        return DerivedRandom(f"{self.seed}/component/{name}")
