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
import os
import random
from typing import Any, Protocol

_BLOCK_BITS = 512  # one BLAKE2b digest


class RandomBits(Protocol):
    """What a write draws from: random bits and integers below a bound."""

    def getrandbits(self, k: int, /) -> int:
        """`k` random bits as an int."""
        ...

    def randrange(self, stop: int, /) -> int:
        """A random int in [0, stop)."""
        ...


def _key_bytes(key: object) -> bytes:
    if isinstance(key, str):
        return key.encode()
    if isinstance(key, bytes | bytearray):
        return bytes(key)
    raise TypeError(f"the key must be str or bytes, not {type(key).__name__}")


class HashStream:
    """Reproducible random bits: the BLAKE2b digests of (key, block counter), in order.

    Cheap to make, so there can be one per write: seeding a Mersenne Twister costs several
    times more than the one digest a UID and a generated name need. Not for secrets.
    """

    __slots__ = ("_key", "_block", "_pool", "_pooled")

    def __init__(self, key: str | bytes) -> None:
        self._key = _key_bytes(key)
        self._block = 0
        self._pool = 0  # unread bits, the next ones lowest
        self._pooled = 0

    def getrandbits(self, k: int, /) -> int:
        """The next `k` bits of the stream as an int (earlier bits in the low positions)."""
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        while self._pooled < k:
            digest = hashlib.blake2b(self._key + self._block.to_bytes(8, "little")).digest()
            self._block += 1
            self._pool |= int.from_bytes(digest, "little") << self._pooled
            self._pooled += _BLOCK_BITS
        value = self._pool & ((1 << k) - 1)
        self._pool >>= k
        self._pooled -= k
        return value

    def randrange(self, stop: int, /) -> int:
        """A uniform int in [0, stop), by rejection (no modulo bias)."""
        if stop <= 0:
            raise ValueError(f"empty range for randrange({stop})")
        bits = (stop - 1).bit_length()
        while True:
            value = self.getrandbits(bits)
            if value < stop:
                return value

    def state(self) -> tuple[bytes, int, int, int]:
        """The position in the stream."""
        return (self._key, self._block, self._pool, self._pooled)

    @classmethod
    def at(cls, state: tuple[bytes, int, int, int]) -> HashStream:
        """A stream at a position returned by `state()`."""
        stream = cls(state[0])
        _, stream._block, stream._pool, stream._pooled = state
        return stream


class DerivedRandom(random.Random):
    """A full `random.Random` (choice, shuffle, uniform, ...) over a `HashStream`: the same
    key always gives the same draws, on every Python version."""

    def __init__(self, key: str | bytes = b"") -> None:
        super().__init__(key)  # calls seed(key)

    def seed(self, a: Any = None, version: int = 2) -> None:
        """Restart the stream at key `a` (str or bytes; None: the empty key)."""
        self._stream = HashStream(b"" if a is None else a)

    def getrandbits(self, k: int, /) -> int:
        """The next `k` bits of the stream."""
        return self._stream.getrandbits(k)

    def random(self) -> float:
        """A float in [0, 1) with 53 random bits, like `random.Random.random`."""
        return self._stream.getrandbits(53) * (1.0 / (1 << 53))

    def getstate(self) -> tuple[Any, ...]:
        """The position in the stream (for `setstate`)."""
        return self._stream.state()

    def setstate(self, state: tuple[Any, ...]) -> None:
        """Go back to a position returned by `getstate`."""
        key, block, pool, pooled = state
        self._stream = HashStream.at((key, block, pool, pooled))


class RandomSource:
    """The cluster's randomness: deterministic per write and per component with a seed.

    `seed=None` means OS randomness everywhere.
    """

    def __init__(self, seed: int | None = None) -> None:
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise TypeError(f"seed must be an int or None, not {type(seed).__name__}")
        self.seed = seed

    @property
    def deterministic(self) -> bool:
        """Whether values are reproducible (a seed was given)."""
        return self.seed is not None

    def for_write(self, revision: int, actor: str) -> RandomBits:
        """The bits of the write that will be committed at `revision` by `actor`.

        Registry creates draw their generated name and then their UID from it.
        """
        if self.seed is None:  # one read of OS randomness, then as cheap as the seeded case
            return HashStream(os.urandom(32))
        return HashStream(f"{self.seed}/write/{revision}/{actor}")

    def for_component(self, name: str) -> random.Random:
        """A stream of the component `name`'s own, e.g. for shareIDs or jitter.

        With a seed it is the same on every start; call it once and keep the stream (two calls
        with the same name start the same stream over). Without a seed it is OS-seeded.
        """
        if self.seed is None:
            return random.Random()
        return DerivedRandom(f"{self.seed}/component/{name}")
