"""What a kind is to the registry: its row in the kind table (`Kind`) and the interfaces the
behaviour a row names implements, in the shape of kube-apiserver's
k8s.io/apiserver/pkg/registry/rest.

A row names the strategy class of its objects and of each subresource; the generic store
(`fakeapi.registry.generic`) builds one of each per served kind and runs their hooks in
upstream's order. A strategy holds only the rules of its kind; CRUD, concurrency and metadata
live in the generic store. Checks that need the authorizer (granular claim status, RBAC
escalation) live in their kind's strategy too, so every write path of any Registry runs them.

The row type and the interfaces live together because each names the other (a row names its
strategy classes, a strategy is built for its row); the table of rows (`fakeapi.registry.kinds`)
sits above the strategies that implement these interfaces.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from fakeapi.auth.authn import UserInfo
from fakeapi.auth.rbac import Authorizer
from fakeapi.machinery import names, selectors
from fakeapi.machinery.clock import Clock, RealClock
from fakeapi.machinery.decode import check_type_meta, require_object
from fakeapi.machinery.errors import Cause
from fakeapi.machinery.features import FeatureGates
from fakeapi.machinery.gvk import ResourceType
from fakeapi.machinery.selectors import FieldRules
from fakeapi.printers import columns
from fakeapi.printers.columns import TableSpec
from fakeapi.registry.context import RequestContext
from fakeapi.registry.validation import meta as meta_rules
from fakeapi.schema import dropfields

Obj = dict[str, Any]
ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
STATUS_VERBS = ("get", "patch", "update")


@dataclasses.dataclass(frozen=True, kw_only=True)
class StrategyEnv:
    """What strategies may read besides the objects: other stored objects, the gates, the
    clock and the authorizer."""

    gates: FeatureGates
    lookup: Callable[[str, str, str], Obj | None]
    """`lookup(resource_id, namespace, name)`: a stored object (e.g. the namespace), or None."""
    now: Callable[[], dt.datetime]
    """The injected clock's current time (defaulted timestamps)."""
    authorizer: Authorizer
    """RBAC over the same store, for checks on what the writer may do."""
    scan: Callable[[str, str | None], list[Obj]] = lambda resource, namespace: []
    """`scan(resource_id, namespace)`: the stored objects of a resource (read-only)."""
    services: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Services of the core that some strategies need, by name (`tokens`: the service-account
    token issuer)."""
    clock: Clock = dataclasses.field(default_factory=RealClock)
    """The injected clock itself (the Clock kind reads its mode and advances it)."""


class Strategy:
    """Hooks for the main resource. The defaults implement the common upstream rules."""

    def __init__(self, kind: Kind, env: StrategyEnv) -> None:
        self.kind = kind
        self.env = env

    def prepare_for_create(self, obj: Obj, ctx: RequestContext) -> None:
        """Default or clear fields before create (status is reset where /status exists)."""
        if self.kind.has_status:
            obj.pop("status", None)

    def validate(self, obj: Obj, ctx: RequestContext) -> list[Cause]:
        """Kind-specific validation of a new object (must not mutate)."""
        return []

    def prepare_for_update(self, new: Obj, old: Obj, ctx: RequestContext) -> None:
        """Status is only written through /status: keep the stored one."""
        if self.kind.has_status:
            _copy_field(new, old, "status")

    def validate_update(self, new: Obj, old: Obj, ctx: RequestContext) -> list[Cause]:
        """Kind-specific validation of an update (immutability rules live here)."""
        return self.validate(new, ctx)

    def admit(self, new: Obj, old: Obj | None, ctx: RequestContext) -> None:
        """Checks of the writer against the authorizer, after validation and before commit
        (`old` is None on create); raise the ApiError to refuse."""

    def admit_delete(self, obj: Obj, ctx: RequestContext) -> None:
        """Admission of a DELETE of `obj` (upstream's delete admission plugins); raise the
        ApiError to refuse."""

    def on_delete(self, obj: Obj) -> Obj | None:
        """Return a replacement object to store instead of deleting (e.g. Terminating)."""
        return None

    def finalizers_pending(self, obj: Obj) -> bool:
        """Whether a deleting object must stay until finalizers are removed."""
        return bool(obj["metadata"].get("finalizers"))

    def grace_period(self, obj: Obj, options: Obj) -> int | None:
        """Seconds a DELETE lets the object wind down (upstream CheckGracefulDelete); None
        or 0: deleted at once."""
        return None


class SpecStrategy(Strategy):
    """A kind validated like upstream's: the ObjectMeta finalizer rules, then its spec rules."""

    def validate(self, obj: Obj, ctx: RequestContext) -> list[Cause]:
        """Finalizer names, then the kind's rules."""
        return meta_rules.finalizer_names(obj["metadata"]) + self.validate_spec(obj)

    def validate_update(self, new: Obj, old: Obj, ctx: RequestContext) -> list[Cause]:
        """Finalizer rules of an update, then the kind's update rules."""
        return (meta_rules.update_rules(new["metadata"], old["metadata"])
                + self.validate_spec_update(new, old))

    def validate_spec(self, obj: Obj) -> list[Cause]:
        """Kind-specific rules of a new object."""
        return []

    def validate_spec_update(self, new: Obj, old: Obj) -> list[Cause]:
        """Kind-specific rules of an update (by default: the create rules again)."""
        return self.validate_spec(new)


class StatusStrategy:
    """Hooks for `/status`: only status changes; spec and most metadata stay as stored."""

    def __init__(self, kind: Kind, env: StrategyEnv) -> None:
        self.kind = kind
        self.env = env

    def prepare_for_update(self, new: Obj, old: Obj, ctx: RequestContext) -> None:
        """Keep everything but status (and metadata writes) from the stored object."""
        status = new.get("status")
        meta = new["metadata"]
        new.clear()
        new.update({k: v for k, v in old.items() if k != "status"})
        new["metadata"] = {**old["metadata"], "resourceVersion": meta.get("resourceVersion", "")}
        if status is not None:
            new["status"] = status

    def validate_update(self, new: Obj, old: Obj, ctx: RequestContext) -> list[Cause]:
        """Kind-specific status validation."""
        return []

    def admit(self, new: Obj, old: Obj, ctx: RequestContext) -> None:
        """Checks of the writer against the authorizer, after validation and before commit;
        raise the ApiError to refuse."""


class CreateSubresourceStrategy:
    """Hooks for a subresource written with POST whose body is a kind of its own
    (`pods/NAME/binding` takes a Binding); the stored object changes as `apply` says."""

    body_kind = ""
    """The kind of the body (its 422s name it)."""

    def __init__(self, kind: Kind, env: StrategyEnv) -> None:
        self.kind = kind
        self.env = env

    def validate(self, body: Obj) -> list[Cause]:
        """Rules of the body, checked before the stored object is read."""
        return []

    def apply(self, current: Obj, body: Obj, ctx: RequestContext) -> Obj:
        """The object to store: `current` changed by the body. `current` is a copy whose top
        level and first-level objects the strategy may change in place; deeper values are
        the stored ones (replace them, never mutate them)."""
        raise NotImplementedError


class TimedStrategy(CreateSubresourceStrategy):
    """A POSTed subresource whose work runs on the event loop before its object is written
    (the Clock's `advance` moves the virtual clock, settling between its timers): `run`
    checks the body and awaits the work, then `apply` changes the stored object as for any
    created subresource, with nothing in between (`Registry.post_subresource`)."""

    async def run(self, current: Obj, body: Obj, ctx: RequestContext) -> None:
        """Check the body against `current` (raise the ApiError to refuse) and do the work
        (nothing under dryRun)."""
        raise NotImplementedError


class ViewStrategy(StatusStrategy):
    """A subresource read and written as a kind of its own (`scale` is an autoscaling/v1
    Scale): `view` renders the stored object, `unview` turns a written view back into it."""

    view_kind = ""
    """The kind of the view (its 422s name it)."""

    def view(self, obj: Obj) -> Obj:
        """The subresource's body for a stored object."""
        raise NotImplementedError

    def unview(self, body: Obj, old: Obj) -> Obj:
        """The object to store for a written view (a new dict; `old` is the stored one)."""
        raise NotImplementedError


class SubresourceOps(Protocol):
    """What an action subresource may do to other objects, through the same registry path."""

    def delete_object(self, resource_id: str, namespace: str, name: str, ctx: RequestContext,
                      options: Obj) -> None:
        """Delete an object (DeleteOptions as a DELETE takes them)."""

    def update_status(self, resource_id: str, obj: Obj, ctx: RequestContext) -> None:
        """Write an object's `/status`."""


class ActionStrategy(CreateSubresourceStrategy):
    """A subresource POSTed with a body of its own whose effect is not a change of its
    object (`pods/NAME/eviction` deletes the pod, `serviceaccounts/NAME/token` issues a
    token): `act` does it and returns the HTTP code and the response body."""

    def act(self, current: Obj, body: Obj, ctx: RequestContext, ops: SubresourceOps
            ) -> tuple[int, Obj]:
        """Do what the POST asks of `current` (read-only); the code and body to answer."""
        raise NotImplementedError


class ConnectStrategy:
    """A subresource a client connects to (upstream's rest.Connecter: `pods/NAME/exec`,
    `attach`, `portforward`), served over an upgraded connection: `locate` checks the request
    against the stored object as upstream's ExecLocation/AttachLocation do, and names the
    container to connect to."""

    verbs: tuple[str, ...] = ("create", "get")

    def __init__(self, kind: Kind, env: StrategyEnv) -> None:
        self.kind = kind
        self.env = env

    def locate(self, obj: Obj, options: Mapping[str, str]) -> str:
        """The container the request reaches (raise the ApiError upstream answers)."""
        raise NotImplementedError


class StreamStrategy(ConnectStrategy):
    """A subresource read as a stream (upstream's LogREST: a GET answered by a
    rest.ResourceStreamer): `pods/NAME/log`, served as chunked plain text; `locate` checks the
    request as upstream's LogLocation does."""

    verbs: tuple[str, ...] = ("get",)


# ----- how HTTP serves a row (upstream's REST storage kinds) ------------------------------


@dataclasses.dataclass(frozen=True)
class Stored:
    """Served by the generic store (upstream's rest.StandardStorage): the row's verbs on its
    collection and objects, watch, and each subresource as its strategy's interface says
    (`/status`-like updates, POSTed bodies, streams, connections)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReviewContext:
    """What a review is answered from: who asks and where (the URL's namespace), the
    authorizer and the token authenticator."""

    user: UserInfo
    namespace: str
    authorizer: Authorizer
    authenticate: Callable[..., UserInfo | None]
    """`authenticate(token[, audiences])`: the user a bearer token authenticates, or None."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Review:
    """Create-only and computed, never stored (upstream's review storage, a rest.Creater and
    nothing else): a POST answers with the body and the status `answer` computes for it;
    nothing is listed or watched."""

    answer: Callable[[Kind, Obj, ReviewContext], Obj]

    def create(self, kind: Kind, body: Any, asker: ReviewContext) -> Obj:
        """Answer one POST (400 when the body isn't an object of the kind)."""
        check_type_meta(require_object(body, kind), kind)
        return self.answer(kind, body, asker)


@dataclasses.dataclass(frozen=True, kw_only=True)
class PostsTo:
    """Create-only, a POST that is a subresource of another kind's object named by the body
    (upstream's legacy `bindings` storage: `namespaces/NS/bindings` binds the pod the Binding
    names through `pods/NAME/binding`)."""

    target: Kind
    subresource: str


Handler = Stored | Review | PostsTo
"""How HTTP serves a row's collection and objects; it dispatches on this type only."""
STORED = Stored()


def no_defaults(obj: Obj) -> None:
    """The defaulter of a kind without decode-time defaults."""


SubresourceStrategy = StatusStrategy | CreateSubresourceStrategy | ConnectStrategy
"""What a subresource's strategy is: a `/status`-like update (or a view such as `scale`), a
POSTed body of its own, or a stream or connection."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Kind(ResourceType):
    """One served group/version/kind (a row of the kind table) and how it is exposed over REST.

    A row is the single source of its kind's facts: it drives routing, discovery, OpenAPI and
    RBAC names, and names the classes that implement the kind's behaviour, its `kubectl get`
    columns, its field selectors and the fields its feature gates drop.
    """

    short_names: tuple[str, ...] = ()
    subresources: Mapping[str, type[SubresourceStrategy]] = dataclasses.field(
        default_factory=dict, compare=False)
    """Each subresource (`status`, `finalize`, `binding`, ...) and its strategy class."""
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    feature_gate: str | None = None
    has_generation: bool = True
    returns_deleted: bool = False
    """DELETE answers with the deleted object (upstream ReturnDeletedObject), else a Status."""
    strategy: type[Strategy] = dataclasses.field(default=Strategy, compare=False)
    """The object's strategy class (`Strategy`: the common upstream rules only)."""
    columns: TableSpec = dataclasses.field(default=columns.DEFAULT_SPEC, compare=False)
    """What `kubectl get` shows."""
    field_selectors: FieldRules = dataclasses.field(default=selectors.DEFAULT_FIELDS,
                                                    compare=False)
    """The field labels `fieldSelector` accepts (upstream's field-label conversion)."""
    drop_fields: tuple[dropfields.Rule, ...] = dataclasses.field(default=(), compare=False)
    """Fields dropped while their feature gate is off (upstream dropDisabledFields)."""
    name_rule: names.NameRule = dataclasses.field(default=names.name_is_dns_subdomain,
                                                  compare=False)
    """What `metadata.name` must be (upstream's per-kind ValidateObjectMeta name function):
    most kinds, every resource.k8s.io kind among them, are DNS subdomains."""
    pointer_fields: tuple[str, ...] = ()
    """Top-level `spec`/`status` fields that are Go pointers (omitted while unset; every
    other struct field goes on the wire as `{}` at least)."""
    custom_schema: str = ""
    """A custom resource's facts from its CRD as JSON (schema, scale paths; see
    `fakeapi.registry.custom.custom`), "" for built-in kinds. Compared, so caches keyed
    by kinds see a changed schema."""
    defaulter: Callable[[Obj], None] = dataclasses.field(default=no_defaults, compare=False)
    """Upstream's decode-time defaults (`SetDefaults_*`) of the kind, applied in place to a
    body while it is decoded: creates, updates, patch results and apply configurations (so
    two managers applying one manifest share the defaulted fields)."""
    handler: Handler = dataclasses.field(default=STORED, compare=False)
    """How HTTP serves the kind (the generic store, a computed review, a POST to another
    object's subresource)."""
    storage_version: str = ""
    """For a row serving another version of a stored kind (an off-by-default older one):
    the version its objects are stored at, converted to and from this one
    (`fakeapi.registry.conversion`); "" for the stored row itself."""

    @property
    def has_status(self) -> bool:
        """Whether `/status` is a subresource (status then changes only through it)."""
        return "status" in self.subresources


def _copy_field(new: Obj, old: Obj, field: str) -> None:
    if field in old:
        new[field] = old[field]
    else:
        new.pop(field, None)
