"""The database of one replay on PostgreSQL: the batch delivered, the pipeline's runs, the reads.

Every replay runs in the database `replay` of this process's server (`pgserver`), as the role
`replay` made for it (`walls`). Before each replay the previous role is dropped with everything
it owned (its tables, views, functions, large objects, the privileges granted to it), so nothing
a pipeline made survives into the next replay.

The delivery log stays in the grading process: before each run the harness copies exactly that
batch's rows into `incoming`, so no later batch ever exists where the pipeline could name it (nor
its size: `pg_relation_size` needs no privilege on a table). Each run is a new connection,
closed at its end, after which the owner undoes what a role can leave on itself; the harness's
reads are bounded in rows and bytes by the server before anything reaches the grader.

A new connection is a new server process, the largest fixed cost of a run on this engine, so
the harness's own connections are kept where nothing of a pipeline's can reach them: the
owner's (the superuser's, whose session only the harness's statements change) for as long as
the process grades, and the reader's for one replay, its session discarded before every read
(`DISCARD ALL`: settings back to its pinned startup options, no plan, cursor, lock or listen
left by a function that ran in an earlier read).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
import pyarrow as pa
import pyarrow.compute as pc
from psycopg import sql as pgsql

from arrivalbench.core import engine
from arrivalbench.core.engine import (
    Failure,
    Limits,
    Phase,
    Table,
    cost,
    normalize_message,
    pgserver,
)
from arrivalbench.core.engine.postgres import walls
from arrivalbench.core.engine.postgres.errors import classify, message
from arrivalbench.core.engine.postgres.lexer import Statements, split
from arrivalbench.core.engine.postgres.types import duckdb_type, pg_type, value
from arrivalbench.core.engine.postgres.walls import REPLAY
from arrivalbench.core.engine.postgres.watchdog import watchdog

# The target's table, by the name the task gives it (PostgreSQL folds unquoted names to lower
# case, DuckDB keeps them): run under the harness's pinned search path, every call qualified.
_EXISTS = """
SELECT c.relname FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'main' AND c.relkind IN ('r', 'v', 'm', 'p')
  AND pg_catalog.lower(c.relname::pg_catalog.text) = pg_catalog.lower(%s::pg_catalog.text)
ORDER BY c.relname::pg_catalog.text = %s::pg_catalog.text DESC, c.relname LIMIT 1
"""


# A dropped table's files are emptied at once but unlinked at the next checkpoint, which a
# server tuned for throwaway data seldom reaches: over a gate's replays the database's folder
# filled with tens of thousands of empty files, each one stat'ed by every size check of the
# watchdog. A checkpoint every so many replays (milliseconds: nothing is fsync'ed) keeps the
# folder near the size of one replay's tables.
CHECKPOINT_EVERY = 32


class _Replays:
    """The `replay` database of a server of this process, whether a role was made in it, and
    the owner's connection to it."""

    def __init__(self, server: pgserver.Server) -> None:
        self.server = server
        with self.server.connect(options=walls.HARNESS_OPTIONS) as con:
            con.execute(f"DROP DATABASE IF EXISTS {REPLAY} WITH (FORCE)")
            con.execute(f"CREATE DATABASE {REPLAY}")
        self._admin = self.server.connect(REPLAY, options=walls.HARNESS_OPTIONS)
        self._admin.execute(walls.prepare_database())
        self.role_exists = False
        self.started = 0

    def admin(self) -> psycopg.Connection[Any]:
        """The owner's connection for the next replay, made again if the last replay lost it
        (a backend that crashed restarts every session of the server)."""
        if self._admin.closed or self._admin.broken:
            self._admin = self.server.connect(REPLAY, options=walls.HARNESS_OPTIONS)
        self.started += 1
        if self.started % CHECKPOINT_EVERY == 0:
            self._admin.execute("CHECKPOINT")
        return self._admin


_replays: dict[tuple[int, int], _Replays] = {}


def _current(limits: Limits) -> _Replays:
    server = pgserver.server(walls.address_space(limits))
    key = (os.getpid(), walls.address_space(limits))
    found = _replays.get(key)
    if found is None or found.server is not server:
        found = _replays[key] = _Replays(server)
    return found


