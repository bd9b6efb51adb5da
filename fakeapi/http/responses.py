"""What the HTTP handlers answer with: JSON bodies, and every failure as a `Status` object."""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from fakeapi.machinery.errors import ApiError, Cause
from fakeapi.machinery.jsonio import dumps

JSON_TYPE = "application/json"
YAML_TYPE = "application/yaml"


def json_response(body: Any, status: int = 200,
                  headers: dict[str, str] | None = None) -> web.Response:
    """A JSON answer of a value."""
    return web.Response(body=dumps(body), status=status, content_type=JSON_TYPE,
                        headers=headers)


def raw_response(body: bytes, status: int = 200,
                 headers: dict[str, str] | None = None) -> web.Response:
    """A JSON answer already encoded (a stored object's bytes)."""
    return web.Response(body=body, status=status, content_type=JSON_TYPE, headers=headers)


def error_response(error: ApiError) -> web.Response:
    """The Status object of an error, with its HTTP code, as upstream's encoder writes it (a
    newline at the end)."""
    headers = {"Retry-After": str(error.retry_after)} if error.retry_after else None
    return web.Response(body=dumps(error.to_status()) + b"\n", status=error.code,
                        content_type=JSON_TYPE, headers=headers)


def not_found_path() -> ApiError:
    """404 for a path that names nothing served (upstream's generic NotFound)."""
    return ApiError(404, "NotFound", "the server could not find the requested resource",
                    causes=[Cause("", "404 page not found", "UnexpectedServerResponse")])


def created_status() -> dict[str, Any]:
    """The success Status a POST to a subresource answers with (upstream's 201)."""
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "code": 201}


def encoded_response(body: bytes, media: str, status: int = 200) -> web.Response:
    """An answer of JSON `body` written as `media`: as it is (JSON), as YAML the way
    sigs.k8s.io/yaml writes it (keys sorted, block style), or protobuf bytes as they are."""
    if media == YAML_TYPE:
        import yaml  # loaded only when a client asks for YAML

        text = yaml.dump(orjson.loads(body), Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
                         default_flow_style=False, sort_keys=True, allow_unicode=True,
                         width=1 << 30)
        return web.Response(body=text.encode(), status=status, content_type=YAML_TYPE)
    return web.Response(body=body, status=status, content_type=media)
