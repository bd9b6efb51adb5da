"""The fuzz suite: seeded mutations of valid DRA objects, a fixed number of them, sent to a
real server process through POST, PUT, every PATCH type, server-side apply and /status. The
promise checked: no 5xx and no dropped connection, whatever arrives; every refusal is a
Status.

`FAKEAPI_FUZZ_CASES` (default 24,000: about the 20 s the suite ran for on the 2-core box,
which sent 1,200-1,500 requests a second when otherwise idle) bounds the run and
`FAKEAPI_FUZZ_SEED` (default 7) picks the sequence, so a seed and a count name the same
requests on any machine, however fast. A failure lists the requests that broke the promise in
the regression-file form: add them to tests/data/fuzz/regressions.yaml, which
test_regressions replays.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import os
import random
from collections.abc import Iterator
from typing import Any

import aiohttp
import orjson
import pytest
import yaml

from fakeapi.cli.serve import parse_feature_gates
from fakeapi.machinery.features import FeatureGates
from fakeapi.registry.kinds import served_kinds
from fakeapi.registry.rest import Kind
from tests.support.mutate import APPLY, JSON, MERGE, STRATEGIC, YAML, Mutator, Request
from tests.support.paths import ROOT
from tests.support.processes import ServerProcess, start_server
from tests.support.seeds import SEED_GATES

SEEDS = ROOT / "tests" / "data" / "seeds"
REGRESSIONS = ROOT / "tests" / "data" / "fuzz" / "regressions.yaml"
KINDS = served_kinds(FeatureGates(parse_feature_gates(SEED_GATES)))
DRA_GROUPS = ("resource.k8s.io", "scheduling.k8s.io")
BASE_NAME = "fuzz-base"
EXTRA_BASES: list[dict[str, Any]] = [
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
     "metadata": {"name": "taint"}, "spec": {"deviceSelector": {"driver": "gpu.example.com"},
                                             "taint": {"key": "k", "effect": "NoSchedule"}}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "rc"},
     "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
         "deviceClassName": "gpu.example.com"}}], "config": [{"opaque": {
             "driver": "gpu.example.com", "parameters": {"a": {"b": [1, 2, {"c": "d"}]}}}}]}}},
]


def dra_seeds() -> list[dict[str, Any]]:
    """Valid DRA objects: the seed examples and a few more."""
    found = []
    for path in sorted(SEEDS.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("apiVersion", "").split("/")[0] in DRA_GROUPS:
                found.append(doc)
    return found + EXTRA_BASES


def kind_of(obj: dict[str, Any]) -> Kind:
    group, _, version = obj["apiVersion"].rpartition("/")
    for kind in KINDS.kinds:
        if (kind.group, kind.version, kind.kind) == (group, version, obj["kind"]):
            return kind
    raise AssertionError(f"not served: {obj['apiVersion']} {obj['kind']}")


def collection(kind: Kind) -> str:
    prefix = f"/apis/{kind.group}/{kind.version}" if kind.group else f"/api/{kind.version}"
    return f"{prefix}/namespaces/default/{kind.plural}" if kind.namespaced else \
        f"{prefix}/{kind.plural}"


@dataclasses.dataclass
class Base:
    """One stored object the fuzzer updates, patches and writes the status of."""

    kind: Kind
    obj: dict[str, Any]

    @property
    def path(self) -> str:
        return f"{collection(self.kind)}/{self.obj['metadata']['name']}"


def requests(rng: random.Random, bases: list[Base]) -> Iterator[Request]:
    """An endless, seeded stream of hostile requests against `bases`."""
    mut = Mutator(rng)
    n = 0
    while True:
        n += 1
        base = rng.choice(bases)
        op = rng.randrange(8)
        if op == 0:  # create a mutated copy
            obj = mut.mutate(base.obj)
            if isinstance(obj, dict) and isinstance(obj.get("metadata"), dict):
                obj["metadata"].pop("resourceVersion", None)
                if rng.random() < 0.9:
                    obj["metadata"]["name"] = f"fuzz-{n}"
            yield Request("POST", collection(base.kind), rng.choice([JSON, JSON, YAML]),
                          mut.encode(obj, as_yaml=rng.random() < 0.2))
        elif op in (1, 2):  # update (the object or its status)
            sub = "/status" if op == 2 and base.kind.subresources else ""
            yield Request("PUT", base.path + sub, JSON, mut.encode(mut.mutate(base.obj)))
        elif op in (3, 4):  # merge or strategic patch of a mutated part
            mutated = mut.mutate(base.obj)
            part = {k: v for k, v in mutated.items()
                    if k in ("metadata", "spec", "status") and rng.random() < 0.6} \
                if isinstance(mutated, dict) else mutated
            sub = "/status" if rng.random() < 0.3 and base.kind.subresources else ""
            yield Request("PATCH", base.path + sub, MERGE if op == 3 else STRATEGIC,
                          mut.encode(part if rng.random() < 0.9 else mut.value()))
        elif op == 5:
            yield Request("PATCH", base.path, "application/json-patch+json",
                          mut.encode(mut.json_patch(base.obj)))
        elif op == 6:  # server-side apply
            obj = mut.mutate(base.obj, rounds=rng.randrange(3))
            force = "&force=true" if rng.random() < 0.5 else ""
            sub = "/status" if rng.random() < 0.2 and base.kind.subresources else ""
            yield Request("PATCH", f"{base.path}{sub}?fieldManager=fuzz{force}", APPLY,
                          mut.encode(obj, as_yaml=rng.random() < 0.5))
        else:  # any body to any write endpoint, with any content type
            yield Request(rng.choice(["POST", "PUT", "PATCH"]),
                          rng.choice([base.path, collection(base.kind), base.path + "/status"]),
                          rng.choice([JSON, YAML, MERGE, STRATEGIC, APPLY, "text/plain", ""]),
                          mut.encode(mut.value(4)))


@dataclasses.dataclass
class Outcome:
    """How the server answered a run."""

    sent: int = 0
    codes: dict[int, int] = dataclasses.field(default_factory=dict)
    broken: list[tuple[Request, str]] = dataclasses.field(default_factory=list)


async def send(session: aiohttp.ClientSession, url: str, req: Request) -> str:
    """'' when the server kept its promise; else what went wrong."""
    headers = {"Content-Type": req.ctype} if req.ctype else {}
    try:
        async with session.request(req.method, url + req.path, data=req.body,
                                   headers=headers) as resp:
            body = await resp.read()
            if resp.status >= 500:
                return f"{resp.status}: {body[:300]!r}"
            if resp.status >= 400:
                status = orjson.loads(body)
                if status.get("kind") != "Status" or status.get("code") != resp.status:
                    return f"{resp.status} without its Status: {body[:200]!r}"
            return ""
    except (TimeoutError, aiohttp.ClientError, ConnectionError) as e:
        return f"connection dropped: {type(e).__name__}: {e}"
    except orjson.JSONDecodeError:
        return "a refusal whose body is not JSON"


async def seed_bases(session: aiohttp.ClientSession, url: str) -> list[Base]:
    bases = []
    for obj in dra_seeds():
        kind = kind_of(obj)
        async with session.post(url + collection(kind), json=obj) as resp:
            stored = await resp.json() if resp.status == 201 else None
        if stored is None:  # there from an earlier test on this server
            path = f"{collection(kind)}/{obj['metadata']['name']}"
            async with session.get(url + path) as resp:
                stored = await resp.json() if resp.status == 200 else None
        if stored is not None:
            bases.append(Base(kind, stored))
    assert len(bases) >= 8, "the seed objects should be accepted"
    return bases


CONCURRENCY = 8
"""Requests in flight at once."""


async def fuzz(url: str, seed: int, cases: int) -> Outcome:
    """Send the first `cases` requests of seed `seed`'s sequence, `CONCURRENCY` at a time."""
    outcome = Outcome()
    rng = random.Random(seed)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as session:
        bases = await seed_bases(session, url)
        stream = requests(rng, bases)
        while outcome.sent < cases:
            batch = [next(stream) for _ in range(min(CONCURRENCY, cases - outcome.sent))]
            results = await asyncio.gather(*(send(session, url, r) for r in batch))
            for req, problem in zip(batch, results, strict=True):
                outcome.sent += 1
                if problem:
                    outcome.broken.append((req, problem))
    return outcome


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    srv = start_server(tmp_path_factory.mktemp("fuzz"), "--http", "--feature-gates",
                       SEED_GATES, "--components=-garbage-collector,-namespace-controller")
    yield srv
    assert srv.stop() == 0


