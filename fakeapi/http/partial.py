"""`PartialObjectMetadata` responses: what an Accept header asks for, and the encodings.

Go metadata informers (client-go's `metadata` client) send
`Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1` for lists and
`as=PartialObjectMetadata` for gets and watches, and read only `metadata` back. Same as
upstream's handlers, the first media range we can serve decides: the object itself, a Table
(`fakeapi.http.tables`), or partial metadata; a list form asked of one object (or the reverse) is
406 NotAcceptable.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from fakeapi.http.tables import META_GROUP, TABLE_VERSIONS, first_servable
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.jsonio import dumps

PARTIAL = "PartialObjectMetadata"
PARTIAL_LIST = "PartialObjectMetadataList"
VERSIONS = ("v1", "v1beta1")


@dataclasses.dataclass(frozen=True)
class Form:
    """The response form a request negotiated: `as_kind` "" (the object or list itself),
    "Table", PARTIAL or PARTIAL_LIST, in meta.k8s.io `version`."""

    as_kind: str = ""
    version: str = ""

    @property
    def partial(self) -> bool:
        """Whether only metadata is sent (PartialObjectMetadata or its list)."""
        return self.as_kind in (PARTIAL, PARTIAL_LIST)

    @property
    def api_version(self) -> str:
        """`meta.k8s.io/<version>`."""
        return f"{META_GROUP}/{self.version}"


OBJECT = Form()


@functools.lru_cache(maxsize=256)  # clients send the same few Accept headers
def negotiate(accept: str | None) -> Form:
    """The first JSON media range of `accept` (by q, then order) that can be served."""
    found = first_servable(accept, {"Table": TABLE_VERSIONS, PARTIAL: VERSIONS,
                                    PARTIAL_LIST: VERSIONS})
    return Form(*found) if found is not None else OBJECT


def not_acceptable(form: Form, kind: str, *, is_list: bool) -> ApiError:
    """406 for a partial form that doesn't fit the answer (upstream's messages)."""
    if is_list:
        return ApiError(406, "NotAcceptable", f"you requested {form.as_kind}, but the "
                        f"requested object is a list (*v1.{kind}List)")
    return ApiError(406, "NotAcceptable", f"you requested {form.as_kind}, but the requested "
                    f"object is not a list (*v1.{kind})")


def check(form: Form, kind: str, *, is_list: bool) -> None:
    """Raise 406 when a list form is asked of one object, or one object's form of a list."""
    if form.partial and (form.as_kind == PARTIAL_LIST) != is_list:
        raise not_acceptable(form, kind, is_list=is_list)


def partial_object(obj: dict[str, Any], form: Form) -> dict[str, Any]:
    """The PartialObjectMetadata of one object."""
    return {"kind": PARTIAL, "apiVersion": form.api_version, "metadata": obj.get("metadata", {})}


def encode_object(obj: dict[str, Any], form: Form) -> bytes:
    """JSON of one object's PartialObjectMetadata."""
    return dumps(partial_object(obj, form))


def encode_list(objects: list[dict[str, Any]], meta: dict[str, Any], form: Form) -> bytes:
    """JSON of a PartialObjectMetadataList with the list's `meta` (resourceVersion, ...)."""
    return dumps({"kind": PARTIAL_LIST, "apiVersion": form.api_version,
                         "metadata": meta, "items": [partial_object(o, form) for o in objects]})
