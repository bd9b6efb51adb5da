"""`GET /debug/fakeapi/log`: the server's recording, listed read-only as JSON lines.

One line per event the server still retains (its in-memory window, `--log-retention-bytes`;
`fakeapi log show DIR` reads the whole file), as `fakeapi.registry.loglisting` lists it:
query `kind`, `namespace`, `name`, `actor`, `since`, `until` (a revision or RFC 3339 time),
`diff=true` (each entry's field-level diff instead of only the object), `object=false` (no
object: what a table needs) and `watch=true` (after the listing, every new event as it
becomes visible, until `until` or the client goes). Authorized by RBAC like every path
(`get` on the non-resource URL `/debug/fakeapi/log`), so only users granted it (the admin)
may read it; a bad query is a 400 Status.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from aiohttp import web

from fakeapi.cluster import Cluster
from fakeapi.http.responses import error_response
from fakeapi.machinery.errors import ApiError
from fakeapi.registry import loglisting
from fakeapi.storage.log import ANY, Event

PATH = "/debug/fakeapi/log"
FOLLOW_CHECK = 5.0
"""Real seconds a follower waits for the next event before it looks whether its client is
still there."""
_TRUE = ("true", "1")
CHUNK = 2_000
"""Events encoded per write, so a long listing doesn't hold the event loop."""


def install(app: web.Application, cluster: Cluster) -> None:
    """Serve PATH for `cluster` on `app` (followers are ended when the app shuts down)."""
    followers: set[asyncio.Task[Any]] = set()

    async def listing(request: web.Request) -> web.StreamResponse:
        task = asyncio.current_task()
        assert task is not None
        followers.add(task)
        try:
            return await answer(cluster, request)
        finally:
            followers.discard(task)

    async def end_followers(app: web.Application) -> None:
        for task in tuple(followers):
            task.cancel()

    app.router.add_get(PATH, listing)
    app.on_shutdown.append(end_followers)


async def answer(cluster: Cluster, request: web.Request) -> web.StreamResponse:
    """The listing (and, with watch=true, the events after it) for one request."""
    query = request.query
    try:
        filter = loglisting.filter_from(query.get, lambda: cluster.kinds)
        watch = query.get("watch") in _TRUE  # a follower may name revisions still to come
        loglisting.check_bounds(filter, 2**62 if watch else cluster.log.visible)
    except loglisting.ListingError as e:
        return error_response(ApiError(400, "BadRequest", str(e)))
    with_diff = query.get("diff") in _TRUE
    with_object = query.get("object", "true") in _TRUE
    response = web.StreamResponse(headers={"Content-Type": "application/json"})
    await response.prepare(request)
    cursor = max(filter.first_revision() - 1, cluster.log.oldest_revision)
    while True:
        events = _visible_after(cluster, cursor)[:CHUNK]
        if events:
            cursor = events[-1].revision
            lines = [orjson.dumps(e) + b"\n" for e in loglisting.select(
                events, filter, with_object=with_object, with_diff=with_diff)]
            if lines:
                await response.write(b"".join(lines))
            await asyncio.sleep(0)  # the loop serves others between chunks
            if filter.past_end(events[-1]):
                break
        elif not watch or not await _next_event(cluster, request):
            break
    await response.write_eof()
    return response


def _visible_after(cluster: Cluster, revision: int) -> list[Event]:
    """The visible retained events after `revision` (from the oldest retained one when it
    was compacted meanwhile)."""
    log = cluster.log
    events = log.since(max(revision, log.oldest_revision))
    end = log.visible - (events[0].revision if events else 0) + 1
    return events[:max(end, 0)] if events else []


async def _next_event(cluster: Cluster, request: web.Request) -> bool:
    """Wait for the next visible event; False when the client has gone or the server stops."""
    while True:
        waiting = asyncio.ensure_future(cluster.log.wait(ANY, None, clock=cluster.clock))
        done, _ = await asyncio.wait({waiting}, timeout=FOLLOW_CHECK)
        if done:
            return request.transport is not None and not request.transport.is_closing()
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        if request.transport is None or request.transport.is_closing():
            return False
