"""Types across the seam: the PostgreSQL type a delivered Arrow column is loaded as, and the
DuckDB type and Python value of what is read back, so that the oracle compares as on DuckDB."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa


def pg_type(arrow: pa.DataType) -> str:
    """The PostgreSQL type a staged Arrow column is loaded as."""
    if pa.types.is_boolean(arrow):
        return "boolean"
    if pa.types.is_int8(arrow) or pa.types.is_int16(arrow) or pa.types.is_uint8(arrow):
        return "smallint"
    if pa.types.is_int32(arrow) or pa.types.is_uint16(arrow):
        return "integer"
    if pa.types.is_integer(arrow):
        return "bigint"
    if pa.types.is_float32(arrow):
        return "real"
    if pa.types.is_floating(arrow):
        return "double precision"
    if pa.types.is_decimal(arrow):
        return f"numeric({arrow.precision},{arrow.scale})"
    if pa.types.is_timestamp(arrow):
        return "timestamptz" if arrow.tz is not None else "timestamp"
    if pa.types.is_date(arrow):
        return "date"
    if pa.types.is_time(arrow):
        return "time"
    if pa.types.is_duration(arrow):
        return "interval"
    if pa.types.is_binary(arrow) or pa.types.is_large_binary(arrow):
        return "bytea"
    return "text"


# PostgreSQL type OIDs -> DuckDB's names, so that the oracle compares types as on DuckDB.
_DUCKDB_NAMES = {
    16: "BOOLEAN", 20: "BIGINT", 21: "SMALLINT", 23: "INTEGER", 26: "UINTEGER",
    700: "FLOAT", 701: "DOUBLE", 25: "VARCHAR", 1043: "VARCHAR", 1042: "VARCHAR",
    18: "VARCHAR", 19: "VARCHAR", 1082: "DATE", 1114: "TIMESTAMP",
    1184: "TIMESTAMP WITH TIME ZONE", 1083: "TIME", 1266: "TIME WITH TIME ZONE",
    1186: "INTERVAL", 2950: "UUID", 114: "JSON", 3802: "JSON", 17: "BLOB",
}


def duckdb_type(column: Any) -> str:
    if column.type_code == 1700:
        if column.precision is not None and column.scale is not None:
            return f"DECIMAL({column.precision},{column.scale})"
        return "DECIMAL"
    return _DUCKDB_NAMES.get(column.type_code, str(column.type_display).upper())


def value(read: object) -> object:
    """A value read back, as DuckDB would give it."""
    if isinstance(read, memoryview):
        return bytes(read)
    if isinstance(read, dt.datetime) and read.tzinfo is not None:
        return read.astimezone(dt.UTC)
    return read
