"""The logical log of a task: its files read, cast to the declared types, and put on one time axis.

Casting goes through DuckDB so that a log value means exactly what the same literal means to the
pipeline. Every record keeps its row number in its file, which is how schedules refer to it.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from arrivalbench.core.task import Source, TaskSpec
from arrivalbench.core.textfile import read_text
from arrivalbench.core.values import sort_key
from arrivalbench.errors import TaskError


@dataclass(frozen=True)
class Event:
    """One record on the log's time axis: what a schedule needs to know of it."""

    source: str
    row: int
    time: object
    key: tuple[object, ...]
    entity: tuple[object, ...] = ()
    version: object = None


@dataclass(frozen=True, eq=False)
class Log:
    tables: dict[str, pa.Table]
    timeline: tuple[Event, ...]  # base order: event time, then source, then record key
    evolution: pa.Array | None  # the evolution column's values, one per row of its source


def load_log(spec: TaskSpec) -> Log:
    """The task's log: one Arrow table per source, cast to the declared column types by DuckDB,
    and the timeline of every record in base order (event time, then source, then record key)
    that schedules cut into batches. Cached per task; a malformed log raises TaskError naming
    the file, the line and the value."""
    return _load(spec)


@functools.lru_cache(maxsize=64)  # the whole corpus, with room for a user's tasks
def _load(spec: TaskSpec) -> Log:
    con = duckdb.connect(config={"threads": 1})
    try:
        tables = {s.name: _read_source(con, s, f) for s, f in zip(spec.sources, spec.log_files,
                                                                   strict=True)}
        evolution = None
        if spec.evolution is not None:
            rows = tables[spec.evolution.source].num_rows
            evolution = con.sql(
                f"SELECT CASE WHEN i % 3 = 0 THEN NULL "
                f"ELSE TRY_CAST(i % 7 + 1 AS {spec.evolution.type}) END AS v "
                f"FROM range({rows}) t(i) ORDER BY i").to_arrow_table().column(0).combine_chunks()
    finally:
        con.close()
    return Log(tables, timeline(spec.sources, tables), evolution)


def timeline(sources: tuple[Source, ...], tables: dict[str, pa.Table]) -> tuple[Event, ...]:
    events = []
    for source in sources:
        table = tables[source.name]

        def column(name: str | None, table: pa.Table = table) -> list[Any]:
            return table.column(name).to_pylist() if name else [None] * table.num_rows

        times = column(source.event_time)
        keys = list(zip(*(column(c) for c in source.record_key), strict=True))
        entities = (list(zip(*(column(c) for c in source.entity_key), strict=True))
                    if source.entity_key else [()] * table.num_rows)
        versions = column(source.version)
        events += [Event(source.name, row, times[row], keys[row], entities[row], versions[row])
                   for row in range(table.num_rows)]
    events.sort(key=lambda e: (sort_key(e.time), e.source, tuple(sort_key(k) for k in e.key)))
    return tuple(events)


def _read_source(con: duckdb.DuckDBPyConnection, source: Source, file: Path) -> pa.Table:
    names = [c.name for c in source.columns]
    if file.suffix == ".jsonl":
        raw = _read_jsonl(file, names)
        con.register("raw", raw)
        first_line = 1
    elif file.suffix == ".csv":
        con.execute("CREATE OR REPLACE TEMP VIEW raw AS SELECT *, row_number() OVER () AS __line "
                    f"FROM read_csv({_literal(file)}, all_varchar = true, header = true)")
        first_line = 2  # line 1 is the header
    else:
        con.execute("CREATE OR REPLACE TEMP VIEW raw AS SELECT *, row_number() OVER () AS __line "
                    f"FROM read_parquet({_literal(file)})")
        first_line = 1
    present = {r[0] for r in con.execute("SELECT name FROM pragma_table_info('raw')").fetchall()}
    unknown = sorted(present - set(names) - {"__line"})
    if unknown:
        raise TaskError(f"{file}: column {unknown[0]!r} is not declared for source "
                        f"{source.name!r}; declared: {', '.join(names)}")
    for column in source.columns:
        if column.name not in present:
            continue
        value = f'"{column.name}"'
        cast = f"TRY_CAST({value} AS {column.type})"
        # A cast that rounds ("1.5" to BIGINT, "12.555" to DECIMAL(10,2), a time to DATE)
        # would change the log silently: compared through a wider type, it must not move.
        wider = _WIDER.get(str(duckdb.sqltype(column.type).id))
        lossy = f" OR TRY_CAST({value} AS {wider}) IS DISTINCT FROM {cast}::{wider}" \
            if wider else ""
        bad = con.execute(
            f"SELECT __line, {value}::VARCHAR FROM raw WHERE {value} IS NOT NULL "
            f"AND ({cast} IS NULL{lossy}) ORDER BY __line LIMIT 1").fetchone()
        if bad is not None:
            line = bad[0] + first_line - 1
            raise TaskError(f"{file}:{line}: {column.name} = {bad[1]!r} does not cast to "
                            f"{column.type} without loss; fix the value or the declared type")
    select = ", ".join(
        f'CAST("{c.name}" AS {c.type}) AS "{c.name}"' if c.name in present
        else f'CAST(NULL AS {c.type}) AS "{c.name}"' for c in source.columns)
    table = con.sql(f"SELECT {select} FROM raw ORDER BY __line").to_arrow_table()
    _check_unique(file, source, table)
    return table.combine_chunks()


def _literal(file: Path) -> str:
    """A path as an SQL string literal: a view's definition cannot take prepared parameters."""
    return "'" + str(file).replace("'", "''") + "'"


_WIDER = {**dict.fromkeys(("tinyint", "smallint", "integer", "bigint", "utinyint", "usmallint",
                           "uinteger", "ubigint", "decimal"), "DOUBLE"),
          "date": "TIMESTAMP"}


def _read_jsonl(file: Path, names: list[str]) -> pa.Table:
    """JSON scalars become text, cast afterwards by DuckDB: one cast path for every format."""
    columns: dict[str, list[str | None]] = {n: [] for n in names}
    lines: list[int] = []
    text = read_text(file, TaskError, allow_empty=True)
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TaskError(f"{file}:{number}: not a JSON object ({exc.msg})") from None
        if not isinstance(record, dict):
            raise TaskError(f"{file}:{number}: each line must be one JSON object")
        for key, value in record.items():
            if key not in columns:
                raise TaskError(f"{file}:{number}: key {key!r} is not a declared column; "
                                f"declared: {', '.join(names)}")
            if isinstance(value, dict | list):
                raise TaskError(f"{file}:{number}: {key} = {value!r}: values must be JSON "
                                "scalars or null")
        for name in names:
            value = record.get(name)
            columns[name].append(None if value is None else
                                 value if isinstance(value, str) else json.dumps(value))
        lines.append(number)
    arrays = {n: pa.array(v, pa.string()) for n, v in columns.items()}
    arrays["__line"] = pa.array(lines, pa.int64())
    return pa.table(arrays)


def _check_unique(file: Path, source: Source, table: pa.Table) -> None:
    keys = list(zip(*(table.column(c).to_pylist() for c in source.record_key), strict=True))
    seen: dict[tuple[object, ...], int] = {}
    for row, key in enumerate(keys):
        if key in seen:
            raise TaskError(f"{file}: record_key {dict(zip(source.record_key, key, strict=True))} "
                            f"appears in records {seen[key] + 1} and {row + 1}; the log holds "
                            "every record once")
        seen[key] = row
