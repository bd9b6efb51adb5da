"""Compressed answers and compressed request bodies, as kube-apiserver's handlers treat them.

An answer is gzipped (level 1, Go's header with no mtime) exactly when the request's
`Accept-Encoding` names `gzip` and the body is above upstream's threshold
(`responsewriters.defaultGzipThresholdBytes`, 128 KiB), with `Content-Encoding: gzip` and
`Vary: Accept-Encoding`; a smaller body, or one asked without gzip, is sent as it is. A request
body's `Content-Encoding` is not undone: kube-apiserver reads the bytes as they come, so a
gzipped (or corrupt gzipped) body is an undecodable body, a 400 from the decoder.
"""

from __future__ import annotations

import gzip
from typing import Any

from aiohttp import web

GZIP_THRESHOLD = 128 * 1024
"""Bodies up to this many bytes are never compressed (upstream's threshold)."""

SERVER_SETTINGS: dict[str, Any] = {"auto_decompress": False}
"""The aiohttp server settings every listener of the API passes (request bodies are read
as sent)."""


def wants_gzip(accept_encoding: str) -> bool:
    """Whether an Accept-Encoding header names gzip (a token of its own, as upstream reads it)."""
    return any(token.strip() == "gzip" for token in accept_encoding.split(","))


def compress(request: web.BaseRequest, response: web.StreamResponse) -> web.StreamResponse:
    """The answer gzipped when the request asks for it and the body is above the threshold."""
    if (not isinstance(response, web.Response) or response.prepared
            or "Content-Encoding" in response.headers):
        return response
    body = response.body
    if not isinstance(body, bytes) or len(body) <= GZIP_THRESHOLD:
        return response
    if not wants_gzip(request.headers.get("Accept-Encoding", "")):
        return response
    response.body = gzip.compress(body, compresslevel=1, mtime=0)
    response.headers["Content-Encoding"] = "gzip"
    response.headers.add("Vary", "Accept-Encoding")
    return response
