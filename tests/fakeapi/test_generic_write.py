"""Small pieces of the generic write path (fakeapi.registry.generic)."""

from __future__ import annotations

import random
import uuid

from fakeapi.registry.generic import uuid4


def test_uuid4_is_the_uuid_module_s_version_4() -> None:
    ours, theirs = random.Random(3), random.Random(3)
    for _ in range(5000):
        assert uuid4(ours) == str(uuid.UUID(int=theirs.getrandbits(128), version=4))


def test_uuid4_edge_values() -> None:
    class Fixed(random.Random):
        def __init__(self, value: int) -> None:
            super().__init__(0)
            self.value = value

        def getrandbits(self, k: int) -> int:
            return self.value

    for value in (0, (1 << 128) - 1, 1 << 127, 0xC000 << 48, 0xF000 << 64):
        assert uuid4(Fixed(value)) == str(uuid.UUID(int=value, version=4))
