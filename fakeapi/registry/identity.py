"""Strategies of identities for out-of-process clients: `serviceaccounts/NAME/token`
(TokenRequest) and CertificateSigningRequests with their `approval` subresource."""

from __future__ import annotations

import hashlib

from fakeapi.auth.tokens import (
    API_AUDIENCES,
    DEFAULT_EXPIRATION,
    MAX_EXPIRATION,
    MIN_EXPIRATION,
    Binding,
    TokenIssuer,
)
from fakeapi.machinery.errors import Cause, bad_request, not_found
from fakeapi.machinery.field import not_supported, required
from fakeapi.registry.context import RequestContext
from fakeapi.registry.rest import (
    ActionStrategy,
    Obj,
    StatusStrategy,
    Strategy,
    SubresourceOps,
)

AUTHENTICATION = "authentication.k8s.io"


class TokenRequestStrategy(ActionStrategy):
    """Same as upstream's TokenREST: a token for the service account, for the API's audiences
    unless others are asked, valid for an hour by default (10 minutes to 2^32 s), optionally
    bound to a pod (which must exist) and so to its node."""

    body_kind = "TokenRequest"

    def validate(self, body: Obj) -> list[Cause]:
        """The expiration bounds and the kinds a token may be bound to."""
        spec = body.get("spec") or {}
        causes = []
        seconds = spec.get("expirationSeconds")
        if seconds is not None:
            if not isinstance(seconds, int) or seconds < MIN_EXPIRATION:
                causes.append(Cause("spec.expirationSeconds", f"Invalid value: {seconds}: may "
                                    "not specify a duration less than 10 minutes"))
            elif seconds > MAX_EXPIRATION:
                causes.append(Cause("spec.expirationSeconds", f"Invalid value: {seconds}: may "
                                    "not specify a duration larger than 2^32 seconds"))
        ref = spec.get("boundObjectRef")
        if isinstance(ref, dict) and ref.get("kind") not in ("Pod", "Secret", "Node"):
            causes.append(not_supported("spec.boundObjectRef.kind", ref.get("kind"),
                                        ["Pod", "Secret", "Node"]))
        return causes

    def act(self, current: Obj, body: Obj, ctx: RequestContext, ops: SubresourceOps
            ) -> tuple[int, Obj]:
        """Issue the token."""
        issuer = self.env.services.get("tokens")
        if not isinstance(issuer, TokenIssuer):
            raise bad_request("service account tokens are not served by this server")
        meta = current["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        spec = dict(body.get("spec") or {})
        spec["audiences"] = list(spec.get("audiences") or API_AUDIENCES)
        spec["expirationSeconds"] = int(spec.get("expirationSeconds") or DEFAULT_EXPIRATION)
        binding = Binding()
        ref = spec.get("boundObjectRef")
        if isinstance(ref, dict) and ref.get("kind") == "Pod":
            pod = self.env.lookup("pods", namespace, str(ref.get("name") or ""))
            if pod is None or ref.get("uid") and ref["uid"] != pod["metadata"].get("uid"):
                raise not_found("pods", "", str(ref.get("name") or ""))
            ref["uid"] = pod["metadata"]["uid"]
            ref.setdefault("apiVersion", "v1")
            binding = Binding(pod=pod["metadata"]["name"], pod_uid=pod["metadata"]["uid"],
                              node=(pod.get("spec") or {}).get("nodeName") or "")
        now = self.env.now()
        jti = hashlib.sha256(f"{meta['uid']}/{now.isoformat()}/{ctx.user}".encode()).hexdigest()
        token, expires = issuer.issue(namespace=namespace, name=name, uid=meta["uid"],
                                      audiences=spec["audiences"],
                                      expiration=spec["expirationSeconds"], jti=jti,
                                      binding=binding)
        return 201, {"kind": "TokenRequest", "apiVersion": f"{AUTHENTICATION}/v1",
                     "metadata": {"name": name, "namespace": namespace,
                                  "creationTimestamp": None},
                     "spec": spec, "status": {"token": token, "expirationTimestamp": expires}}


class CertificateSigningRequestStrategy(Strategy):
    """Same as upstream's CSR strategy: the requester's identity is recorded from the request
    (username, uid, groups, extra), status only changes through `/status` and `/approval`,
    and the request and signer are required and immutable."""

    def prepare_for_create(self, obj: Obj, ctx: RequestContext) -> None:
        """Status reset; who asked, from the request's identity."""
        super().prepare_for_create(obj, ctx)
        spec = obj.setdefault("spec", {})
        spec["username"] = ctx.user
        spec["groups"] = list(ctx.groups)
        if ctx.uid:
            spec["uid"] = ctx.uid
        else:
            spec.pop("uid", None)
        if ctx.extra:
            spec["extra"] = {k: list(v) for k, v in ctx.extra.items()}
        else:
            spec.pop("extra", None)

    def prepare_for_update(self, new: Obj, old: Obj, ctx: RequestContext) -> None:
        """The spec and status stay as stored."""
        super().prepare_for_update(new, old, ctx)
        new["spec"] = old.get("spec") or {}

    def validate(self, obj: Obj, ctx: RequestContext) -> list[Cause]:
        """request and signerName are required."""
        spec = obj.get("spec") or {}
        return [required(f"spec.{f}") for f in ("request", "signerName") if not spec.get(f)]


class CertificateApprovalStrategy(StatusStrategy):
    """`certificatesigningrequests/NAME/approval`: only the Approved/Denied conditions change;
    a request is never both, and a decision is never taken back."""

    def prepare_for_update(self, new: Obj, old: Obj, ctx: RequestContext) -> None:
        """Everything but status.conditions from the stored request."""
        conditions = (new.get("status") or {}).get("conditions") or []
        now = self.env.now().strftime("%Y-%m-%dT%H:%M:%SZ")
        for c in conditions:
            if isinstance(c, dict):
                for field, value in (("status", "True"), ("lastUpdateTime", now),
                                     ("lastTransitionTime", now)):
                    if not c.get(field):  # protobuf bodies carry unset times as null
                        c[field] = value
        super().prepare_for_update(new, old, ctx)
        new["status"] = {**(old.get("status") or {}), "conditions": conditions}

    def validate_update(self, new: Obj, old: Obj, ctx: RequestContext) -> list[Cause]:
        """Same as upstream: Approved and Denied exclude each other and stay once set."""
        types = {c.get("type") for c in (new.get("status") or {}).get("conditions") or []
                 if isinstance(c, dict)}
        old_types = {c.get("type") for c in (old.get("status") or {}).get("conditions") or []
                     if isinstance(c, dict)}
        causes = []
        if {"Approved", "Denied"} <= types:
            causes.append(Cause("status.conditions", "Invalid value: []certificates."
                                "CertificateSigningRequestCondition: Approved and Denied "
                                "conditions are mutually exclusive"))
        for kept in ("Approved", "Denied"):
            if kept in old_types and kept not in types:
                causes.append(Cause("status.conditions", f"Forbidden: updates may not remove "
                                    f"a condition of type \"{kept}\"", "FieldValueForbidden"))
        return causes
