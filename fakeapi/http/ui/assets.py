"""`GET /ui/...`: the web view's static files, the same for every user.

The files hold no cluster data, so they are served without authorization (a browser's first
request carries no credentials); everything the page shows comes from ordinary API calls it
makes with the user's bearer token (or client certificate), which RBAC checks as for any other
client. Only the files named in `ASSETS` are served: a request for any other path under `/ui/`
(`..` included) is the 404 Status, and nothing is read from a path a request names.
"""

from __future__ import annotations

import functools
import importlib.resources

from aiohttp import web

from fakeapi.http.responses import error_response, not_found_path

PREFIX = "/ui"
ASSETS = {
    "": ("index.html", "text/html; charset=utf-8"),
    "index.html": ("index.html", "text/html; charset=utf-8"),
    "app.js": ("app.js", "text/javascript; charset=utf-8"),
    "api.js": ("api.js", "text/javascript; charset=utf-8"),
    "view.js": ("view.js", "text/javascript; charset=utf-8"),
    "watch.js": ("watch.js", "text/javascript; charset=utf-8"),
    "grid.js": ("grid.js", "text/javascript; charset=utf-8"),
    "panels.js": ("panels.js", "text/javascript; charset=utf-8"),
    "timeline.js": ("timeline.js", "text/javascript; charset=utf-8"),
    "ui.css": ("ui.css", "text/css; charset=utf-8"),
}
"""What `/ui/NAME` serves: (file in `static/`, content type)."""
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
"""No inline script or style, no other origin, no framing: the page's scripts (ES modules from
`'self'`) build its DOM from text, and this makes an injected `<script>` inert even if it got in."""
HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


def is_asset_path(path: str) -> bool:
    """Whether `path` is the view's (served without authorization, see the module)."""
    return path == PREFIX or path.startswith(PREFIX + "/")


@functools.cache
def _read(file: str) -> bytes:
    return (importlib.resources.files(__package__) / "static" / file).read_bytes()


async def _redirect(request: web.Request) -> web.StreamResponse:
    """`/ui` → `/ui/`, so the page's relative asset paths resolve under it."""
    return web.Response(status=301, headers={**HEADERS, "Location": PREFIX + "/"})


async def _asset(request: web.Request) -> web.StreamResponse:
    found = ASSETS.get(request.match_info["name"])
    if found is None:
        return error_response(not_found_path())
    file, content_type = found
    return web.Response(body=_read(file), headers={**HEADERS, "Content-Type": content_type})


def install(app: web.Application) -> None:
    """Serve the view's files on `app`."""
    app.router.add_get(PREFIX, _redirect)
    app.router.add_get(PREFIX + "/{name:.*}", _asset)
