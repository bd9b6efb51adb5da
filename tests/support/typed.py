"""Typed views of shared informers: the cache seen as `tests.support.models` pydantic models.

A separate module so that only components that ask for typed objects import the models
(their import costs a tenth of the server's start).
"""

from __future__ import annotations

import weakref
from typing import Any, Generic, TypeVar

from fakeapi.runtime.informer import Cache, Informer, Obj, object_key
from tests.support.models import K8sModel, parse

M = TypeVar("M", bound=K8sModel)


class TypedView(Generic[M]):
    """The cache seen as typed models (`tests.support.models`): the boundary where a component
    that reasons about objects stops handling dicts.

    Each object is parsed once per resourceVersion, when first read.
    """

    def __init__(self, cache: Cache, model: type[M]) -> None:
        self._cache = cache
        self._model = model
        self._parsed: dict[str, tuple[str, M]] = {}

    def _typed(self, key: str, obj: Obj) -> M:
        rv = obj["metadata"].get("resourceVersion", "")
        hit = self._parsed.get(key)
        if hit is None or hit[0] != rv:
            hit = self._parsed[key] = (rv, parse(obj, self._model))
        return hit[1]

    def get(self, name: str, namespace: str = "") -> M | None:
        """One cached object, typed."""
        obj = self._cache.get(name, namespace)
        return None if obj is None else self._typed(object_key(obj), obj)

    def list(self) -> list[M]:
        """Every cached object, typed, in key order (parses of deleted ones are dropped)."""
        items = self._cache.items()
        live = {key for key, _ in items}
        for key in [k for k in self._parsed if k not in live]:
            del self._parsed[key]
        return [self._typed(key, obj) for key, obj in items]



_VIEWS: weakref.WeakKeyDictionary[Informer, dict[type[K8sModel], TypedView[Any]]] = (
    weakref.WeakKeyDictionary())


def typed_view(informer: Informer, model: type[M]) -> TypedView[M]:
    """The typed view of an informer's cache (one per model, shared by everyone who asks)."""
    views = _VIEWS.setdefault(informer, {})
    view = views.get(model)
    if view is None:
        view = views[model] = TypedView(informer.cache, model)
    return view
