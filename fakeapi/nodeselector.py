"""Node selectors, as upstream's `nodeaffinity` helpers: does a node match?

A NodeSelector's terms are ORed, a term's requirements ANDed; `matchExpressions` look at the
node's labels, `matchFields` at `metadata.name` (the one field upstream supports). A term
with no requirements matches nothing, and so does a selector with no terms. Used by the
scheduler (pod node affinity, a claim's allocation) and the allocator (slice selectors).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Obj = Mapping[str, Any]


def _number(value: str) -> int | None:
    try:
        return int(value)
    except ValueError:
        return None


def requirement_matches(req: Obj, value: str | None) -> bool:
    """One NodeSelectorRequirement against a label or field value (None: absent)."""
    op = req.get("operator")
    values: Sequence[str] = req.get("values") or ()
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return value is None or value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt") and value is not None and len(values) == 1:
        have, want = _number(value), _number(values[0])
        if have is None or want is None:
            return False
        return have > want if op == "Gt" else have < want
    return False


def term_matches(term: Obj, labels: Mapping[str, str], name: str) -> bool:
    """One NodeSelectorTerm: every requirement holds (and there is at least one)."""
    expressions = term.get("matchExpressions") or ()
    fields = term.get("matchFields") or ()
    if not expressions and not fields:
        return False
    for req in expressions:
        if not requirement_matches(req, labels.get(req.get("key", ""))):
            return False
    for req in fields:
        value = name if req.get("key") == "metadata.name" else None
        if value is None or not requirement_matches(req, value):
            return False
    return True


def selector_matches(selector: Obj | None, node: Obj) -> bool:
    """A NodeSelector (`nodeSelectorTerms`) against a Node wire dict; None matches every
    node."""
    if selector is None:
        return True
    meta = node.get("metadata") or {}
    labels = meta.get("labels") or {}
    name = meta.get("name", "")
    return any(term_matches(t, labels, name) for t in selector.get("nodeSelectorTerms") or ())


def labels_match(wanted: Mapping[str, str] | None, node: Obj) -> bool:
    """A pod's `nodeSelector` map: every label present with that value."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    return all(labels.get(k) == v for k, v in (wanted or {}).items())
