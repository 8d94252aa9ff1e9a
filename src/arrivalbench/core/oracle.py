"""The oracle: the pipeline's final table against the batch recomputation. Pure.

Rows are a multiset, row order never matters, column names compare case-insensitively. Each
value is first brought to the declared type where that loses nothing (an integral DOUBLE to
BIGINT, a midnight TIMESTAMP to DATE, 12.5 to DECIMAL(10,2)); what cannot be brought over stays
as it was and then compares unequal unless both sides are numbers within the tolerance.
Approximate numbers (DOUBLE, REAL, or anything compared with a float) use the task's relative
tolerance; NULL equals NULL.
"""

from __future__ import annotations

import datetime as dt
import math
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import cache
from typing import Any

import duckdb

from arrivalbench.core.engine import Table
from arrivalbench.core.task import Column, Target
from arrivalbench.core.values import JSON, row_sort_key, to_json

EXAMPLES = 5  # examples kept per kind of difference

_INTEGER = {"tinyint", "smallint", "integer", "bigint", "hugeint", "utinyint", "usmallint",
            "uinteger", "ubigint", "uhugeint"}
_APPROXIMATE = {"float", "double"}
_FAMILY = {**dict.fromkeys(_INTEGER, "number"), **dict.fromkeys(_APPROXIMATE, "number"),
           "decimal": "number", "date": "temporal", "timestamp": "temporal",
           "timestamp with time zone": "temporal", "timestamp_s": "temporal",
           "timestamp_ms": "temporal", "timestamp_ns": "temporal", "time": "time",
           "varchar": "text", "enum": "text", "boolean": "boolean", "uuid": "text",
           "interval": "interval"}


@cache
def _type_id(declared: str) -> str:
    try:
        return str(duckdb.sqltype(declared).id)
    except duckdb.Error:
        return declared.lower()


def _family(declared: str) -> str:
    return _FAMILY.get(_type_id(declared), _type_id(declared))


@cache
def _scale(declared: str) -> int:
    children = dict(duckdb.sqltype(declared).children)
    return int(str(children["scale"]))


def conform(value: object, declared: str) -> object:
    """`value` as the declared type if the cast is lossless, else `value` unchanged."""
    if value is None:
        return None
    kind = _type_id(declared)
    if kind in _INTEGER:
        if isinstance(value, float | Decimal) and not isinstance(value, bool) and \
                math.isfinite(value) and value == int(value):
            return int(value)
    elif kind == "decimal":
        if isinstance(value, int) and not isinstance(value, bool):
            return Decimal(value)
        if isinstance(value, float) and math.isfinite(value):
            exact = Decimal(repr(value))
            exponent = exact.as_tuple().exponent
            if isinstance(exponent, int) and -exponent <= _scale(declared):
                return exact
    elif kind in _APPROXIMATE:
        if isinstance(value, int | Decimal) and not isinstance(value, bool):
            return float(value)
    elif kind == "date":
        if isinstance(value, dt.datetime) and value.time() == dt.time() and value.tzinfo is None:
            return value.date()
    elif kind == "timestamp" and type(value) is dt.date:
        return dt.datetime.combine(value, dt.time())
    elif kind == "varchar" and isinstance(value, uuid.UUID):
        return str(value)  # DuckDB's own text form of a UUID: lower case, with hyphens
    return value


def same(a: object, b: object, tolerance: float, approximate: bool) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if _numeric(a) and _numeric(b):
        if approximate or isinstance(a, float) or isinstance(b, float):
            x, y = float(a), float(b)  # type: ignore[arg-type]
            if math.isnan(x) or math.isnan(y):
                return math.isnan(x) and math.isnan(y)
            return math.isclose(x, y, rel_tol=tolerance, abs_tol=tolerance)
        return a == b
    return type(a) is type(b) and a == b


def _numeric(value: object) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


