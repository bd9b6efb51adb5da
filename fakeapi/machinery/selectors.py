"""Label and field selectors: parsing with upstream's grammar and messages, and matching.

One matcher serves both spellings of a label selector: the query string (`parse_label_selector`)
and the metav1.LabelSelector object of a spec (`label_selector`, `label_selector_matches`).

Parsed selectors are immutable and cached per selector text, so a list or watch request pays
for parsing once; `matches` is the hot path and does no allocation for plain requirements.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import Any

from fakeapi.machinery.errors import bad_request
from fakeapi.machinery.names import label_key_errors, label_value_errors

# ---------------------------------------------------------------------------------------------
# Label selectors


# Operator names (upstream selection.Operator spellings).
EXISTS = "exists"
DOES_NOT_EXIST = "!"
EQUALS = "="
DOUBLE_EQUALS = "=="
NOT_EQUALS = "!="
IN = "in"
NOT_IN = "notin"
GREATER_THAN = "gt"
LESS_THAN = "lt"

BINARY_OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)

# Lexer tokens.
_ERR, _EOS, _CLOSE, _COMMA, _NOT, _DEQ, _EQ, _GT, _ID, _IN, _LT, _NEQ, _NOTIN, _OPEN = range(14)
_LITERAL_TOKENS = {
    ")": _CLOSE, ",": _COMMA, "!": _NOT, "==": _DEQ, "=": _EQ, ">": _GT, "in": _IN,
    "<": _LT, "!=": _NEQ, "notin": _NOTIN, "(": _OPEN,
}
_SPECIAL = frozenset("=!(),><")
_SPACE = frozenset(" \t\r\n")


@dataclasses.dataclass(frozen=True, slots=True)
class Requirement:
    """One `key op values` term of a label selector."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether `labels` satisfy this requirement (upstream Requirement.Matches)."""
        op = self.operator
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        value = labels.get(self.key)
        if op == IN or op == EQUALS or op == DOUBLE_EQUALS:
            return value is not None and value in self.values
        if op == NOT_IN or op == NOT_EQUALS:
            return value is None or value not in self.values
        if value is None:
            return False
        try:
            have = int(value, 10)
        except ValueError:
            return False
        want = int(self.values[0])
        return have > want if op == GREATER_THAN else have < want

    def __str__(self) -> str:
        op = self.operator
        if op == EXISTS:
            return self.key
        if op == DOES_NOT_EXIST:
            return "!" + self.key
        vals = ",".join(sorted(self.values))
        if op in (IN, NOT_IN):
            return f"{self.key} {op} ({vals})"
        sym = {GREATER_THAN: ">", LESS_THAN: "<"}.get(op, op)
        return f"{self.key}{sym}{vals}"


