"""Seeded mutations of valid DRA objects into hostile requests (the fuzz suite's generator).

Values are built as Python trees in which some leaves are `Raw` JSON text (numbers no Python
value encodes the same way, lone surrogate escapes, NaN, nesting deeper than any encoder
goes, duplicate keys), then encoded, then optionally damaged at the byte level. Every choice
comes from one `random.Random`, so a seed replays the same requests.
"""

from __future__ import annotations

import base64
import dataclasses
import random
from typing import Any

import orjson
import yaml

JSON = "application/json"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"
YAML = "application/yaml"
MAX_BODY = 4 * 1024 * 1024
"""Bodies are cut here (the server refuses what is over 3 MiB with 413 anyway)."""


@dataclasses.dataclass(frozen=True)
class Raw:
    """JSON text spliced in as it is."""

    text: str


@dataclasses.dataclass(frozen=True)
class Request:
    """One fuzz request, enough to replay it (and to write it down as a regression case)."""

    method: str
    path: str
    ctype: str
    body: bytes

    def to_case(self, case_id: str) -> dict[str, str]:
        """The regression-file form of this request."""
        return {"id": case_id, "method": self.method, "path": self.path, "ctype": self.ctype,
                "body_b64": base64.b64encode(self.body).decode()}


RAW_NUMBERS = ["1" * 5000, "-" + "9" * 400, "1e999", "-1e999", "1e-999", "9223372036854775808",
               "18446744073709551616", "-0", "0.0000000000000000000001", "NaN", "Infinity",
               "-Infinity", "01", "1.", ".5", "0x10", "1_000"]
RAW_STRINGS = [r'"\ud800"', r'"\udfff"', r'"a\ud83d"', r'"\ud83d\ude00"', r'"\u0000"',
               r'"\\ud800"', r'"\u00"', r'"\x41"', '"\t"', '"\x01"']
HOSTILE_STRINGS = ["", " ", "a\nb", "\r\nSet-Cookie: x", "\x00", "é", "日本", "😀", "%", "..",
                   ".", "/", "a/b", "A" * 254, "a" * 64, "x" * 70_000, '"', "\\", "\u2028",
                   "${x}", "true", "null", "-", "a.b.c", "foo.example.com/bar", "1Gi",
                   "10000000000000000Ti", "0.5", "*", "<script>"]
HOSTILE_KEYS = ["", "bad\nX", "apiVersion", "kind", "metadata", "spec", "status", "$patch",
                "$retainKeys", "$setElementOrder/requests", "$deleteFromPrimitiveList/x",
                "f:spec", ".", "k\x00", "é", "x" * 300, "name", "count", "devices"]


