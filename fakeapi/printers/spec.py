"""How a `kubectl get` column spec is declared and evaluated: columns (a JSON path or a
cell function over the object and a RowContext), table specs, the cell helpers the per-kind
specs share (paths, conditions, lists), and upstream's human-readable ages (HumanDuration).

The per-kind specs are `fakeapi.printers.columns` and `fakeapi.printers.workloads`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from fakeapi.machinery.timestamps import parse_time_or_none, rfc3339

Cell = str | int | bool | None
"""A Table cell as it goes on the wire (kubectl prints None as an empty cell)."""

_NS_PER_SECOND = 1_000_000_000

# --- time -------------------------------------------------------------------------------------


def human_duration(d: timedelta) -> str:
    """Format a duration like apimachinery's `duration.HumanDuration` (~2-3 significant figures).

    Up to two seconds of negative skew reads as "0s"; anything earlier is "<invalid>".
    """
    ns = (d.days * 86_400 + d.seconds) * _NS_PER_SECOND + d.microseconds * 1_000
    seconds = _trunc_div(ns, _NS_PER_SECOND)
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        rest = seconds % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if hours < 24 * 8:
        rest = hours % 24
        return f"{days}d{rest}h" if rest else f"{days}d"
    if hours < 24 * 365 * 2:
        return f"{days}d"
    years = days // 365
    if hours < 24 * 365 * 8:
        rest = days % 365
        return f"{years}y{rest}d" if rest else f"{years}y"
    return f"{years}y"


def _trunc_div(a: int, b: int) -> int:
    """Integer division truncating toward zero, as Go's int conversion does."""
    q = abs(a) // b
    return q if a >= 0 else -q


def since(value: object, now: datetime) -> str:
    """Age of a wire timestamp at `now`, or "<unknown>" for a missing one (upstream's zero)."""
    ts = parse_time_or_none(value)
    return "<unknown>" if ts is None else elapsed(ts, now)


def elapsed(ts: datetime, now: datetime) -> str:
    """HumanDuration from `ts` to `now` (naive datetimes are taken as UTC)."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    return human_duration(now - ts)


def _rfc3339(value: object) -> str:
    """A timestamp re-rendered in UTC RFC 3339 at second precision (Go's zero time if unset)."""
    ts = parse_time_or_none(value)
    return "0001-01-01T00:00:00Z" if ts is None else rfc3339(ts)


# --- column specs -----------------------------------------------------------------------------


class RowContext:
    """Per-row evaluation context: the clock reading plus a memo for summaries shared by cells."""

    __slots__ = ("now", "_memo")

    def __init__(self, now: datetime) -> None:
        self.now = now
        self._memo: dict[str, Any] = {}

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """Compute a value once per row (e.g. a pod summary feeding three cells)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def age(self, value: object) -> str:
        """Age of a wire timestamp at this row's `now`."""
        return since(value, self.now)


Obj = dict[str, Any]
CellFn = Callable[[Obj, RowContext], Cell]


@dataclasses.dataclass(frozen=True)
class Column:
    """One Table column: its definition and how to compute its cell from an object dict.

    `value` is either a dotted path into the object (missing → `default`) or a function of
    (object, row context). Columns with priority 1 show only with `kubectl get -o wide`.
    """

    name: str
    value: str | CellFn
    description: str = ""
    type: str = "string"
    format: str = ""
    priority: int = 0
    default: Cell = ""

    def definition(self) -> dict[str, Any]:
        """The `TableColumnDefinition` wire form."""
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }

    def cell(self, obj: Obj, ctx: RowContext) -> Cell:
        """This column's cell for one object."""
        if isinstance(self.value, str):
            found = get_path(obj, self.value)
            return self.default if found is None else found
        return self.value(obj, ctx)


def col(name: str, value: str | CellFn, description: str, **kw: Any) -> Column:
    """A column shown by plain `kubectl get`."""
    return Column(name, value, description, **kw)


def wide(name: str, value: str | CellFn, description: str, **kw: Any) -> Column:
    """A priority-1 column, shown only by `kubectl get -o wide`."""
    return Column(name, value, description, priority=1, **kw)


RowConditionsFn = Callable[[Obj], list[dict[str, str]]]


@dataclasses.dataclass(frozen=True)
class TableSpec:
    """The columns of one kind, plus optional row conditions (upstream marks finished pods)."""

    columns: tuple[Column, ...]
    row_conditions: RowConditionsFn | None = None


def get_path(obj: object, path: str) -> Any:
    """Value at a dotted path of nested dicts, or None when any step is missing."""
    cur = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
        if cur is None:
            return None
    return cur


def list_at(obj: object, path: str) -> list[Any]:
    found = get_path(obj, path)
    return [x for x in found if isinstance(x, dict)] if isinstance(found, list) else []


def dict_at(obj: object, path: str) -> dict[str, Any]:
    found = get_path(obj, path)
    return found if isinstance(found, dict) else {}


def condition(obj: Obj, *types: str) -> dict[str, Any] | None:
    """The first status condition whose type is one of `types`."""
    for cond in list_at(obj, "status.conditions"):
        if cond.get("type") in types:
            return cond
    return None


def condition_true(conditions: list[dict[str, Any]], cond_type: object) -> bool:
    """Whether the first condition of `cond_type` has status True."""
    for cond in conditions:
        if cond.get("type") == cond_type:
            return cond.get("status") == "True"
    return False


def condition_status(*types: str) -> CellFn:
    """Cell: status of the first condition of one of `types`, None (`<none>`) when absent."""

    def cell(obj: Obj, _: RowContext) -> Cell:
        cond = condition(obj, *types)
        return None if cond is None else str(cond.get("status") or "")

    return cell


def list_with_more(items: Sequence[str], limit: int = 3, empty: str = "<none>") -> str:
    """Comma-joined items, cut after `limit` with a "+ N more..." tail as upstream lists do."""
    if not items:
        return empty
    shown = ",".join(items[:limit])
    return f"{shown} + {len(items) - limit} more..." if len(items) > limit else shown


def unique(values: Iterable[Any]) -> list[str]:
    return list(dict.fromkeys(str(v) for v in values if v))


def _age(obj: Obj, ctx: RowContext) -> Cell:
    return ctx.age(get_path(obj, "metadata.creationTimestamp"))


def _created_at(obj: Obj, _: RowContext) -> Cell:
    return _rfc3339(get_path(obj, "metadata.creationTimestamp"))


NAME = col("Name", "metadata.name", "Name of the object.", format="name")
AGE = col("Age", _age, "Time since the object was created.")
CREATED_AT = col("Created At", _created_at, "Creation time of the object.", type="date")

"""Columns for kinds without a spec of their own."""
