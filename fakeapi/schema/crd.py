"""CustomResourceDefinitions: the CRD's own rules, and the rules its custom resources follow
(what a CRD serves is `fakeapi.registry.custom_kinds`).

Pure functions of CRD objects (JSON dicts), as upstream's apiextensions-apiserver:
- `crd_causes` / `default_crd`: the CRD's own validation and defaulting (names, versions,
  one storage version, a structural schema per version, rules that compile);
- `prune`: unknown fields dropped as upstream's structural pruning does;
- `validate`: the OpenAPI value rules (type, enum, bounds, lengths, patterns, items,
  required) and `x-kubernetes-validations` CEL rules through `fakeapi.schema.crd_cel`, with
  upstream's messages.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import orjson

from fakeapi.machinery.errors import Cause
from fakeapi.machinery.field import not_supported, required
from fakeapi.schema import crd_cel

ROOT_FIELDS = ("apiVersion", "kind", "metadata")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")

Obj = dict[str, Any]

# ----- the CRD itself ---------------------------------------------------------------------


def default_crd(crd: Obj) -> None:
    """Same as upstream SetDefaults_CustomResourceDefinition: singular and listKind from the
    kind, conversion None."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict) and isinstance(names.get("kind"), str):
        names.setdefault("singular", names["kind"].lower())
        names.setdefault("listKind", names["kind"] + "List")
    spec.setdefault("conversion", {"strategy": "None"})


def crd_causes(crd: Obj) -> list[Cause]:
    """Same as upstream ValidateCustomResourceDefinition (the rules users meet)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group, plural = spec.get("group") or "", names.get("plural") or ""
    causes: list[Cause] = []
    name = (crd.get("metadata") or {}).get("name")
    if name != f"{plural}.{group}":
        causes.append(Cause("metadata.name", f'Invalid value: "{name}": must be '
                            'spec.names.plural+"."+spec.group'))
    if not group:
        causes.append(required("spec.group"))
    elif "." not in group:
        causes.append(Cause("spec.group", f'Invalid value: "{group}": should be a domain with '
                            "at least one dot"))
    for field in ("plural", "kind"):
        if not names.get(field):
            causes.append(required(f"spec.names.{field}"))
    if plural and not DNS_LABEL.match(plural):
        causes.append(Cause("spec.names.plural", f'Invalid value: "{plural}": a lowercase '
                            "RFC 1123 label must consist of lower case alphanumeric characters "
                            "or '-'"))
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        causes.append(not_supported("spec.scope", spec.get("scope"),
                                    ["Cluster", "Namespaced"]))
    versions = [v for v in spec.get("versions") or [] if isinstance(v, dict)]
    if not versions:
        causes.append(required("spec.versions", "must have exactly one version marked as "
                               "storage version"))
    elif sum(1 for v in versions if v.get("storage")) != 1:
        causes.append(Cause("spec.versions", "Invalid value: []apiextensions."
                            "CustomResourceDefinitionVersion{...}: must have exactly one "
                            "version marked as storage version"))
    for i, version in enumerate(versions):
        path = f"spec.versions[{i}]"
        if not version.get("name"):
            causes.append(required(f"{path}.name"))
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if not isinstance(schema, dict):
            causes.append(required(f"{path}.schema.openAPIV3Schema", "schemas are required"))
            continue
        if schema.get("type") != "object":
            causes.append(Cause(f"{path}.schema.openAPIV3Schema.type", "Unsupported value: "
                                f'"{schema.get("type", "")}": supported values: "object"',
                                "FieldValueNotSupported"))
        causes += _schema_causes(schema, f"{path}.schema.openAPIV3Schema")
    return causes


def _schema_causes(schema: Obj, path: str) -> list[Cause]:
    """Rules of a schema that would make its objects unservable: uncompilable CEL rules and
    missing types (upstream's structural-schema check)."""
    causes: list[Cause] = []
    for node, node_path in _walk_schema(schema, path):
        if "type" not in node and not (node.get("x-kubernetes-int-or-string")
                                       or node.get("x-kubernetes-preserve-unknown-fields")):
            causes.append(required(f"{node_path}.type", "must not be empty for specified "
                                   "object fields"))
        for i, rule in enumerate(node.get("x-kubernetes-validations") or []):
            text = rule.get("rule") if isinstance(rule, dict) else None
            rule_path = f"{node_path}.x-kubernetes-validations[{i}].rule"
            if not isinstance(text, str) or not text:
                causes.append(required(rule_path))
                continue
            compiled = crd_cel.compile_rule(text)
            if isinstance(compiled, crd_cel.CompileError):
                causes.append(Cause(rule_path, f"Invalid value: {orjson.dumps(text).decode()}:"
                                    f" {compiled.detail}"))
    return causes


def _walk_schema(schema: Obj, path: str) -> Iterator[tuple[Obj, str]]:
    yield schema, path
    for name, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, dict):
            yield from _walk_schema(sub, f"{path}.properties[{name}]")
    items = schema.get("items")
    if isinstance(items, dict):
        yield from _walk_schema(items, f"{path}.items")
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        yield from _walk_schema(extra, f"{path}.additionalProperties")


