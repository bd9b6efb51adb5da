"""The text of a health endpoint (`/livez`, `/readyz`, `/healthz`) as kube-apiserver's
healthz package writes it: `ok` when every check passed and no `verbose` was asked for, else
one `[+]name ok` or `[-]name failed: reason` line per check and `<endpoint> check passed` or
`failed`, with 500 when one failed. `fakeapi serve` and `fakeapi emulate` answer with it."""

from __future__ import annotations

from collections.abc import Iterable

Check = tuple[str, bool, str]
"""One named health check result: (name, ok, reason)."""


def render(endpoint: str, checks: Iterable[Check], *, verbose: bool,
           only: str | None = None) -> tuple[int, str]:
    """(status, body) of `endpoint` for these checks (verbose when asked or one failed), or
    of the one check named `only` (`/readyz/<check>`: 404 when there is none)."""
    found = [c for c in checks if not only or c[0] == only]
    if only and not found:
        return 404, "404 page not found\n"
    failed = any(not ok for _, ok, _ in found)
    if not (verbose or failed):
        return 200, "ok"
    lines = [f"[+]{name} ok" if ok else f"[-]{name} failed: {reason or 'reason withheld'}"
             for name, ok, reason in found]
    lines.append(f"{endpoint} check {'failed' if failed else 'passed'}")
    return (500 if failed else 200), "\n".join(lines) + "\n"
