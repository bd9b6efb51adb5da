"""Node selectors, as upstream's `component-helpers/scheduling/corev1/nodeaffinity`: does a
node match?

A NodeSelector's terms are ORed, a term's requirements ANDed; `matchExpressions` look at the
node's labels, `matchFields` at `metadata.name` (the one field upstream supports). A term
with no requirements matches nothing, and so does a selector with no terms. `NodeSelector`
refuses what upstream's NewNodeSelector refuses (the allocator's slices and results);
`selector_matches` is the lazy form the scheduler's NodeAffinity filter and a claim's
allocation use, where a term that doesn't parse simply matches no node. One module for the
scheduler, the allocator and the node lifecycle alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Obj = Mapping[str, Any]
_Check = Callable[[str, Mapping[str, str]], bool]


class NodeSelectorError(ValueError):
    """A selector upstream's NewNodeSelector refuses (unknown operator or field, bad values)."""


class NodeSelector:
    """A parsed NodeSelector: its terms are ORed, the requirements of a term ANDed; a term
    with no requirements matches no node, nor does a selector without terms."""

    __slots__ = ("terms",)

    def __init__(self, selector: Obj) -> None:
        self.terms: list[list[_Check]] = []
        for term in selector.get("nodeSelectorTerms") or []:
            term = term or {}
            checks = [_label_check(r or {}) for r in term.get("matchExpressions") or []]
            checks += [_field_check(r or {}) for r in term.get("matchFields") or []]
            if checks:
                self.terms.append(checks)

    def matches(self, node_name: str, labels: Mapping[str, str]) -> bool:
        """Whether the node with this name and these labels is selected."""
        return any(all(check(node_name, labels) for check in term) for term in self.terms)


def node_identity(node: Obj) -> tuple[str, Mapping[str, str]]:
    """A Node wire object's name and labels, what selectors look at."""
    meta = node.get("metadata") or {}
    return meta.get("name") or "", meta.get("labels") or {}


def _values(req: Obj, op: str) -> list[str]:
    values = [str(v) for v in req.get("values") or []]
    if op in ("In", "NotIn") and not values:
        raise NodeSelectorError("values: Required value: must be specified when `operator` "
                                "is 'In' or 'NotIn'")
    if op in ("Exists", "DoesNotExist") and values:
        raise NodeSelectorError("values: Forbidden: may not be specified when `operator` is "
                                "'Exists' or 'DoesNotExist'")
    if op in ("Gt", "Lt") and len(values) != 1:
        raise NodeSelectorError("values: Required value: must be specified single value when "
                                "`operator` is 'Lt' or 'Gt'")
    return values


def _label_check(req: Obj) -> _Check:
    key, op = str(req.get("key") or ""), str(req.get("operator") or "")
    if op not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
        raise NodeSelectorError(f'"{op}" is not a valid label selector operator')
    values = _values(req, op)
    if op == "In":
        allowed = frozenset(values)
        return lambda _n, labels: key in labels and labels[key] in allowed
    if op == "NotIn":
        denied = frozenset(values)
        return lambda _n, labels: labels.get(key) not in denied  # a missing label matches
    if op == "Exists":
        return lambda _n, labels: key in labels
    if op == "DoesNotExist":
        return lambda _n, labels: key not in labels
    try:
        bound = int(values[0])
    except ValueError:
        raise NodeSelectorError(f"values[0]: Invalid value: {values[0]!r}: for 'Gt', 'Lt' "
                                "operators, the value must be an integer") from None
    greater = op == "Gt"

    def compare(_n: str, labels: Mapping[str, str]) -> bool:
        try:
            value = int(labels[key])
        except (KeyError, ValueError):
            return False
        return value > bound if greater else value < bound
    return compare


def _field_check(req: Obj) -> _Check:
    key, op = str(req.get("key") or ""), str(req.get("operator") or "")
    if key != "metadata.name":
        raise NodeSelectorError(f"key: Invalid value: {key!r}: not a valid field selector key")
    if op not in ("In", "NotIn"):
        raise NodeSelectorError(f'"{op}" is not a valid field selector operator')
    names = frozenset(_values(req, op))
    if op == "In":
        return lambda name, _l: name in names
    return lambda name, _l: name not in names


def selector_matches(selector: Obj | None, node: Obj) -> bool:
    """A NodeSelector (`nodeSelectorTerms`) against a Node wire dict; None matches every
    node, a term that doesn't parse matches none (upstream's lazy-error selector)."""
    if selector is None:
        return True
    name, labels = node_identity(node)
    for term in selector.get("nodeSelectorTerms") or ():
        try:
            if NodeSelector({"nodeSelectorTerms": [term]}).matches(name, labels):
                return True
        except NodeSelectorError:
            continue
    return False


def labels_match(wanted: Mapping[str, str] | None, node: Obj) -> bool:
    """A pod's `nodeSelector` map: every label present with that value."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    return all(labels.get(k) == v for k, v in (wanted or {}).items())
