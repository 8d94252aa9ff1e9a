"""The deterministic cost of a replay, read from DuckDB's own profiler.

A statement that can be profiled runs as `EXPLAIN (ANALYZE, FORMAT JSON) <statement>`, which
executes it exactly as it would have run and returns its operator tree with the rows each
operator emitted. Two figures come out of that tree:

- rows read: the rows emitted by scans of tables in schema `main` of the replay's database,
  after pushed-down filters. Logical rows, not the physical `rows_scanned`: on logs of a few
  hundred records every table fits in one storage vector, so a physical count could not tell a
  filtered read from a full one. The delivered batch (schema `incoming`) and temporary tables
  (gone at the end of each run) are not persistent state and do not count.
- rows written: the rows fed into INSERT, UPDATE, DELETE, MERGE and CREATE TABLE AS operators.
  A statement whose plan the profiler does not report (an INSERT of literal VALUES) counts none.

Transaction control and plain DDL have no operator tree worth reading and run as they are.
Counts never involve a clock, so they are the same on every machine.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import duckdb

from arrivalbench.errors import ParameterError

PREFIX = "EXPLAIN (ANALYZE, FORMAT JSON)\n"  # on its own line: the statement keeps its lines

# Statement kinds whose plan reads or writes table rows. Everything else (transactions, DROP,
# ALTER, PRAGMA, CALL...) runs unprofiled; the sandbox refused the dangerous kinds earlier.
PROFILED = frozenset({
    duckdb.StatementType.SELECT, duckdb.StatementType.INSERT, duckdb.StatementType.UPDATE,
    duckdb.StatementType.DELETE, duckdb.StatementType.MERGE_INTO, duckdb.StatementType.CREATE,
})
# Kinds that can read tables but whose plan the profiler does not report (EXECUTE of a prepared
# statement returns no operator tree): they run, and the replay's cost says it is incomplete.
OPAQUE = frozenset({duckdb.StatementType.EXECUTE, duckdb.StatementType.CALL})

_WRITERS = frozenset({"INSERT", "BATCH_INSERT", "UPDATE", "DELETE_OPERATOR", "DELETE",
                      "MERGE_INTO", "CREATE_TABLE_AS", "BATCH_CREATE_TABLE_AS"})


# Engines whose profiler reports rows per table scan, and schedules whose replays deliver
# records through `incoming` (every built-in one: amplification divides by what they deliver).
MEASURABLE_ENGINES = frozenset({"duckdb"})  # its profiler counts the rows a statement reads


def check_measurable(engine: str, script: bool = True) -> None:
    """Refuse cost measurement where it would mean nothing, in one line. Only a SQL script's
    own statements are profiled: a dbt project's are sent by dbt. (Every generated schedule
    can be measured; the kinds are checked where a plan is made.)"""
    if not script:
        raise ParameterError("measure", None, "a dbt project's statements are not measured; "
                             "leave it out")
    if engine not in MEASURABLE_ENGINES:
        raise ParameterError("measure", None, f"engine {engine!r} cannot measure rows read; "
                             f"cost is measured on {', '.join(sorted(MEASURABLE_ENGINES))}")


@dataclass(frozen=True)
class Cost:
    """What one replay read and wrote, and the records its schedule delivered."""

    rows_read: int
    rows_written: int
    records: int
    unprofiled: int = 0  # statements run that could read rows the profiler could not see

    @property
    def read_amplification(self) -> float:
        """Rows read over the whole replay per record delivered (0 when nothing arrived)."""
        return round(self.rows_read / self.records, 6) if self.records else 0.0

    @property
    def complete(self) -> bool:
        return self.unprofiled == 0

    def document(self) -> dict[str, int | float]:
        doc: dict[str, int | float] = {
            "rows_read": self.rows_read, "rows_written": self.rows_written,
            "read_amplification": self.read_amplification}
        if self.unprofiled:
            doc["unprofiled"] = self.unprofiled
        return doc


def wrap(con: duckdb.DuckDBPyConnection, statement: Any) -> Any | None:
    """The profiled form of `statement`, or None when it runs as it is. The wrapped text is
    parsed again and must be exactly one EXPLAIN: a statement whose text does not survive the
    prefix (it never should) runs unprofiled rather than as something else."""
    try:
        if statement.type not in PROFILED:
            return None
    except ValueError:  # a kind the Python API has no name for: never wrapped
        return None
    try:
        parsed = con.extract_statements(PREFIX + statement.query)
    except Exception:  # the parser raises non-DuckDB errors on odd input too
        return None
    if len(parsed) != 1 or parsed[0].type != duckdb.StatementType.EXPLAIN:
        return None
    return parsed[0]


def _operators(node: Mapping[str, Any], writer: bool = False
               ) -> Iterator[tuple[Mapping[str, Any], bool]]:
    """Every operator, and whether a write operator is above it."""
    yield node, writer
    below = writer or node.get("type") in _WRITERS
    for child in node.get("children", ()):
        yield from _operators(child, below)


def measure(profile: str, database: str) -> tuple[int, int]:
    """(rows read, rows written) of one profiled statement's JSON profile."""
    tree = json.loads(profile)
    read = written = 0
    prefix = f"{database}.main.".lower()
    for root in tree.get("operator", ()):
        for op, under_writer in _operators(root):
            kind = op.get("type")
            if kind == "TABLE_SCAN":
                table = op.get("extra_info", {}).get("Table")
                if isinstance(table, str) and table.lower().startswith(prefix):
                    read += int(op.get("intermediate_rows", 0))
            elif kind in _WRITERS and not under_writer:
                # The outermost writer only: INSERT ... ON CONFLICT runs as a MERGE_INTO whose
                # child INSERT sees the same rows again.
                written += sum(int(c.get("intermediate_rows", 0))
                               for c in op.get("children", ()) if c.get("type") not in _WRITERS)
    return read, written


class Meter:
    """Adds up the profiles of one replay's statements."""

    def __init__(self) -> None:
        self.rows_read = 0
        self.rows_written = 0
        self.unprofiled = 0
        self.database: str | None = None  # the replay's, asked once
        self._wrapped: dict[int, Any | None] = {}

    def wrap(self, con: duckdb.DuckDBPyConnection, index: int, statement: Any) -> Any | None:
        """`wrap`, parsed once per statement of the replay's script rather than once per run."""
        if index not in self._wrapped:
            self._wrapped[index] = wrap(con, statement)
        return self._wrapped[index]

    def skip(self, statement: Any) -> None:
        """Note a statement that ran unprofiled, if it could have read rows unseen."""
        try:
            if statement.type in OPAQUE:
                self.unprofiled += 1
        except ValueError:
            self.unprofiled += 1

    def add(self, result: duckdb.DuckDBPyConnection, database: str) -> None:
        rows = result.fetchall()
        for row in rows:
            if len(row) >= 2 and isinstance(row[1], str):
                read, written = measure(row[1], database)
                self.rows_read += read
                self.rows_written += written

    def cost(self, records: int) -> Cost:
        return Cost(self.rows_read, self.rows_written, records, self.unprofiled)