def test_fuzzed_dra_writes_never_get_a_5xx_or_a_dropped_connection(
        server: ServerProcess) -> None:
    seed = int(os.environ.get("FAKEAPI_FUZZ_SEED", "7"))
    count = int(os.environ.get("FAKEAPI_FUZZ_CASES", "24000"))
    outcome = asyncio.run(fuzz(server.url, seed, count))
    assert outcome.sent == count, f"only {outcome.sent} of {count} requests sent"
    cases = [req.to_case(f"seed{seed}-{i}") for i, (req, _) in enumerate(outcome.broken)]
    assert not outcome.broken, (
        f"{len(outcome.broken)} of {outcome.sent} requests broke the promise; first: "
        f"{outcome.broken[0][1]}\nregression cases:\n"
        + yaml.safe_dump(cases[:5], sort_keys=False))
    assert server.proc.poll() is None, "the server died"


def regression_cases() -> list[dict[str, str]]:
    return yaml.safe_load(REGRESSIONS.read_text())


@pytest.mark.parametrize("case", regression_cases(), ids=lambda c: c["id"])
def test_regressions(server: ServerProcess, case: dict[str, str]) -> None:
    """Every request that once broke the promise, replayed against the seeded objects."""
    body = base64.b64decode(case["body_b64"]) if "body_b64" in case else case["body"].encode()
    req = Request(case["method"], case["path"], case["ctype"], body)

    async def replay() -> str:
        async with aiohttp.ClientSession() as session:
            await seed_bases(session, server.url)
            return await send(session, server.url, req)

    assert asyncio.run(replay()) == ""