@dataclasses.dataclass(frozen=True, slots=True)
class LabelSelector:
    """A parsed label selector: the AND of its requirements (sorted by key, like upstream)."""

    requirements: tuple[Requirement, ...] = ()

    @property
    def empty(self) -> bool:
        """True when the selector selects everything."""
        return not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Whether an object with these labels is selected."""
        if labels is None:
            labels = _NO_LABELS
        for r in self.requirements:
            if not r.matches(labels):
                return False
        return True

    def exact(self, key: str) -> str | None:
        """The single value `key` must equal (`=`, `==` or a one-value `in`), if any."""
        for r in self.requirements:
            if r.key == key:
                if r.operator in (EQUALS, DOUBLE_EQUALS, IN) and len(r.values) == 1:
                    return r.values[0]
                return None
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


_NO_LABELS: Mapping[str, str] = {}
EVERYTHING = LabelSelector()
def _by_key(requirement: Requirement) -> str:
    return requirement.key


_OBJECT_OPERATORS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}


def label_selector(selector: object) -> LabelSelector | None:
    """A metav1.LabelSelector object (`matchLabels`, `matchExpressions`) as the selector it
    stands for, as upstream's LabelSelectorAsSelector; None when it is malformed (not an
    object, an unknown operator). Values are not checked again: the API validated them."""
    if not isinstance(selector, dict):
        return None
    match_labels = selector.get("matchLabels") or {}
    if not isinstance(match_labels, dict):
        return None
    reqs = [Requirement(key, EQUALS, (value,)) for key, value in match_labels.items()]
    for expr in selector.get("matchExpressions") or ():
        op = _OBJECT_OPERATORS.get(str(expr.get("operator"))) if isinstance(expr, dict) else None
        if op is None:
            return None
        values = () if op in (EXISTS, DOES_NOT_EXIST) else tuple(expr.get("values") or ())
        reqs.append(Requirement(str(expr.get("key", "")), op, values))
    reqs.sort(key=_by_key)
    return LabelSelector(tuple(reqs))


def label_selector_matches(selector: object, labels: Mapping[str, str]) -> bool:
    """Whether a metav1.LabelSelector object selects these labels: an empty one selects
    everything, a malformed one nothing (the same requirements as a `labelSelector` query)."""
    parsed = label_selector(selector)
    return parsed is not None and parsed.matches(labels)


class _SelectorSyntaxError(Exception):
    pass


def _lex(text: str) -> list[tuple[int, str]]:
    """Tokens of a label selector, the same way upstream's lexer splits them."""
    out: list[tuple[int, str]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _SPACE:
            i += 1
        if i >= n:
            out.append((_EOS, ""))
            return out
        ch = text[i]
        if ch in _SPECIAL:
            # Longest run of special symbols that still forms a known operator.
            j, best, best_end = i, None, i
            while j < n and text[j] in _SPECIAL:
                j += 1
                tok = _LITERAL_TOKENS.get(text[i:j])
                if tok is not None:
                    best, best_end = tok, j
                elif best is not None:
                    break
            if best is None:
                out.append((_ERR, f"error expected: keyword found '{text[i:j]}'"))
                i = j
            else:
                out.append((best, text[i:best_end]))
                i = best_end
        else:
            j = i
            while j < n and text[j] not in _SPECIAL and text[j] not in _SPACE:
                j += 1
            word = text[i:j]
            out.append((_LITERAL_TOKENS.get(word, _ID), word))
            i = j


class _Parser:
    """Recursive-descent parser over the token list (upstream labels.Parser semantics)."""

    def __init__(self, text: str) -> None:
        self.items = _lex(text)
        self.pos = 0

    def peek(self, values: bool) -> tuple[int, str]:
        tok, lit = self.items[self.pos]
        if values and (tok == _IN or tok == _NOTIN):
            tok = _ID
        return tok, lit

    def take(self, values: bool) -> tuple[int, str]:
        tok, lit = self.peek(values)
        self.pos += 1
        return tok, lit

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self.peek(True)
            if tok == _EOS:
                return reqs
            if tok not in (_ID, _NOT):
                raise _SelectorSyntaxError(
                    f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                reqs.append(self.requirement())
            except _SelectorSyntaxError as e:
                raise _SelectorSyntaxError(f"unable to parse requirement: {e}") from None
            tok, lit = self.take(True)
            if tok == _EOS:
                return reqs
            if tok != _COMMA:
                raise _SelectorSyntaxError(f"found '{lit}', expected: ',' or 'end of string'")
            tok2, lit2 = self.peek(True)
            if tok2 not in (_ID, _NOT):
                raise _SelectorSyntaxError(f"found '{lit2}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        operator = None
        tok, lit = self.take(True)
        if tok == _NOT:
            operator = DOES_NOT_EXIST
            tok, lit = self.take(True)
        if tok != _ID:
            raise _SelectorSyntaxError(f"found '{lit}', expected: identifier")
        key = lit
        errs = label_key_errors(key)
        if errs:
            raise _SelectorSyntaxError(_invalid("<nil>", key, "; ".join(errs)))
        nxt, _ = self.peek(True)
        if operator == DOES_NOT_EXIST:
            return _new_requirement(key, DOES_NOT_EXIST, [])
        if nxt == _EOS or nxt == _COMMA:
            return _new_requirement(key, EXISTS, [])
        tok, lit = self.take(False)
        op = _BINARY_TOKENS.get(tok)
        if op is None:
            raise _SelectorSyntaxError(
                f"found '{lit}', expected: in, notin, =, ==, !=, gt, lt")
        values = self.set_values() if op in (IN, NOT_IN) else self.exact_value()
        return _new_requirement(key, op, sorted(values))

    def set_values(self) -> set[str]:
        tok, lit = self.take(True)
        if tok != _OPEN:
            raise _SelectorSyntaxError(f"found '{lit}' expected: '('")
        tok, lit = self.peek(True)
        if tok == _CLOSE:
            self.take(True)
            return {""}
        if tok not in (_ID, _COMMA):
            raise _SelectorSyntaxError(f"found '{lit}', expected: ',', ')' or identifier")
        values = self.identifier_list()
        tok2, _ = self.take(True)
        if tok2 != _CLOSE:
            raise _SelectorSyntaxError(f"found '{lit}', expected: ')'")
        return values

    def identifier_list(self) -> set[str]:
        values: set[str] = set()
        while True:
            tok, lit = self.take(True)
            if tok == _ID:
                values.add(lit)
                tok2, lit2 = self.peek(True)
                if tok2 == _COMMA:
                    continue
                if tok2 == _CLOSE:
                    return values
                raise _SelectorSyntaxError(f"found '{lit2}', expected: ',' or ')'")
            if tok == _COMMA:
                if not values:
                    values.add("")
                tok2, _ = self.peek(True)
                if tok2 == _CLOSE or tok2 == _COMMA:
                    values.add("")
                if tok2 == _CLOSE:
                    return values
                continue
            raise _SelectorSyntaxError(f"found '{lit}', expected: ',', or identifier")

    def exact_value(self) -> set[str]:
        tok, _ = self.peek(True)
        if tok == _EOS or tok == _COMMA:
            return {""}
        tok, lit = self.take(True)
        if tok == _ID:
            return {lit}
        raise _SelectorSyntaxError(f"found '{lit}', expected: identifier")


_BINARY_TOKENS = {
    _IN: IN, _EQ: EQUALS, _DEQ: DOUBLE_EQUALS, _GT: GREATER_THAN, _LT: LESS_THAN,
    _NOTIN: NOT_IN, _NEQ: NOT_EQUALS,
}


def _quote(value: str) -> str:
    out = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{out}"'


def _invalid(path: str, value: str, detail: str) -> str:
    """A field.Error string: `<path>: Invalid value: "<value>": <detail>`."""
    return f"{path}: Invalid value: {_quote(value)}: {detail}"


def _is_int64(text: str) -> bool:
    t = text[1:] if text[:1] in "+-" else text
    if not t.isascii() or not t.isdigit():
        return False
    return -(2**63) <= int(text) < 2**63


def _new_requirement(key: str, op: str, values: list[str]) -> Requirement:
    """Upstream NewRequirement's value checks, aggregated like field.ErrorList."""
    errs: list[str] = []
    if op in (GREATER_THAN, LESS_THAN):
        # The parser always yields exactly one value for these operators.
        errs.extend(
            _invalid(f"values[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer")
            for i, v in enumerate(values) if not _is_int64(v))
    for i, v in enumerate(values):
        msgs = label_value_errors(v)
        if msgs:
            errs.append(_invalid(f"values[{i}][{key}]", v, "; ".join(msgs)))
    if errs:
        unique = list(dict.fromkeys(errs))
        raise _SelectorSyntaxError(unique[0] if len(unique) == 1 else
                                   "[" + ", ".join(unique) + "]")
    return Requirement(key, op, tuple(values))


@functools.lru_cache(maxsize=1024)
def _parse_label_selector(text: str) -> LabelSelector:
    reqs = _Parser(text).parse()
    reqs.sort(key=_by_key)
    return LabelSelector(tuple(reqs))


def parse_label_selector(text: str) -> LabelSelector:
    """Parse a `labelSelector` query value; a malformed one is a 400 with upstream's message."""
    if not text:
        return EVERYTHING
    try:
        return _parse_label_selector(text)
    except _SelectorSyntaxError as e:
        raise bad_request(str(e)) from None


# ---------------------------------------------------------------------------------------------
# Field selectors


FieldGetter = Callable[[dict[str, Any]], str]


def _path_getter(dotted: str) -> FieldGetter:
    """A getter for a string field; missing or null values read as "" (upstream fields.Set)."""
    parts = tuple(dotted.split("."))
    if len(parts) == 2:
        a, b = parts

        def get2(obj: dict[str, Any]) -> str:
            v = (obj.get(a) or _EMPTY).get(b)
            return v if isinstance(v, str) else _scalar(v)
        return get2

    def get(obj: dict[str, Any]) -> str:
        v: Any = obj
        for p in parts:
            if not isinstance(v, dict):
                return ""
            v = v.get(p)
        return v if isinstance(v, str) else _scalar(v)
    return get


def _scalar(v: Any) -> str:
    if v is None or isinstance(v, (dict, list)):
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _bool_getter(dotted: str) -> FieldGetter:
    """A getter for a bool field that upstream renders with FormatBool (absent is "false")."""
    a, b = dotted.split(".")

    def get(obj: dict[str, Any]) -> str:
        return "true" if (obj.get(a) or _EMPTY).get(b) is True else "false"
    return get


def _pod_ip(obj: dict[str, Any]) -> str:
    status = obj.get("status") or _EMPTY
    ips = status.get("podIPs")
    if ips and isinstance(ips[0], dict):
        return ips[0].get("ip") or ""
    return status.get("podIP") or ""


def _event_source(obj: dict[str, Any]) -> str:
    # Same as upstream: source.component, falling back to reportingComponent.
    comp = (obj.get("source") or _EMPTY).get("component")
    return comp or obj.get("reportingComponent") or ""


def _always_empty(obj: dict[str, Any]) -> str:
    return ""


_EMPTY: dict[str, Any] = {}


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class FieldRules:
    """Which field labels a kind accepts (upstream field-label conversion) and their values.

    Each kind row names its rules; compared and hashed by identity (parsed selectors are
    cached per rules object).
    """

    getters: Mapping[str, FieldGetter]
    aliases: Mapping[str, str]
    reject: Callable[[str], str]

    def resolve(self, label: str) -> tuple[str, FieldGetter]:
        """The canonical label and its getter, or a 400 for an unsupported label."""
        label = self.aliases.get(label, label)
        getter = self.getters.get(label)
        if getter is None:
            raise bad_request(self.reject(label))
        return label, getter


def _core_reject(label: str) -> str:
    return f"field label not supported: {label}"


def _meta(namespaced: bool) -> dict[str, FieldGetter]:
    g = {"metadata.name": _path_getter("metadata.name")}
    if namespaced:
        g["metadata.namespace"] = _path_getter("metadata.namespace")
    return g


DEFAULT_FIELDS = FieldRules(
    getters=_meta(True), aliases={},
    reject=lambda label: (f'"{label}" is not a known field selector: only '
                          '"metadata.name", "metadata.namespace"'))
"""Same as upstream's DefaultMetaV1FieldSelectorConversion: metadata.name and namespace."""

_EVENT_FIELDS = [f"involvedObject.{f}" for f in (
    "kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")]

POD_FIELDS = FieldRules(
    getters={
        **_meta(True),
        "spec.nodeName": _path_getter("spec.nodeName"),
        "spec.restartPolicy": _path_getter("spec.restartPolicy"),
        "spec.schedulerName": _path_getter("spec.schedulerName"),
        "spec.serviceAccountName": _path_getter("spec.serviceAccountName"),
        "spec.hostNetwork": _bool_getter("spec.hostNetwork"),
        "status.phase": _path_getter("status.phase"),
        "status.podIP": _pod_ip,
        # Accepted by the conversion but not a selectable attribute: always "".
        "status.podIPs": _always_empty,
        "status.nominatedNodeName": _path_getter("status.nominatedNodeName"),
    },
    aliases={"spec.host": "spec.nodeName"}, reject=_core_reject)
NODE_FIELDS = FieldRules(
    getters={**_meta(False), "spec.unschedulable": _bool_getter("spec.unschedulable")},
    aliases={}, reject=_core_reject)
NAMESPACE_FIELDS = FieldRules(
    getters={**_meta(False), "status.phase": _path_getter("status.phase")},
    aliases={}, reject=_core_reject)
EVENT_FIELDS = FieldRules(
    getters={
        **_meta(True),
        **{f: _path_getter(f) for f in _EVENT_FIELDS},
        "reason": _path_getter("reason"),
        "reportingComponent": _path_getter("reportingComponent"),
        "source": _event_source,
        "type": _path_getter("type"),
    },
    aliases={}, reject=_core_reject)
RESOURCE_SLICE_FIELDS = FieldRules(
    getters={
        **_meta(False),
        "spec.nodeName": _path_getter("spec.nodeName"),
        "spec.driver": _path_getter("spec.driver"),
    },
    aliases={},
    reject=lambda label: ("field label not supported for resource.k8s.io/v1, "
                          f"Kind=ResourceSlice: {label}"))


FAULT_FIELDS = FieldRules(
    getters={**_meta(False), "spec.nodeName": _path_getter("spec.nodeName")},
    aliases={},
    reject=lambda label: f'"{label}" is not a known field selector: only "metadata.name", '
                         '"metadata.namespace", "spec.nodeName"')
"""The emulator's faults select by node."""



def _int_getter(dotted: str) -> FieldGetter:
    """A getter for an int32 field upstream formats with strconv (absent is "0")."""
    get = _path_getter(dotted)
    return lambda obj: get(obj) or "0"


def _group_reject(group_version: str, kind: str) -> Callable[[str], str]:
    return lambda label: f"field label not supported for {group_version}, Kind={kind}: {label}"


SECRET_FIELDS = FieldRules(
    getters={**_meta(True), "type": _path_getter("type")}, aliases={}, reject=_core_reject)
SERVICE_FIELDS = FieldRules(
    getters={**_meta(True), "spec.clusterIP": _path_getter("spec.clusterIP"),
             "spec.type": _path_getter("spec.type")}, aliases={}, reject=_core_reject)
REPLICA_SET_FIELDS = FieldRules(
    getters={**_meta(True), "status.replicas": _int_getter("status.replicas")}, aliases={},
    reject=_group_reject("apps/v1", "ReplicaSet"))
JOB_FIELDS = FieldRules(
    getters={**_meta(True), "status.successful": _int_getter("status.succeeded")}, aliases={},
    reject=_group_reject("batch/v1", "Job"))
CSR_FIELDS = FieldRules(
    getters={**_meta(False), "spec.signerName": _path_getter("spec.signerName")}, aliases={},
    reject=_group_reject("certificates.k8s.io/v1", "CertificateSigningRequest"))
REPLICATION_CONTROLLER_FIELDS = FieldRules(
    getters={**_meta(True), "status.replicas": _int_getter("status.replicas")}, aliases={},
    reject=_core_reject)
"""Same as upstream's core/v1 conversion.go for ReplicationController."""

@dataclasses.dataclass(frozen=True, slots=True)
class FieldRequirement:
    """One `field=value` or `field!=value` term of a field selector."""

    field: str
    value: str
    negate: bool
    getter: FieldGetter = dataclasses.field(compare=False, repr=False)

    def matches(self, obj: dict[str, Any]) -> bool:
        """Whether `obj` satisfies the term (missing fields compare as "")."""
        return (self.getter(obj) == self.value) is not self.negate

    def __str__(self) -> str:
        return f"{self.field}{'!=' if self.negate else '='}{self.value}"


@dataclasses.dataclass(frozen=True, slots=True)
class FieldSelector:
    """A parsed field selector: the AND of its terms."""

    requirements: tuple[FieldRequirement, ...] = ()

    @property
    def empty(self) -> bool:
        """True when the selector selects everything."""
        return not self.requirements

    def matches(self, obj: dict[str, Any]) -> bool:
        """Whether the object is selected."""
        for r in self.requirements:
            if (r.getter(obj) == r.value) is r.negate:
                return False
        return True

    def exact(self, field: str) -> str | None:
        """The value `field` must equal, if the selector pins it (for index lookups)."""
        for r in self.requirements:
            if r.field == field and not r.negate:
                return r.value
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


EVERYTHING_FIELDS = FieldSelector()


def _split_terms(text: str) -> list[str]:
    """Split on commas not escaped by a backslash (escapes kept for unescaping later)."""
    if "\\" not in text:
        return text.split(",")
    terms: list[str] = []
    start, escaped = 0, False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    """First `!=`, `==` or `=` in the term (no escaping on the left-hand side)."""
    for i in range(len(term)):
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op):]
    return None


def _unescape(value: str) -> str:
    """Upstream UnescapeValue: `\\\\`, `\\,` and `\\=` escapes; bare `,`/`=` are errors."""
    if "\\" not in value and "," not in value and "=" not in value:
        return value
    out: list[str] = []
    escaped = False
    for ch in value:
        if escaped:
            if ch not in "\\,=":
                raise bad_request(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            # Upstream prints the rune with %v, i.e. its code point.
            raise bad_request(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if escaped:
        raise bad_request("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


@functools.lru_cache(maxsize=1024)
def _parse_field_selector(text: str, rules: FieldRules) -> FieldSelector:
    terms: list[tuple[str, str, bool]] = []
    for part in sorted(_split_terms(text)):
        if not part:
            continue
        split = _split_term(part)
        if split is None:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
        lhs, op, rhs = split
        terms.append((lhs, _unescape(rhs), op == "!="))
    # Like upstream, every term parses before any field label is converted (and rejected).
    reqs = []
    for lhs, value, negate in terms:
        label, getter = rules.resolve(lhs)
        reqs.append(FieldRequirement(label, value, negate, getter))
    return FieldSelector(tuple(reqs))


def parse_field_selector(text: str, rules: FieldRules) -> FieldSelector:
    """Parse a `fieldSelector` under a kind's field rules (its row's `field_selectors`);
    syntax errors and unsupported fields are 400s."""
    if not text:
        return EVERYTHING_FIELDS
    return _parse_field_selector(text, rules)


def predicate(label_selector: str, field_selector: str,
              rules: FieldRules) -> Callable[[dict[str, Any]], bool] | None:
    """One predicate for a list/watch's label and field selectors (field labels resolved by
    the kind's `rules`); None when both are empty."""
    preds: list[Callable[[dict[str, Any]], bool]] = []
    if label_selector:
        ls = parse_label_selector(label_selector)
        if not ls.empty:
            preds.append(lambda o: ls.matches(o["metadata"].get("labels")))
    if field_selector:
        fs = parse_field_selector(field_selector, rules)
        if not fs.empty:
            preds.append(fs.matches)
    if not preds:
        return None
    if len(preds) == 1:
        return preds[0]
    return lambda o: all(p(o) for p in preds)
