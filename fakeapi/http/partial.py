"""What an Accept header asks for (the media type and the form of the answer), and the
`PartialObjectMetadata` encodings.

Same as upstream's `negotiation.NegotiateOutputMediaType`: media ranges are tried by q, then
order, each against the served types in upstream's order (JSON, YAML, protobuf), and the first
that can be served decides: the object itself, a Table (`fakeapi.http.tables`, JSON or YAML)
or partial metadata (`as=PartialObjectMetadata[List]`, any of the three). Go metadata informers
send `as=PartialObjectMetadataList;g=meta.k8s.io;v=v1` for lists and `as=PartialObjectMetadata`
for gets and watches. Nothing servable is 406 NotAcceptable with upstream's list of types; a
list form asked of one object (or the reverse) is 406 too. Protobuf is chosen only when no
JSON or YAML range is acceptable as well (kubectl's typed clients send protobuf first, then
JSON: they get JSON, as before), and only for kinds the protobuf tables cover.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from fakeapi.http.protobuf import CONTENT_TYPE as PROTOBUF
from fakeapi.http.tables import META_GROUP, TABLE_VERSIONS, media_ranges
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.jsonio import dumps

PARTIAL = "PartialObjectMetadata"
PARTIAL_LIST = "PartialObjectMetadataList"
VERSIONS = ("v1", "v1beta1")
JSON = "application/json"
YAML = "application/yaml"
SERVED = (JSON, YAML, PROTOBUF)
"""The media types a response is written in, in upstream's order (its 406 lists them)."""
STREAMED = (JSON,)
"""The media types a watch is written in (upstream streams protobuf too; not here yet)."""


@dataclasses.dataclass(frozen=True)
class Form:
    """The response form a request negotiated: `as_kind` "" (the object or list itself),
    "Table", PARTIAL or PARTIAL_LIST, in meta.k8s.io `version`, written as `media`."""

    as_kind: str = ""
    version: str = ""
    media: str = JSON

    @property
    def partial(self) -> bool:
        """Whether only metadata is sent (PartialObjectMetadata or its list)."""
        return self.as_kind in (PARTIAL, PARTIAL_LIST)

    @property
    def api_version(self) -> str:
        """`meta.k8s.io/<version>`."""
        return f"{META_GROUP}/{self.version}"


OBJECT = Form()


def _matches(media: str, served: str) -> bool:
    kind, _, sub = media.partition("/")
    return media == served or media == "*/*" or sub == "*" and served.startswith(kind + "/")


def _form(params: dict[str, str], served: str, protobuf: bool) -> Form | None:
    """The form one media range asks of one served type (None: not servable so)."""
    as_kind = params.get("as")
    if as_kind is None:
        return Form(media=served) if served != PROTOBUF or protobuf else None
    version = params.get("v", "")
    if params.get("g") != META_GROUP:
        return None
    if as_kind == "Table":
        return Form(as_kind, version, served) if (
            version in TABLE_VERSIONS and served != PROTOBUF) else None
    if as_kind in (PARTIAL, PARTIAL_LIST) and version in VERSIONS:
        return Form(as_kind, version, served)
    return None


def _first(accept: str, served: tuple[str, ...], protobuf: bool) -> Form | None:
    for media, params in media_ranges(accept):
        for candidate in served:
            if _matches(media, candidate):
                form = _form(params, candidate, protobuf)
                if form is not None:
                    return form
    return None


@functools.lru_cache(maxsize=512)  # clients send the same few Accept headers
def negotiate(accept: str | None, *, protobuf: bool = False, watch: bool = False) -> Form:
    """The form of the first servable media range of `accept` (none: the object as JSON).
    `protobuf`: the kind can be written as protobuf; `watch`: a stream is asked for. Raises
    406 NotAcceptable when no range can be served."""
    if not accept:
        return OBJECT
    served = STREAMED if watch else SERVED
    form = _first(accept, served, protobuf)
    if form is not None and form.media == PROTOBUF:
        form = _first(accept, (JSON, YAML), protobuf) or form
    if form is None:
        listed = [f"{m};stream=watch" for m in served] if watch else served
        raise ApiError(406, "NotAcceptable",
                       f"only the following media types are accepted: {', '.join(listed)}")
    return form


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


def partial_list(objects: list[dict[str, Any]], meta: dict[str, Any], form: Form
                 ) -> dict[str, Any]:
    """A PartialObjectMetadataList with the list's `meta` (resourceVersion, ...)."""
    return {"kind": PARTIAL_LIST, "apiVersion": form.api_version,
            "metadata": meta, "items": [partial_object(o, form) for o in objects]}