class Mutator:
    """The request generator of one fuzz run."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self._raw: dict[str, str] = {}

    # ----- values ---------------------------------------------------------------------------

    def _placeholder(self, raw: Raw) -> str:
        key = f"\u0001raw{len(self._raw)}\u0001"
        self._raw[key] = raw.text
        return key

    def scalar(self) -> Any:
        """A random scalar, hostile or plain."""
        r = self.rng
        pick = r.randrange(9)
        if pick == 0:
            return Raw(r.choice(RAW_NUMBERS))
        if pick == 1:
            return Raw(r.choice(RAW_STRINGS))
        if pick == 2:
            return r.choice(HOSTILE_STRINGS)
        if pick == 3:
            return r.choice([0, -1, 1, 2**31, 2**63 - 1, -(2**63), 1.5, -0.0, 1e308])
        if pick == 4:
            return r.choice([True, False, None])
        if pick == 5:
            return {}
        if pick == 6:
            return []
        if pick == 7:
            return "".join(r.choice("abc-./ \u00e9\n") for _ in range(r.randrange(12)))
        return r.randrange(-5, 100)

    def deep(self) -> Raw:
        """Nesting around the depth limits of orjson (254, 1,024), the stdlib and Go (10,000)."""
        r = self.rng
        depth = r.choice([50, 253, 254, 255, 300, 1023, 1024, 1025, 2000, 9999, 10_000, 10_001,
                          20_000])
        if r.random() < 0.5:
            return Raw("[" * depth + "1" + "]" * depth)
        return Raw('{"a":' * depth + "1" + "}" * depth)

    def value(self, budget: int = 3) -> Any:
        """A random value: a scalar, a deep structure, or a small random container."""
        r = self.rng
        if budget <= 0 or r.random() < 0.5:
            return self.scalar()
        if r.random() < 0.15:
            return self.deep()
        if r.random() < 0.5:
            return [self.value(budget - 1) for _ in range(r.randrange(4))]
        return {r.choice(HOSTILE_KEYS): self.value(budget - 1) for _ in range(r.randrange(4))}

    # ----- mutating trees -------------------------------------------------------------------

    def mutate(self, obj: Any, rounds: int | None = None) -> Any:
        """`obj` (a deep copy) with a few random changes at random places."""
        tree = orjson.loads(orjson.dumps(obj))
        for _ in range(rounds if rounds is not None else self.rng.randrange(1, 4)):
            tree = self._mutate_once(tree)
        return tree

    def _mutate_once(self, tree: Any) -> Any:
        r = self.rng
        parent, key = self._pick(tree)
        if parent is None:
            return self.value()
        op = r.randrange(6)
        if op == 0:  # delete
            if isinstance(parent, dict):
                parent.pop(key, None)
            elif parent:
                parent.pop(key)
        elif op == 1:  # replace
            parent[key] = self.value()
        elif op == 2 and isinstance(parent, dict):  # add a key
            parent[r.choice(HOSTILE_KEYS)] = self.value()
        elif op == 3:  # wrap
            parent[key] = [parent[key]] if r.random() < 0.5 else {"x": parent[key]}
        elif op == 4 and isinstance(parent, list):  # grow a list (big items only a little)
            small = len(orjson.dumps(parent[key], default=str)) < 4096
            parent.extend(parent[key] for _ in range(r.choice([1, 2, 50, 300]) if small else 1))
        else:
            parent[key] = self.scalar()
        return tree

    def _pick(self, tree: Any) -> tuple[Any, Any]:
        """A random (container, key-or-index) somewhere in `tree`; (None, None) for the root."""
        r = self.rng
        node, parent, key = tree, None, None
        while isinstance(node, (dict, list)) and node and r.random() < 0.75:
            parent = node
            key = r.choice(list(node)) if isinstance(node, dict) else r.randrange(len(node))
            node = node[key]
        return parent, key

    # ----- encoding -------------------------------------------------------------------------

    def encode(self, tree: Any, *, as_yaml: bool = False) -> bytes:
        """JSON (or YAML) text of `tree` with its Raw leaves spliced in, sometimes damaged."""
        self._raw = {}
        text = orjson.dumps(self._swap(tree)).decode()
        for placeholder, raw in self._raw.items():
            text = text.replace(orjson.dumps(placeholder).decode(), raw)
        if self.rng.random() < 0.08:
            text = self._duplicate_a_key(text)
        body = text.encode("utf-8", "surrogatepass")[:MAX_BODY]
        if as_yaml and not self._raw:
            body = yaml.safe_dump(orjson.loads(body), allow_unicode=True).encode()
        if self.rng.random() < 0.08:
            body = self._damage(body)
        return body

    def _swap(self, tree: Any) -> Any:
        if isinstance(tree, Raw):
            return self._placeholder(tree)
        if isinstance(tree, dict):
            return {k: self._swap(v) for k, v in tree.items()}
        if isinstance(tree, list):
            return [self._swap(v) for v in tree]
        return tree

    def _duplicate_a_key(self, text: str) -> str:
        start = text.find('{"')
        if start == -1:
            return text
        return text[: start + 1] + '"dup":1,"dup":2,' + text[start + 1 :]

    def _damage(self, body: bytes) -> bytes:
        r = self.rng
        if not body:
            return b"\xff"
        at = r.randrange(len(body))
        pick = r.randrange(4)
        if pick == 0:
            return body[:at]  # truncated
        if pick == 1:
            return body[:at] + bytes([r.randrange(256)]) + body[at + 1 :]
        if pick == 2:
            return body[:at] + b"\xc3\x28\xed\xa0\x80" + body[at:]  # invalid UTF-8
        return body + b" " + body  # two documents

    def json_patch(self, obj: Any) -> list[Any]:
        """A list of RFC 6902 operations, some sensible, some not."""
        r = self.rng
        paths = ["/metadata/labels/x", "/metadata/annotations", "/spec", "/spec/devices",
                 "/spec/devices/requests/0", "/spec/devices/requests/-", "/status",
                 "/metadata/name", "/metadata/resourceVersion", "/~2", "/a~1b", "", "/",
                 "/spec/devices/requests/99", "/metadata/finalizers/-", "x"]
        ops = []
        for _ in range(r.randrange(1, 4)):
            op: dict[str, Any] = {"op": r.choice(["add", "remove", "replace", "move", "copy",
                                                  "test", "nope"]),
                                  "path": r.choice(paths)}
            if r.random() < 0.8:
                op["value"] = self.value()
            if r.random() < 0.3:
                op["from"] = r.choice(paths)
            ops.append(op)
        return ops
