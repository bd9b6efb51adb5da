"""Randomness derived from (seed, revision, actor): unique UIDs across restarts, same names on
the same writes, components with streams of their own, OS randomness without a seed."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.machinery.names import SUFFIX_ALPHABET, SUFFIX_LENGTH
from fakeapi.machinery.randomness import DerivedRandom, HashStream, RandomBits, RandomSource
from fakeapi.machinery.watchtypes import ADDED
from fakeapi.registry.context import RequestContext
from fakeapi.storage.log import Event
from fakeapi.storage.wal import WriteAheadLog

ALICE = RequestContext(user="alice", field_manager="test")
BOB = RequestContext(user="bob", field_manager="test")


# ----- DerivedRandom: a reproducible random.Random ----------------------------------------


def test_same_key_same_stream_and_other_keys_differ() -> None:
    draws = [[DerivedRandom(key).getrandbits(64) for _ in range(3)]
             for key in ("k", "k", b"k", "k2")]
    assert draws[0] == draws[1] == draws[2]
    assert draws[3] != draws[0]
    r = DerivedRandom("k")
    assert [r.getrandbits(64), r.getrandbits(64)] != [r.getrandbits(64), r.getrandbits(64)]


@pytest.mark.parametrize("widths", [(128, 128), (5, 7, 500, 13), (511, 2), (512, 512, 1)])
def test_draws_are_consecutive_bits_of_one_stream(widths: tuple[int, ...]) -> None:
    """Splitting a draw into smaller ones reads the same bits (low bits first)."""
    parts = DerivedRandom("split")
    joined = 0
    shift = 0
    for w in widths:
        value = parts.getrandbits(w)
        assert 0 <= value < 1 << w
        joined |= value << shift
        shift += w
    assert joined == DerivedRandom("split").getrandbits(shift)


def test_random_api_on_top_of_the_stream() -> None:
    r = DerivedRandom("api")
    floats = [r.random() for _ in range(2000)]
    assert all(0.0 <= f < 1.0 for f in floats)
    assert 0.4 < sum(floats) / len(floats) < 0.6
    assert {r.randrange(27) for _ in range(2000)} == set(range(27))
    assert r.getrandbits(0) == 0
    assert len(r.randbytes(7)) == 7


def test_state_round_trip_and_reseed() -> None:
    r = DerivedRandom("state")
    r.getrandbits(3)
    state = r.getstate()
    ahead = [r.getrandbits(100) for _ in range(8)]
    r.setstate(state)
    assert [r.getrandbits(100) for _ in range(8)] == ahead
    r.seed("state")
    assert r.getrandbits(64) == DerivedRandom("state").getrandbits(64)


@pytest.mark.parametrize("key", [1, 1.5, object()])
def test_key_must_be_text_or_bytes(key: Any) -> None:
    with pytest.raises(TypeError, match="key must be str or bytes"):
        DerivedRandom(key)


def test_negative_bit_count_is_refused() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        DerivedRandom("x").getrandbits(-1)


def test_a_write_stream_is_the_bits_of_the_full_random() -> None:
    stream, full = HashStream("w"), DerivedRandom("w")
    assert [stream.getrandbits(100) for _ in range(9)] == [full.getrandbits(100)
                                                          for _ in range(9)]
    restored = HashStream.at(stream.state())
    assert restored.getrandbits(64) == stream.getrandbits(64)


@pytest.mark.parametrize("stop", [1, 2, 27, 32, 33, 1000])
def test_randrange_is_in_range_and_covers_it(stop: int) -> None:
    stream = HashStream(f"range-{stop}")
    seen = {stream.randrange(stop) for _ in range(40 * stop)}
    assert seen == set(range(stop))


@pytest.mark.parametrize("stop", [0, -3])
def test_randrange_of_an_empty_range_is_refused(stop: int) -> None:
    with pytest.raises(ValueError, match="empty range"):
        HashStream("x").randrange(stop)


# ----- RandomSource -------------------------------------------------------------------------


def _bits(rng: RandomBits) -> int:
    return rng.getrandbits(128)


@pytest.mark.parametrize(("a", "b"), [
    ((1, 10, "alice"), (2, 10, "alice")),
    ((1, 10, "alice"), (1, 11, "alice")),
    ((1, 10, "alice"), (1, 10, "bob")),
    ((1, 1, "0/alice"), (1, 10, "/alice")),  # the parts can't run into each other
])
def test_each_part_of_a_write_key_changes_the_stream(
        a: tuple[int, int, str], b: tuple[int, int, str]) -> None:
    def draw(seed: int, rev: int, actor: str) -> int:
        return _bits(RandomSource(seed).for_write(rev, actor))

    assert draw(*a) == draw(*a)
    assert draw(*a) != draw(*b)


def test_component_streams_are_their_own() -> None:
    src = RandomSource(3)
    scheduler = [_bits(src.for_component("scheduler")) for _ in range(2)]
    assert scheduler[0] == scheduler[1] == _bits(RandomSource(3).for_component("scheduler"))
    others = {_bits(src.for_component("kubelet")), _bits(RandomSource(4).for_component(
        "scheduler")), _bits(src.for_write(1, "scheduler"))}
    assert scheduler[0] not in others and len(others) == 3


def test_without_a_seed_draws_come_from_the_os() -> None:
    src = RandomSource()
    assert not src.deterministic and RandomSource(0).deterministic
    assert _bits(src.for_write(1, "alice")) != _bits(RandomSource().for_write(1, "alice"))
    assert _bits(src.for_component("c")) != _bits(src.for_component("c"))


@pytest.mark.parametrize("seed", ["7", 7.0, True])
def test_seed_must_be_an_int(seed: Any) -> None:
    with pytest.raises(TypeError, match="seed must be an int"):
        RandomSource(seed)


# ----- through the registry -----------------------------------------------------------------


def _create(cluster: Cluster, ctx: RequestContext, body: dict[str, Any], *,
            resource: str = "configmaps", namespace: str = "default",
            dry_run: bool = False) -> dict[str, Any]:
    kind = cluster.kinds.by_id(resource)
    assert kind is not None
    if dry_run:
        ctx = RequestContext(user=ctx.user, field_manager=ctx.field_manager, dry_run=True)
    obj: dict[str, Any] = cluster.registry.create(kind, namespace, body, ctx).object
    return obj


def _writes(cluster: Cluster, round_: int) -> list[tuple[str, str]]:
    """A few creates by two users, generated names and fixed ones; their (name, uid)."""
    made = [
        _create(cluster, BOB, {"metadata": {"name": f"fixed-{round_}"}}),
        _create(cluster, ALICE, {"metadata": {"generateName": "cm-"}}),
        _create(cluster, BOB, {"metadata": {"generateName": "cm-"}}),
        _create(cluster, ALICE, {"metadata": {"generateName": "ns-"}},
                resource="namespaces", namespace=""),
    ]
    return [(o["metadata"]["name"], o["metadata"]["uid"]) for o in made]


async def _logged_uids(data_dir: Path) -> list[str]:
    """The UID of every object the log says was created."""
    wal, records = WriteAheadLog.open(data_dir / "events.log")
    await wal.close()
    events = [Event.from_record(r, None) for r in records]
    return [e.object["metadata"]["uid"] for e in events if e.type == ADDED]


async def test_restarts_of_a_seeded_durable_server_never_reuse_a_uid(tmp_path: Path) -> None:
    rounds = 4
    for round_ in range(rounds):
        cluster = Cluster(ClusterConfig(data_dir=tmp_path, seed=42))
        _writes(cluster, round_)
        assert cluster.wal is not None
        await cluster.wal.close()
    uids = await _logged_uids(tmp_path)
    seeded = Cluster(ClusterConfig(seed=42)).store.revision  # namespaces and bootstrap RBAC
    assert len(uids) == seeded + 4 * rounds
    assert len(set(uids)) == len(uids)
    assert all(uuid.UUID(u).version == 4 for u in uids)


def test_the_same_seeded_writes_give_the_same_names_and_uids() -> None:
    def run(seed: int | None) -> list[tuple[str, str]]:
        cluster = Cluster(ClusterConfig(seed=seed))
        return _writes(cluster, 0) + _writes(cluster, 1)

    first = run(5)
    assert run(5) == first
    assert len({uid for _, uid in first}) == len(first)
    for name, _ in first:
        if not name.startswith("fixed-"):
            suffix = name.rpartition("-")[2]
            assert len(suffix) == SUFFIX_LENGTH and set(suffix) <= set(SUFFIX_ALPHABET)
    other = run(6)
    assert [uid for _, uid in other] != [uid for _, uid in first]
    unseeded = run(None)
    assert not {uid for _, uid in unseeded} & {uid for _, uid in run(None)}


def _dry_run(cluster: Cluster) -> None:
    _create(cluster, BOB, {"metadata": {"generateName": "dry-"}}, dry_run=True)


def _component_draw(cluster: Cluster) -> None:
    cluster.randomness.for_component("scheduler").getrandbits(512)


@pytest.mark.parametrize("interleave", [_dry_run, _component_draw])
def test_draws_that_store_nothing_do_not_shift_later_names(
        interleave: Callable[[Cluster], None]) -> None:
    """A dry run, or a draw by a component, leaves the names of the next writes as they were
    (one shared random state made them depend on who drew first)."""
    def run(first: Callable[[Cluster], None] | None) -> list[tuple[str, str]]:
        cluster = Cluster(ClusterConfig(seed=9))
        if first is not None:
            first(cluster)
        return _writes(cluster, 0)

    assert run(interleave) == run(None)


def test_bootstrap_objects_keep_their_uids_across_seeded_clusters() -> None:
    uids = [_uid_map(Cluster(ClusterConfig(seed=s))) for s in (1, 1, 2)]
    assert uids[0] == uids[1]
    assert not set(uids[0].values()) & set(uids[2].values())


def _uid_map(cluster: Cluster) -> dict[str, str]:
    """key -> uid of every namespace and bootstrap cluster role (binding)."""
    out: dict[str, str] = {}
    for resource in ("namespaces", "clusterroles.rbac.authorization.k8s.io",
                     "clusterrolebindings.rbac.authorization.k8s.io"):
        for item in cluster.store.scan(resource, None):
            obj = item.object if isinstance(item, Event) else item
            out[f"{resource}/{obj['metadata']['name']}"] = obj["metadata"]["uid"]
    return out