def established_status(crd: Obj, now: str) -> Obj:
    """Same as upstream's naming and establishing controllers, at once: the names accepted,
    NamesAccepted and Established true, the stored versions."""
    spec = crd.get("spec") or {}
    versions = [v for v in spec.get("versions") or [] if isinstance(v, dict)]
    old = crd.get("status") or {}
    stored = list(old.get("storedVersions") or [])
    for v in versions:
        if v.get("storage") and v.get("name") not in stored:
            stored.append(v["name"])
    conditions = [
        {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
         "message": "no conflicts found", "lastTransitionTime": now},
        {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
         "message": "the initial names have been accepted", "lastTransitionTime": now},
    ]
    kept = {c.get("type"): c for c in old.get("conditions") or [] if isinstance(c, dict)}
    conditions = [kept.get(c["type"], c) if kept.get(c["type"], {}).get("status") == "True"
                  else c for c in conditions]
    return {"acceptedNames": spec.get("names") or {}, "conditions": conditions,
            "storedVersions": stored}


# ----- pruning and validation of custom resources -----------------------------------------


def prune(value: Any, schema: Obj, path: str = "") -> tuple[Any, list[str]]:
    """Upstream's structural pruning: `value` without the fields its schema doesn't know
    (kept under `x-kubernetes-preserve-unknown-fields`), and the paths of those dropped."""
    dropped: list[str] = []
    return _prune(value, schema, path, dropped), dropped


def _prune(value: Any, schema: Obj, path: str, dropped: list[str]) -> Any:
    if isinstance(value, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
        embedded = schema.get("x-kubernetes-embedded-resource") is True
        if props is None and not isinstance(extra, dict):
            return value if preserve or not props and schema.get("type") != "object" else {}
        out = {}
        for key, item in value.items():
            sub = (props or {}).get(key)
            where = f"{path}.{key}" if path else key
            if sub is None and isinstance(extra, dict):
                sub = extra
            if not path and key in ROOT_FIELDS:
                out[key] = item
                continue
            if sub is None and (embedded or not path) and key in ROOT_FIELDS:
                out[key] = item
                continue
            if sub is None:
                if preserve:
                    out[key] = item
                else:
                    dropped.append(where)
                continue
            out[key] = _prune(item, sub, where, dropped)
        return out
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            return [_prune(v, items, f"{path}[{i}]", dropped) for i, v in enumerate(value)]
    return value


def apply_defaults(value: Any, schema: Obj) -> Any:
    """Same as upstream's structural defaulting: a missing field with a `default` gets it
    (then its own defaults), in objects, map values and array items; `value` is changed in
    place and returned."""
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for key, sub in props.items():
            if key not in value and isinstance(sub, dict) and "default" in sub:
                value[key] = orjson.loads(orjson.dumps(sub["default"]))
        for key, item in value.items():
            sub = props.get(key)
            if sub is None and isinstance(schema.get("additionalProperties"), dict):
                sub = schema["additionalProperties"]
            if isinstance(sub, dict):
                apply_defaults(item, sub)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            apply_defaults(item, schema["items"])
    return value


_JSON_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool}


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "array"
    return "string" if isinstance(value, str) else "object"