@dataclass(frozen=True)
class Diff:
    """What is wrong with the final table; empty means PASS."""

    schema: tuple[dict[str, JSON], ...] = ()
    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[JSON]] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)
    # The target that differs, named only in a task of several targets (so that a
    # single-target verdict keeps its bytes).
    table: str | None = None

    @property
    def ok(self) -> bool:
        return not self.schema and not any(self.counts.values())

    def document(self) -> dict[str, JSON]:
        if self.ok:
            return {}
        named: dict[str, JSON] = {} if self.table is None else {"table": self.table}
        return {"schema": list(self.schema), "counts": self.counts, "examples": self.examples,
                "rows": self.rows, **named}


def compare_all(expected: Sequence[Table], observed: Sequence[Table],
                targets: Sequence[Target], *, unread: frozenset[str] = frozenset()) -> Diff:
    """Every target, in the task's order: the first that differs, named when the task keeps
    several tables; the first target's (empty) diff when all agree. One target compares as
    `compare` does, byte for byte. Columns named in `unread` (lower case: the load time a
    landing stamps) are left out of both sides."""
    if not (len(expected) == len(observed) == len(targets)) or not targets:
        raise ValueError(f"{len(expected)} expected and {len(observed)} observed tables for "
                         f"{len(targets)} targets")
    if unread:
        expected = [_without(t, unread) for t in expected]
        observed = [_without(t, unread) for t in observed]
        targets = [replace(t, columns=tuple(c for c in t.columns
                                            if c.name.lower() not in unread))
                   for t in targets]
    diffs = [compare(e, o, t) for e, o, t in zip(expected, observed, targets, strict=True)]
    differing = next((d for d in diffs if not d.ok), None)
    if differing is None or len(targets) == 1:
        return differing or diffs[0]
    return replace(differing, table=targets[diffs.index(differing)].name)


def _without(table: Table, names: frozenset[str]) -> Table:
    keep = [i for i, (name, _type) in enumerate(table.columns) if name.lower() not in names]
    if len(keep) == len(table.columns):
        return table
    return Table(tuple(table.columns[i] for i in keep),
                 tuple(tuple(row[i] for i in keep) for row in table.rows))


def compare(expected: Table, observed: Table, target: Target) -> Diff:
    """Align `observed` on the target key against `expected` (already in the declared types):
    the schema first, then the rows of each key, then the tally of what differs."""
    got_index: dict[str, int] = {}
    for i, (name, _type) in enumerate(observed.columns):
        got_index.setdefault(name.lower(), i)
    schema = _schema(observed, target, got_index)
    if any(k.lower() not in got_index for k in target.key):
        return Diff(tuple(schema), rows=_sizes(expected, observed))
    exp_index = {name.lower(): i for i, (name, _type) in enumerate(expected.columns)}
    if not schema and _identical(expected, observed, [got_index[n] for n in exp_index]):
        return Diff(rows=_sizes(expected, observed))
    columns = [c for c in target.columns if c.name.lower() in got_index]
    found = _align(_Aligned(columns, target), expected, exp_index, observed, got_index)
    counts, examples = _tally(found)
    return Diff(tuple(schema), counts, examples, _sizes(expected, observed))


def _schema(observed: Table, target: Target, got_index: dict[str, int]) -> list[dict[str, JSON]]:
    """Missing, incompatible and extra columns, and names that repeat ignoring case."""
    declared = {c.name.lower() for c in target.columns}
    schema: list[dict[str, JSON]] = []
    for column in target.columns:
        position = got_index.get(column.name.lower())
        if position is None:
            schema.append({"problem": "missing", "column": column.name, "expected": column.type})
        elif not _compatible(observed.columns[position][1], column.type):
            schema.append({"problem": "incompatible", "column": column.name,
                           "got": observed.columns[position][1], "expected": column.type})
    for name, got_type in observed.columns:
        if name.lower() not in declared:
            schema.append({"problem": "extra", "column": name, "got": got_type})
    if len(got_index) < len(observed.columns):
        schema.append({"problem": "ambiguous", "column": "names repeat ignoring case"})
    return schema


