"""The parts of upstream's ObjectMeta validation the DRA kinds rely on: finalizers.

The scheduler protects allocated claims with `resource.kubernetes.io/delete-protection`.
Upstream validates nothing DRA-specific about that finalizer; what applies is the generic
metadata rule set: every finalizer is a qualified name (bare names only for the standard
ones), and no finalizer may be added once the object is being deleted.
"""

from __future__ import annotations

from typing import Any

from fakeapi.machinery import names
from fakeapi.machinery.errors import Cause
from fakeapi.machinery.field import forbidden, invalid

DELETE_PROTECTION_FINALIZER = "resource.kubernetes.io/delete-protection"
STANDARD_FINALIZERS = ("kubernetes", "orphan", "foregroundDeletion")
PATH = "metadata.finalizers"


def finalizer_names(meta: dict[str, Any]) -> list[Cause]:
    """Same as upstream ValidateFinalizerName: qualified names, bare only if standard."""
    causes: list[Cause] = []
    for name in meta.get("finalizers") or []:
        name = str(name)
        causes += [invalid(PATH, name, m) for m in names.label_key_errors(name)]
        if "/" not in name and name not in STANDARD_FINALIZERS:
            causes.append(invalid(PATH, name, "name is neither a standard finalizer name nor "
                                  "is it fully qualified"))
    return causes


def no_new_finalizers(meta: dict[str, Any], old_meta: dict[str, Any]) -> list[Cause]:
    """Same as upstream ValidateNoNewFinalizers while `deletionTimestamp` is set."""
    if not old_meta.get("deletionTimestamp"):
        return []
    extra = sorted(set(meta.get("finalizers") or []) - set(old_meta.get("finalizers") or []))
    if not extra:
        return []
    shown = ", ".join(f'"{f}"' for f in extra)
    return [forbidden(PATH, "no new finalizers can be added if the object is being deleted, "
                      f"found new finalizers []string{{{shown}}}")]


def update_rules(meta: dict[str, Any], old_meta: dict[str, Any]) -> list[Cause]:
    """Finalizer rules of an update."""
    return finalizer_names(meta) + no_new_finalizers(meta, old_meta)
