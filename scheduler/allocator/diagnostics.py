"""Why devices were ruled out: per claim and request, how many devices each cause excluded.

Beyond upstream (no real cluster reports this): it feeds `fakeapi explain pod`. Each device
is counted once per request, under the most fundamental cause seen for it, so a device of the
wrong kind that also happens to be in use counts as "class selector false", not "in use".
"""

from __future__ import annotations

import dataclasses

CLASS_SELECTOR = "class selector false"
REQUEST_SELECTOR = "request selector false"
NODE_MISMATCH = "node mismatch"
UNSUPPORTED = "feature disabled"
INCOMPLETE_POOL = "incomplete pool"
INVALID_POOL = "invalid pool"
TAINTED = "tainted"
IN_USE = "in use"
CAPACITY = "capacity"
COUNTERS = "counters exhausted"
CONSTRAINT = "constraint"

CAUSES = (CLASS_SELECTOR, REQUEST_SELECTOR, NODE_MISMATCH, UNSUPPORTED, INCOMPLETE_POOL,
          INVALID_POOL, TAINTED, COUNTERS, CAPACITY, CONSTRAINT, IN_USE)
"""Every cause, most fundamental first (the order that decides which one a device gets).
"In use" comes last: a device another branch of the search took is better explained by
whatever else ruled it out."""
_RANK = {c: i for i, c in enumerate(CAUSES)}


@dataclasses.dataclass
class RequestDiagnostics:
    """The devices ruled out for one request (or `req/sub` subrequest) of one claim."""

    claim: str
    request: str
    devices: dict[str, str] = dataclasses.field(default_factory=dict)
    """Device (`driver/pool/device`) → the cause that ruled it out."""
    needed: int | None = None
    """How many devices the request asks for (None: the attempt stopped before it knew)."""
    total: int = 0
    """The node's devices the request was looked at against (every driver's)."""

    def funnel(self) -> dict[str, int | None]:
        """The request's devices narrowed down: those its class matches, those its own
        selectors match too, those of them not in use, and how many it needs."""
        counts = self.counts()
        total = max(self.total, len(self.devices))
        by_class = total - counts.get(CLASS_SELECTOR, 0) - counts.get(UNSUPPORTED, 0)
        by_selectors = by_class - counts.get(REQUEST_SELECTOR, 0)
        return {"matchedByClass": by_class, "matchedBySelectors": by_selectors,
                "free": by_selectors - counts.get(IN_USE, 0), "needed": self.needed}

    def counts(self) -> dict[str, int]:
        """How many devices each cause ruled out, causes in CAUSES order."""
        out: dict[str, int] = {}
        for cause in sorted(self.devices.values(), key=_RANK.__getitem__):
            out[cause] = out.get(cause, 0) + 1
        return out


class Diagnostics:
    """Collects, during one `allocate` call (one node), why devices were not chosen."""

    def __init__(self) -> None:
        self._requests: dict[tuple[int, str], RequestDiagnostics] = {}
        self.claims: list[str] = []
        """The claims of the attempt, in order (`namespace/name`)."""
        self.steps = 0
        """The search's effort: how often its step ran (upstream counts the same, as
        NumAllocateOneInvocations)."""

    def request(self, claim_index: int, request: str) -> RequestDiagnostics:
        """The entry of one request (registered when the attempt looks at it, so a request
        for which no device was even considered is listed too, with no causes)."""
        key = (claim_index, request)
        entry = self._requests.get(key)
        if entry is None:
            name = self.claims[claim_index] if claim_index < len(self.claims) else ""
            entry = self._requests[key] = RequestDiagnostics(name, request)
        return entry

    def rule_out(self, claim_index: int, request: str, device: str, cause: str) -> None:
        """Record that `device` can't serve the request, keeping the most fundamental cause."""
        entry = self.request(claim_index, request)
        old = entry.devices.get(device)
        if old is None or _RANK[cause] < _RANK[old]:
            entry.devices[device] = cause

    def requests(self) -> list[RequestDiagnostics]:
        """Per claim and request, in the order claims and requests were searched."""
        return list(self._requests.values())

    def as_dict(self) -> list[dict[str, object]]:
        """The same as plain data: [{claim, request, causes: {cause: count}}]."""
        return [{"claim": r.claim, "request": r.request, "causes": r.counts()}
                for r in self._requests.values()]