def _shown(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return f'"{_type_name(value)}"'
    return orjson.dumps(value).decode()


def _type_ok(value: Any, wanted: str) -> bool:
    if wanted == "integer":
        return isinstance(value, int) and not isinstance(value, bool) or (
            isinstance(value, float) and value.is_integer())
    if wanted == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    expected = _JSON_TYPES.get(wanted)
    return expected is None or isinstance(value, expected)


def validate(value: Any, schema: Obj, *, old: Any = None, path: str = "") -> list[Cause]:
    """The schema's value rules and CEL rules for `value` (its stored version `old` for
    transition rules), with upstream's field paths and messages."""
    causes: list[Cause] = []
    _validate(value, schema, old, path, causes)
    return causes


def _validate(value: Any, schema: Obj, old: Any, path: str, causes: list[Cause]) -> None:
    where = path or "<root>"
    if value is None:
        if schema.get("nullable"):
            return
        causes.append(Cause(where, f'Invalid value: "null": {where} in body must be of type '
                            f'{schema.get("type", "object")}: "null"'))
        return
    wanted = schema.get("type")
    if schema.get("x-kubernetes-int-or-string"):
        if not (isinstance(value, str) or _type_ok(value, "integer")):
            causes.append(Cause(where, f"Invalid value: {_shown(value)}: {where} in body must "
                                "be of type integer-or-string"))
            return
    elif isinstance(wanted, str) and not _type_ok(value, wanted):
        causes.append(Cause(where, f"Invalid value: {_shown(value)}: {where} in body must be of "
                            f'type {wanted}: "{_type_name(value)}"'))
        return
    before = len(causes)
    _value_rules(value, schema, where, causes)
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for name in schema.get("required") or []:
            if name not in value:
                causes.append(required(f"{path}.{name}" if path else name))
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            sub = props.get(key) or (extra if isinstance(extra, dict) else None)
            if sub is None or not path and key in ROOT_FIELDS:
                continue  # metadata is an ObjectMeta, checked by the generic rules
            _validate(item, sub, old.get(key) if isinstance(old, dict) else None,
                      f"{path}.{key}" if path else key, causes)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        olds = old if isinstance(old, list) else []
        for i, item in enumerate(value):
            _validate(item, schema["items"], olds[i] if i < len(olds) else None,
                      f"{path}[{i}]", causes)
    if len(causes) == before:  # same as upstream: CEL rules run on values that are valid
        _cel_rules(value, schema, old, path, causes)


def _value_rules(value: Any, schema: Obj, where: str, causes: list[Cause]) -> None:
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        causes.append(not_supported(where, value, [str(e) for e in enum]))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        for key, op, text in (("minimum", lambda a, b: a < b, "greater than or equal to"),
                              ("maximum", lambda a, b: a > b, "less than or equal to")):
            bound = schema.get(key)
            if isinstance(bound, (int, float)) and op(value, bound):
                causes.append(Cause(where, f"Invalid value: {_shown(value)}: {where} in body "
                                    f"should be {text} {bound}"))
    if isinstance(value, str):
        max_len, min_len = schema.get("maxLength"), schema.get("minLength")
        if isinstance(max_len, int) and len(value) > max_len:
            causes.append(Cause(where, f"Too long: may not be more than {max_len} bytes",
                                "FieldValueTooLong"))
        if isinstance(min_len, int) and len(value) < min_len:
            causes.append(Cause(where, f"Invalid value: {_shown(value)}: {where} in body should "
                                f"be at least {min_len} chars long"))
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and re.search(pattern, value) is None:
            causes.append(Cause(where, f"Invalid value: {_shown(value)}: {where} in body should "
                                f"match '{pattern}'"))
    if isinstance(value, list):
        max_items, min_items = schema.get("maxItems"), schema.get("minItems")
        if isinstance(max_items, int) and len(value) > max_items:
            causes.append(Cause(where, f"Too many: {len(value)}: must have at most {max_items} "
                                "items", "FieldValueTooMany"))
        if isinstance(min_items, int) and len(value) < min_items:
            causes.append(Cause(where, f"Invalid value: {len(value)}: {where} in body should "
                                f"have at least {min_items} items"))


_REASONS = {"FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired",
            "FieldValueDuplicate"}


def _cel_rules(value: Any, schema: Obj, old: Any, path: str, causes: list[Cause]) -> None:
    for rule in schema.get("x-kubernetes-validations") or []:
        if not isinstance(rule, dict):
            continue
        program = crd_cel.compile_rule(str(rule.get("rule") or ""))
        if isinstance(program, crd_cel.CompileError):
            continue  # refused when the CRD was written
        if program.transition and old is None:
            continue  # same as upstream: transition rules only run on updates
        where = path + str(rule.get("fieldPath") or "") if rule.get("fieldPath") else path
        where = where.lstrip(".") or "<root>"
        try:
            ok = crd_cel.evaluate_rule(program, value, old)
        except crd_cel.RuleError as e:
            causes.append(Cause(where, f"Invalid value: {_shown(value)}: {e}"))
            continue
        if not isinstance(ok, bool):
            causes.append(Cause(where, f"Invalid value: {_shown(value)}: CEL result of type "
                                "string could not be converted to bool"))
            continue
        if not ok:
            message = _message(rule, value, old)
            reason = rule.get("reason") if rule.get("reason") in _REASONS else "FieldValueInvalid"
            shown = f'"{_type_name(value)}"' if isinstance(value, (dict, list)) else _shown(value)
            prefix = {"FieldValueForbidden": "Forbidden", "FieldValueRequired": "Required value",
                      "FieldValueDuplicate": f"Duplicate value: {shown}"}.get(
                str(reason), f"Invalid value: {shown}")
            causes.append(Cause(where, f"{prefix}: {message}", str(reason)))


def _message(rule: Obj, value: Any, old: Any) -> str:
    """The rule's messageExpression when it evaluates to a string, else its message, else
    upstream's `failed rule: <rule>`."""
    expression = rule.get("messageExpression")
    if isinstance(expression, str) and expression:
        program = crd_cel.compile_rule(expression, result="string")
        if not isinstance(program, crd_cel.CompileError):
            try:
                text = crd_cel.evaluate_rule(program, value, old)
            except crd_cel.RuleError:
                text = None
            if isinstance(text, str) and text.strip():
                return text
    return str(rule.get("message") or f"failed rule: {rule.get('rule')}")