class Database:
    """The database of one replay."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._replays = _current(limits)
        self._server = self._replays.server
        self._admin = self._replays.admin()
        self._admin.execute(walls.reset_role(self._replays.role_exists, limits))
        self._replays.role_exists = True
        self._reading: psycopg.Connection[Any] | None = None  # the reader's, this replay's
        self._deliveries: dict[str, pa.Table] = {}
        self._columns: dict[str, list[str]] = {}  # the columns of each incoming table
        self._types: dict[str, dict[str, str]] = {}
        self._watchdog = watchdog()
        self.engine_seconds = 0.0
        self.meter: cost.Meter | None = None  # never set: grading refuses cost on PostgreSQL

    def split(self, script: str) -> Statements:
        return split(script)

    def _execute(self, con: psycopg.Connection[Any], sql: str,
                 phase: Phase, statement: int | None = None,
                 params: Sequence[object] | None = None) -> psycopg.Cursor[Any]:
        watchdog = self._watchdog
        try:
            with watchdog.armed(con, self.limits, self._server):
                return con.execute(sql, params, prepare=False)
        except psycopg.Error as exc:
            raise self._failure(exc, con, phase, statement) from None

    def _failure(self, exc: psycopg.Error, con: psycopg.Connection[Any], phase: Phase,
                 statement: int | None) -> Failure:
        if self._watchdog.grew:
            return Failure("memory", normalize_message(
                f"the database grew past its limit of {self.limits.disk}"), statement=statement)
        if self._watchdog.fired:
            return Failure("timeout", "the statement ran past the time limit",
                           statement=statement)
        if isinstance(exc, psycopg.OperationalError) and con.closed:
            return Failure(phase, "the server closed the connection", statement=statement)
        kind = classify(exc, False)
        return Failure(phase if kind == "run" else kind, message(exc), statement=statement)

    def stage(self, deliveries: Mapping[str, pa.Table]) -> None:
        """Keep every delivery of the replay, per source, in this process: only `load` puts
        rows where the pipeline can see them, one batch at a time."""
        for name, table in deliveries.items():
            columns = [c for c in table.column_names if c != "__batch"]
            self._types[name] = {c: pg_type(table.schema.field(c).type) for c in columns}
            self._deliveries[name] = table
            self._columns[name] = []

    def load(self, batch: int, columns: Mapping[str, Sequence[str]], *,
             accumulate: bool = False) -> None:
        """Replace the rows of each `incoming.<source>` with the rows of `batch`, in delivery
        order, or with `accumulate` append them to the rows landed before (the pipeline may
        only read `incoming`); a column that appears (schema evolution) is added to the table,
        NULL in the rows landed before it."""
        try:
            with self._watchdog.armed(self._admin, self.limits, self._server), \
                    self._admin.transaction():
                for name, names in columns.items():
                    if name in self._columns:
                        self._load(name, batch, list(names), accumulate)
        except psycopg.Error as exc:
            raise self._failure(exc, self._admin, "load", None) from None

    def _load(self, name: str, batch: int, names: list[str], accumulate: bool) -> None:
        target = pgsql.Identifier("incoming", name)
        have = self._columns[name]
        defs = [pgsql.SQL("{} {}").format(pgsql.Identifier(c), pgsql.SQL(self._types[name][c]))
                for c in names if c not in have]
        if not have:
            self._admin.execute(pgsql.SQL("CREATE TABLE {} ({}); GRANT SELECT ON {} TO {}").format(
                target, pgsql.SQL(", ").join(defs), target, pgsql.Identifier(REPLAY)))
        elif defs:
            self._admin.execute(pgsql.SQL("ALTER TABLE {} {}").format(
                target, pgsql.SQL(", ").join(pgsql.SQL("ADD COLUMN {}").format(d) for d in defs)))
        if have and not accumulate:
            self._admin.execute(pgsql.SQL("TRUNCATE {}").format(target))
        self._columns[name] = list(dict.fromkeys([*have, *names]))
        table = self._deliveries[name]
        rows = table.filter(pc.equal(table["__batch"], batch)).select(names)
        listed = pgsql.SQL(", ").join(pgsql.Identifier(c) for c in names)
        with self._admin.cursor().copy(pgsql.SQL("COPY {} ({}) FROM STDIN").format(
                target, listed)) as copy:
            data = [rows.column(c).to_pylist() for c in names]
            for row in zip(*data, strict=True):
                copy.write_row(row)

    def run(self, statements: engine.Statements, count: int | None = None,
            meter: cost.Meter | None = None) -> None:
        """Run the first `count` statements (all by default) over a new connection. Closing
        it rolls back whatever transaction the script left open; then the owner removes the
        session defaults the role may have given itself (an ERROR of phase `sandbox`)."""
        assert isinstance(statements, Statements)
        con = self._server.connect(REPLAY, REPLAY, options=walls.PIPELINE_OPTIONS)
        try:
            for index, statement in enumerate(statements.parsed[:count]):
                start = time.perf_counter()
                try:
                    self._execute(con, statement.query, "run", index)
                finally:
                    self.engine_seconds += time.perf_counter() - start
            listening = self._execute(con, walls.LISTENING, "sandbox").fetchall()
            if listening:
                raise Failure("sandbox", "the pipeline listens for notifications after its "
                                         "statement ended (LISTEN)")
        finally:
            con.close()
            left = self._undo_role_defaults()
        if left:
            raise Failure("sandbox", normalize_message(
                f"the pipeline gave its role default settings ({', '.join(left)}); a setting "
                "may not outlive its session"))

    def _undo_role_defaults(self) -> list[str]:
        """Remove every session default of the role, as its owner; the names it had set."""
        found = self._admin.execute(walls.ROLE_DEFAULTS).fetchall()
        for database, _settings in found:
            self._admin.execute(walls.reset_role_defaults(database))
        return sorted({s.split("=", 1)[0] for _db, settings in found for s in settings or []})

    def _reader(self, phase: Phase) -> psycopg.Connection[Any]:
        """The harness reader's connection, allowed to read what exists now: pinned settings,
        read-only transactions, nothing left from an earlier read."""
        self._execute(self._admin, walls.GRANT_READ, phase)
        reading = self._reading
        if reading is None or reading.closed or reading.broken:
            reading = self._reading = self._server.connect(REPLAY, walls.READER,
                                                           options=walls.READER_OPTIONS)
        else:
            self._execute(reading, "DISCARD ALL", phase)
        return reading

    def read(self, name: str) -> Table:
        # A lookup in the catalog only: the owner's connection, pinned to pg_catalog.
        found = self._execute(self._admin, _EXISTS, "read-target",
                              params=[name, name]).fetchone()
        if not found:
            raise Failure("read-target", f"main.{name} does not exist after the last run")
        return self.query(pgsql.SQL("SELECT * FROM {}").format(
            pgsql.Identifier("main", str(found[0]))).as_string(self._admin), "read-target")

    def query(self, sql: str, phase: Phase) -> Table:
        """A query of the harness as the pipeline would see the database (its search path), as
        the harness's reader, read-only, on the reader's connection of this replay, its session
        discarded first. `sql` qualifies every name it adds (a function or operator of the
        pipeline's in `main` would otherwise stand in for the catalog's)."""
        return self._fetch(self._reader(phase), sql, phase)

    def _fetch(self, con: psycopg.Connection[Any], sql: str, phase: Phase) -> Table:
        """`sql`'s result, stopped by the server past the row and byte limits."""
        limit = self.limits.max_target_rows
        cursor = self._execute(con, walls.bounded(sql, self.limits), phase)
        columns = tuple((d.name, duckdb_type(d)) for d in (cursor.description or [])[1:])
        rows = cursor.fetchall()
        if len(rows) > limit:
            raise Failure(phase, f"the result has more than {limit} rows, the limit")
        return Table(columns, tuple(tuple(value(v) for v in row[1:]) for row in rows))

    def close(self) -> None:
        if self._reading is not None:
            with contextlib.suppress(psycopg.Error):
                self._reading.close()


@contextmanager
def database(limits: Limits) -> Iterator[Database]:
    db = Database(limits)
    try:
        yield db
    finally:
        db.close()


def _conforms(db: Database) -> engine.Database:
    """Type-checked only: this engine's database is a `engine.Database`."""
    return db