class _Aligned:
    """The columns both tables have, split into key and value positions."""

    def __init__(self, columns: list[Column], target: Target) -> None:
        self.columns = columns
        self.tolerance = target.tolerance
        self.key_at = [i for i, c in enumerate(columns) if c.name in target.key]
        self.value_at = [i for i in range(len(columns)) if i not in self.key_at]
        self.approximate = [_type_id(c.type) in _APPROXIMATE for c in columns]

    def project(self, table: Table, index: dict[str, int]) -> list[tuple[object, ...]]:
        picks = [(index[c.name.lower()], c.type) for c in self.columns]
        return [tuple(conform(row[i], ty) for i, ty in picks) for row in table.rows]

    def key_of(self, row: tuple[object, ...]) -> tuple[Any, ...]:
        return row_sort_key(tuple(row[i] for i in self.key_at))

    def same_values(self, got: tuple[object, ...], want: tuple[object, ...]) -> bool:
        return all(same(got[i], want[i], self.tolerance, self.approximate[i])
                   for i in self.value_at)


Found = dict[str, list[tuple[tuple[Any, ...], JSON]]]


def _align(on: _Aligned, expected: Table, exp_index: dict[str, int], observed: Table,
           got_index: dict[str, int]) -> Found:
    """Every difference, key by key in key order: rows missing, extra, duplicated or with a
    changed value."""
    want = _group(on.project(expected, exp_index), on.key_of)
    got = _group(on.project(observed, got_index), on.key_of)
    found: Found = {"missing": [], "extra": [], "duplicated": [], "changed": []}
    for key in sorted(want.keys() | got.keys()):
        exp_rows, got_rows = want.get(key, []), got.get(key, [])
        sample = (exp_rows or got_rows)[0]
        key_doc = {on.columns[i].name: to_json(sample[i]) for i in on.key_at}
        unmatched = list(got_rows)
        leftover = []
        for row in exp_rows:
            match = next((g for g in unmatched if on.same_values(g, row)), None)
            if match is None:
                leftover.append(row)
            else:
                unmatched.remove(match)
        for row in leftover:
            if unmatched:
                other = unmatched.pop(0)
                for i in on.value_at:
                    if not same(other[i], row[i], on.tolerance, on.approximate[i]):
                        found["changed"].append((key, {"key": key_doc,
                                                       "column": on.columns[i].name,
                                                       "got": to_json(other[i]),
                                                       "expected": to_json(row[i])}))
            else:
                found["missing"].append((key, {"key": key_doc}))
        if unmatched and exp_rows:
            found["duplicated"].append((key, {"key": key_doc, "copies": len(unmatched)}))
        elif unmatched:
            found["extra"].append((key, {"key": key_doc, "rows": len(unmatched)}))
    return found


def _tally(found: Found) -> tuple[dict[str, int], dict[str, list[JSON]]]:
    """Counts of rows per kind of difference, and the first examples of each."""
    counts = {kind: len(items) for kind, items in found.items()}
    counts["duplicated"] = sum(item["copies"] for _, item in found["duplicated"])
    counts["extra"] = sum(item["rows"] for _, item in found["extra"])
    examples = {kind: [doc for _, doc in items[:EXAMPLES]] for kind, items in found.items()
                if items}
    return counts, examples


def _identical(expected: Table, observed: Table, order: list[int]) -> bool:
    """The common case, decided fast: the same rows exactly, as multisets. Equal values pass
    the full comparison too, so only a True answer is trusted; anything else (unequal rows, NaN,
    unhashable nested values) goes the slow way."""
    if len(expected.rows) != len(observed.rows):
        return False
    try:
        got = Counter(observed.rows) if order == list(range(len(observed.columns))) else \
            Counter(tuple(row[i] for i in order) for row in observed.rows)
        return got == Counter(expected.rows)
    except TypeError:
        return False


def _group(rows: Sequence[tuple[object, ...]],
           key_of: Callable[[tuple[object, ...]], tuple[Any, ...]]
           ) -> dict[tuple[Any, ...], list[tuple[object, ...]]]:
    groups: dict[tuple[Any, ...], list[tuple[object, ...]]] = {}
    for row in sorted(rows, key=row_sort_key):
        groups.setdefault(key_of(row), []).append(row)
    return groups


def _sizes(expected: Table, observed: Table) -> dict[str, int]:
    return {"expected": len(expected.rows), "got": len(observed.rows)}


def _compatible(got: str, declared: str) -> bool:
    return _family(got) == _family(declared)

