"""Plain values as they travel between DuckDB, the oracle and canonical JSON.

DuckDB hands back ints, floats, Decimals, dates, datetimes, strings, bytes, lists and dicts.
Two things are needed everywhere: a total order that tolerates NULLs and mixed types (for
deterministic output), and one JSON spelling per value (for byte-identical verdicts).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from decimal import Decimal
from typing import Any

JSON = Any


def sort_key(value: object) -> tuple[Any, ...]:
    """A key that orders any value: NULL first, then by kind, then by value."""
    if value is None:
        return (0,)
    if isinstance(value, bool):
        return (1, "bool", value)
    if isinstance(value, int | Decimal):
        return (1, "num", value)
    if isinstance(value, float):
        # NaN compares false with everything; give it a fixed place after every number.
        return (1, "num", value) if not math.isnan(value) else (1, "nan")
    if isinstance(value, dt.datetime):
        return (1, "datetime", value.replace(tzinfo=None), value.utcoffset() or dt.timedelta())
    if isinstance(value, dt.date | dt.time | dt.timedelta | str | bytes):
        return (1, type(value).__name__, value)
    if isinstance(value, list | tuple):
        return (1, "list", tuple(sort_key(v) for v in value))
    if isinstance(value, dict):
        return (1, "dict", tuple((str(k), sort_key(v)) for k, v in value.items()))
    return (1, type(value).__name__, repr(value))


def row_sort_key(row: tuple[object, ...]) -> tuple[Any, ...]:
    return tuple(sort_key(v) for v in row)


def to_json(value: object) -> JSON:
    """One JSON spelling per value: floats by their shortest round-trip repr (what `json`
    prints), non-finite floats, decimals and temporals as strings."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    return str(value)


def canonical_json(document: JSON) -> str:
    """Sorted keys, no spaces, no NaN: the same document always gives the same bytes."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def digest(data: str | bytes) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return "sha256:" + hashlib.sha256(raw).hexdigest()
