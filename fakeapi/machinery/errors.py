"""Errors are API objects: every failure a client sees is a metav1 `Status` with upstream shape."""

from __future__ import annotations

import dataclasses
from typing import Any

from fakeapi.machinery.ids import UID

OPTIMISTIC_LOCK_MSG = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


@dataclasses.dataclass(frozen=True)
class Cause:
    """One `details.causes[]` entry: a field path, a reason and a message."""

    field: str
    message: str
    reason: str = "FieldValueInvalid"

    def to_dict(self) -> dict[str, str]:
        """Wire form of the cause."""
        d = {"reason": self.reason, "message": self.message} if self.reason else {
            "message": self.message}
        if self.field:
            d["field"] = self.field
        return d


class ApiError(Exception):
    """An error the API returns as a `Status` object with an HTTP code and reason."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        *,
        name: str | None = None,
        group: str | None = None,
        kind: str | None = None,
        uid: UID | None = None,
        causes: list[Cause] | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.name = name
        self.group = group
        self.kind = kind
        self.uid = uid
        self.causes = causes or []
        self.retry_after = retry_after

    always_details = False
    """Whether the Status carries `details` even when it has nothing to say (`{}`), as
    upstream's errors whose details are always set (Forbidden)."""

    def to_status(self) -> dict[str, Any]:
        """The `Status` object for this error, with upstream's fields in upstream's order
        (kind, apiVersion, metadata, status, message, reason, details, code) and its empty
        fields left out (Go's omitempty: no `details.name: ""`)."""
        status: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                  "status": "Failure"}
        if self.message:
            status["message"] = self.message
        if self.reason:
            status["reason"] = self.reason
        details: dict[str, Any] = {}
        if self.name:
            details["name"] = self.name
        if self.group:
            details["group"] = self.group
        if self.kind:
            details["kind"] = self.kind
        if self.uid:
            details["uid"] = self.uid
        if self.causes:
            details["causes"] = [c.to_dict() for c in self.causes]
        if self.retry_after:
            details["retryAfterSeconds"] = self.retry_after
        if details or self.always_details:
            status["details"] = details
        if self.code:
            status["code"] = self.code
        return status

    @classmethod
    def from_status(cls, status: dict[str, Any], code: int) -> ApiError:
        """The error a `Status` answer describes (`to_status` read back; a client of another
        server sees its 404 or 409 as this server's own). `code` is the HTTP status, used
        when the Status has none."""
        details = status.get("details") or {}
        causes = [Cause(field=c.get("field", ""), message=c.get("message", ""),
                        reason=c.get("reason", "")) for c in details.get("causes") or ()]
        return cls(int(status.get("code") or code), str(status.get("reason") or ""),
                   str(status.get("message") or ""), name=details.get("name"),
                   group=details.get("group"), kind=details.get("kind"),
                   uid=details.get("uid"), causes=causes,
                   retry_after=details.get("retryAfterSeconds"))


def qualified(plural: str, group: str) -> str:
    """`plural.group` as upstream messages print a resource (`pods` for core)."""
    return f"{plural}.{group}" if group else plural


def not_found(plural: str, group: str, name: str) -> ApiError:
    """404 NotFound: `resourceclaims.resource.k8s.io "x" not found`."""
    return ApiError(404, "NotFound", f'{qualified(plural, group)} "{name}" not found',
                    name=name, group=group, kind=plural)


def already_exists(plural: str, group: str, name: str) -> ApiError:
    """409 AlreadyExists."""
    return ApiError(409, "AlreadyExists", f'{qualified(plural, group)} "{name}" already exists',
                    name=name, group=group, kind=plural)


def conflict(plural: str, group: str, name: str, why: str = OPTIMISTIC_LOCK_MSG) -> ApiError:
    """409 Conflict: `Operation cannot be fulfilled on pods "x": <why>`."""
    return ApiError(409, "Conflict",
                    f'Operation cannot be fulfilled on {qualified(plural, group)} "{name}": {why}',
                    name=name, group=group, kind=plural)


def invalid(kind: str, group: str, name: str, causes: list[Cause]) -> ApiError:
    """422 Invalid: `Pod "x" is invalid: [a: Invalid value ..., b: Required value]`."""
    parts = [f"{c.field}: {c.message}" if c.field else c.message for c in causes]
    joined = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    return ApiError(422, "Invalid", f'{kind}.{group} "{name}" is invalid: {joined}'
                    if group else f'{kind} "{name}" is invalid: {joined}',
                    name=name, group=group, kind=kind, causes=causes)


def bad_request(message: str, causes: list[Cause] | None = None) -> ApiError:
    """400 BadRequest."""
    return ApiError(400, "BadRequest", message, causes=causes)


def forbidden(message: str, **kw: Any) -> ApiError:
    """403 Forbidden."""
    return ApiError(403, "Forbidden", message, **kw)


def expired(message: str) -> ApiError:
    """410 Expired (a compacted revision or continue token)."""
    return ApiError(410, "Expired", message)


def method_not_allowed(message: str = "the server does not allow this method on the requested resource") -> ApiError:  # noqa: E501
    """405 MethodNotAllowed."""
    return ApiError(405, "MethodNotAllowed", message)


def unsupported_media_type(content_type: str) -> ApiError:
    """415 UnsupportedMediaType."""
    return ApiError(415, "UnsupportedMediaType",
                    'the body of the request was in an unknown format - accepted media types '
                    'include: application/json, application/yaml, '
                    f'application/vnd.kubernetes.protobuf (got "{content_type}")')


def too_large() -> ApiError:
    """413 RequestEntityTooLarge for bodies over the 3 MiB limit."""
    return ApiError(413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728")


def field_invalid(field: str, value: Any, detail: str) -> Cause:
    """`field: Invalid value: <value>: <detail>`."""
    return Cause(field, f"Invalid value: {_show(value)}: {detail}", "FieldValueInvalid")


def field_required(field: str, detail: str = "") -> Cause:
    """`field: Required value`."""
    return Cause(field, "Required value" + (f": {detail}" if detail else ""), "FieldValueRequired")


def _show(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return '"object"' if isinstance(value, dict) else '"array"'
    return str(value)
