"""PostgreSQL as a sandbox for untrusted pipelines.

Every replay runs in the database `replay` of this process's server (`pgserver`), as a role
`replay` created for it: no superuser, no CREATEDB/CREATEROLE/REPLICATION, no membership of
any role, allowed to connect to that database only. Before each replay the previous role is
dropped with everything it owned (its schemas, tables, views, functions, large objects, the
privileges granted to it), so nothing a pipeline made survives into the next replay. The
harness owns schema `incoming` (the role may read it) and a staging schema the role cannot see;
the role owns schema `main`, first on its search path.

Limits: each statement runs under a watchdog thread that cancels it at the time limit and
terminates its backend if the cancel does not take; the same thread polls the database's size
while statements run and stops a pipeline that writes past `Limits.disk`. Work memory and
temporary files are bounded by settings the role cannot change (temp_file_limit is reserved to
superusers), and each backend's address space by an OS limit. Statement kinds that could only
breach the contract are refused before they run.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from arrivalbench.core import engine
from arrivalbench.core.engine import Failure, Limits, Phase, Table, cost, normalize_message
from arrivalbench.errors import missing_extra

try:
    import psycopg
    import psycopg.errors
    from psycopg import sql as pgsql
    from sqlglot.dialects.postgres import Postgres
    from sqlglot.errors import TokenError
    from sqlglot.tokenizer_core import Token, TokenType

    from arrivalbench.core.engine import pgserver
except ImportError as exc:  # pragma: no cover - the extra is part of the test environment
    raise missing_extra("the postgres engine", "postgres", exc.name) from None

NAME = "postgres"
REPLAY = "replay"  # the database and the role: the same names every replay, for stable messages


def version() -> str:
    return pgserver.version()


# -- statements ------------------------------------------------------------------------------

_SETTINGS = "changes a setting"
_OUTSIDE = "reaches outside the replay's database"
# Refused by their first words. SET also covers SET LOCAL, SET ROLE and SET SESSION.
_REFUSED_FIRST = {
    "COPY": "copies to or from a file or a program",
    "SET": _SETTINGS,
    "RESET": _SETTINGS,
    "LOAD": "loads a library",
    "LISTEN": "signals other sessions",
    "NOTIFY": "signals other sessions",
    "UNLISTEN": "signals other sessions",
    "VACUUM": "maintains the server's storage",
    "CHECKPOINT": "maintains the server's storage",
    "IMPORT": _OUTSIDE,
    "SECURITY": _OUTSIDE,
}
# Refused after CREATE, ALTER or DROP (modifiers such as OR REPLACE skipped).
_REFUSED_OBJECT = {
    "SYSTEM": _SETTINGS,
    "EXTENSION": "manages extensions",
    "ROLE": "manages roles",
    "USER": "manages roles",
    "GROUP": "manages roles",
    "DATABASE": "manages databases",
    "TABLESPACE": _OUTSIDE,
    "SUBSCRIPTION": _OUTSIDE,
    "PUBLICATION": _OUTSIDE,
    "SERVER": _OUTSIDE,
    "FOREIGN": _OUTSIDE,
    "LANGUAGE": _OUTSIDE,
    "EVENT": _OUTSIDE,
}
_MODIFIERS = {"OR", "REPLACE", "TRUSTED", "PROCEDURAL", "IF", "EXISTS", "NOT"}


def _words(tokens: Sequence[Token]) -> list[str]:
    return [t.text.upper() for t in tokens[:6]]


def _refusal(tokens: Sequence[Token]) -> str | None:
    words = _words(tokens)
    if not words:
        return None
    if words[0] in _REFUSED_FIRST:
        return _REFUSED_FIRST[words[0]]
    if words[0] in ("CREATE", "ALTER", "DROP"):
        rest = [w for w in words[1:] if w not in _MODIFIERS]
        if rest and rest[0] in _REFUSED_OBJECT:
            return _REFUSED_OBJECT[rest[0]]
    return None


@dataclass(frozen=True)
class Statement:
    query: str  # the statement's own text, without the separating semicolon
    kind: str  # its first word, upper case


class Statements:
    """A script split on the semicolons PostgreSQL's lexer would see (sqlglot's tokenizer with
    the PostgreSQL dialect: quotes, dollar quoting and comments are respected)."""

    def __init__(self, parsed: Sequence[Statement]) -> None:
        self.parsed = list(parsed)

    def __len__(self) -> int:
        return len(self.parsed)


def split(script: str) -> Statements:
    """The statements of `script`, or a `Failure`: phase `run` when it does not tokenize,
    phase `sandbox` (deterministic, before anything runs) for a statement kind refused."""
    try:
        tokens = Postgres().tokenize(script)
    except TokenError as exc:
        raise Failure("run", normalize_message(str(exc)), statement=None) from None
    groups: list[list[Token]] = [[]]
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            groups.append([])
        else:
            groups[-1].append(token)
    parsed: list[Statement] = []
    for group in (g for g in groups if g):
        # A token's start and end are character offsets; its comments precede `start`.
        text = script[group[0].start:group[-1].end + 1]
        reason = _refusal(group)
        if reason is not None:
            words = " ".join(text.split())[:60]
            raise Failure("sandbox", normalize_message(f"statement refused: {words!r} "
                                                       f"{reason}"), statement=len(parsed))
        parsed.append(Statement(text, group[0].text.upper()))
    return Statements(parsed)


# -- errors ----------------------------------------------------------------------------------

_PG_VOLATILE = [
    (re.compile(r"\bOID \d+"), "OID ?"),
    (re.compile(r"\b(process|PID|pid) \d+"), r"\1 ?"),
    (re.compile(r"\b(transaction|xid) \d+"), r"\1 ?"),
    (re.compile(r"\bpg_temp_\d+"), "pg_temp"),
    (re.compile(r"\bpg_toast_\d+"), "pg_toast"),
    (re.compile(r"\b\d+ ?kB\b"), "<size>"),  # PostgreSQL's spelling of kilobytes
]

_MEMORY_CLASSES = ("53",)  # insufficient resources: out of memory, disk full, temp_file_limit
_SANDBOX_STATES = {"42501"}  # insufficient privilege (also "must be superuser/owner")


def message(exc: BaseException) -> str:
    diag = getattr(exc, "diag", None)
    text = (diag.message_primary if diag is not None else None) or str(exc)
    for pattern, replacement in _PG_VOLATILE:
        text = pattern.sub(replacement, text)
    return normalize_message(text)


def classify(exc: BaseException, timed_out: bool) -> Phase:
    state = getattr(exc, "sqlstate", None) or ""
    if timed_out or isinstance(exc, psycopg.errors.QueryCanceled):
        return "timeout"
    if state.startswith(_MEMORY_CLASSES):
        return "memory"
    if state in _SANDBOX_STATES:
        return "sandbox"
    return "run"


# -- limits ----------------------------------------------------------------------------------

_UNITS = {"": 1, "B": 1, "KB": 1000, "MB": 1000**2, "GB": 1000**3, "TB": 1000**4,
          "KIB": 1024, "MIB": 1024**2, "GIB": 1024**3, "TIB": 1024**4}


def size_bytes(text: str) -> int:
    """'512MB' (DuckDB's spelling of a size) in bytes."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text)
    if not found or found.group(2).upper() not in _UNITS:
        raise ValueError(f"not a size: {text!r}")
    return int(float(found.group(1)) * _UNITS[found.group(2).upper()])


# A backend's own mappings (binary, libraries, shared buffers) before it allocates anything.
_BACKEND_BASE = 256 * 1024**2


def address_space(limits: Limits) -> int:
    """The address-space limit of every backend of a server for replays under `limits`."""
    return _BACKEND_BASE + size_bytes(limits.memory)


class _Watchdog:
    """One thread per process. While a statement is armed it cancels it past its deadline,
    terminates its backend if the cancel does not take within a grace period, and every
    `SIZE_EVERY` seconds of armed time checks that the replay's database has not grown past
    its limit (stopping the statement if it has). Arming is one assignment, as on DuckDB."""

    TICK = 0.05
    GRACE = 1.0
    SIZE_EVERY = 0.25

    def __init__(self) -> None:
        self._armed: tuple[psycopg.Connection[Any], float, int, int, pgserver.Server] | None \
            = None
        self.fired = False
        self.grew = False
        self._admin: tuple[pgserver.Server, psycopg.Connection[Any]] | None = None
        threading.Thread(target=self._loop, name="arrivalbench-pg-watchdog",
                         daemon=True).start()

    def _loop(self) -> None:
        busy = 0.0
        # The statement cancelled last and when: the grace period, and the termination after
        # it, belong to that statement only, never to one armed since on the same connection.
        cancelled: tuple[object, float] | None = None
        while True:
            time.sleep(self.TICK)
            armed = self._armed
            if armed is None or (cancelled is not None and cancelled[0] is not armed):
                cancelled = None
            if armed is None:
                continue
            con, deadline, pid, disk, server = armed
            now = time.monotonic()
            busy += self.TICK
            try:
                if cancelled is not None:
                    if now > cancelled[1] + self.GRACE and self._armed is armed:
                        self._terminate(server, pid)
                        cancelled = None
                elif now > deadline:
                    self.fired = True
                    cancelled = (armed, now)
                    con.cancel_safe(timeout=self.GRACE)
                elif busy >= self.SIZE_EVERY:
                    busy = 0.0
                    if self._size(server) > disk and self._armed is armed:
                        self.grew = True
                        cancelled = (armed, now)
                        con.cancel_safe(timeout=self.GRACE)
            except psycopg.Error:
                self._drop_admin()

    def _connection(self, server: pgserver.Server) -> psycopg.Connection[Any]:
        """The watchdog's own superuser connection to `server` (the replay's may be busy)."""
        if self._admin is None or self._admin[0] is not server or self._admin[1].closed:
            self._drop_admin()
            self._admin = (server, server.connect())
        return self._admin[1]

    def _drop_admin(self) -> None:
        if self._admin is not None:
            with contextlib.suppress(psycopg.Error):
                self._admin[1].close()
        self._admin = None

    def _size(self, server: pgserver.Server) -> int:
        found = self._connection(server).execute("SELECT pg_database_size(%s)",
                                                 [REPLAY]).fetchone()
        return int(found[0]) if found else 0

    def _terminate(self, server: pgserver.Server, pid: int) -> None:
        self._connection(server).execute("SELECT pg_terminate_backend(%s)", [pid])

    @contextmanager
    def armed(self, con: psycopg.Connection[Any], limits: Limits, server: pgserver.Server
              ) -> Iterator[None]:
        self.fired = self.grew = False
        self._armed = (con, time.monotonic() + limits.statement_seconds, con.info.backend_pid,
                       size_bytes(limits.disk), server)
        try:
            yield
        finally:
            self._armed = None


_watchdogs: dict[int, _Watchdog] = {}
_watchdog_lock = threading.Lock()


def _get_watchdog() -> _Watchdog:
    with _watchdog_lock:
        pid = os.getpid()
        if pid not in _watchdogs:
            _watchdogs[pid] = _Watchdog()
        return _watchdogs[pid]


# -- types -----------------------------------------------------------------------------------


def _pg_type(arrow: pa.DataType) -> str:
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


def _value(value: object) -> object:
    if isinstance(value, memoryview):
        return bytes(value)
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.UTC)
    return value


# -- the database of a replay ----------------------------------------------------------------

_EXISTS = """
SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'main' AND lower(c.relname) = lower(%s) AND c.relkind IN ('r', 'v', 'm', 'p')
ORDER BY c.relname = %s DESC, c.relname LIMIT 1
"""


def _reset_sql(role_exists: bool, limits: Limits) -> str:
    """Drop the previous replay's role and all it owned; make the role and schemas afresh."""
    work_mem = max(1, size_bytes(limits.memory) // 4 // 1024)  # kB; hash tables may use 2x
    temp = max(1, size_bytes(limits.disk) // 1024)
    drop = ("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'replay'; "
            "DROP OWNED BY replay CASCADE; DROP ROLE replay; ") if role_exists else ""
    return (
        drop
        + "DROP SCHEMA IF EXISTS incoming CASCADE; DROP SCHEMA IF EXISTS __staged CASCADE; "
        "CREATE ROLE replay LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION "
        "NOBYPASSRLS NOINHERIT; "
        "ALTER ROLE replay SET search_path = main; "
        f"ALTER ROLE replay SET work_mem = '{work_mem}kB'; "
        f"ALTER ROLE replay SET maintenance_work_mem = '{work_mem}kB'; "
        f"ALTER ROLE replay SET temp_file_limit = '{temp}kB'; "
        "GRANT CONNECT, TEMPORARY, CREATE ON DATABASE replay TO replay; "
        "CREATE SCHEMA main AUTHORIZATION replay; "
        "CREATE SCHEMA incoming; GRANT USAGE ON SCHEMA incoming TO replay; "
        "CREATE SCHEMA __staged")


class _Replays:
    """The `replay` database of a server of this process and whether a role was made in it."""

    def __init__(self, server: pgserver.Server) -> None:
        self.server = server
        with self.server.connect() as con:
            con.execute("DROP DATABASE IF EXISTS replay WITH (FORCE)")
            con.execute("CREATE DATABASE replay")
            con.execute("REVOKE ALL ON DATABASE replay FROM PUBLIC")
        self.role_exists = False


_replays: dict[tuple[int, int], _Replays] = {}


def _current(limits: Limits) -> _Replays:
    server = pgserver.server(address_space(limits))
    key = (os.getpid(), address_space(limits))
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
        self._admin = self._server.connect(REPLAY)
        self._admin.execute(_reset_sql(self._replays.role_exists, limits))
        self._replays.role_exists = True
        self._reader: psycopg.Connection[Any] | None = None
        self._columns: dict[str, list[str]] = {}  # the columns of each incoming table
        self._types: dict[str, dict[str, str]] = {}
        self._watchdog = _get_watchdog()
        self.engine_seconds = 0.0
        self.meter: cost.Meter | None = None  # never set: grading refuses cost on PostgreSQL

    def _connect(self) -> psycopg.Connection[Any]:
        return self._server.connect(REPLAY, REPLAY)

    def split(self, script: str) -> Statements:
        return split(script)

    def _execute(self, con: psycopg.Connection[Any], sql: str, phase: Phase,
                 statement: int | None = None, params: Sequence[object] | None = None
                 ) -> psycopg.Cursor[Any]:
        watchdog = self._watchdog
        try:
            with watchdog.armed(con, self.limits, self._server):
                return con.execute(sql, params, prepare=False)
        except psycopg.Error as exc:
            if watchdog.grew:
                raise Failure("memory", normalize_message(
                    f"the database grew past its limit of {self.limits.disk}"),
                    statement=statement) from None
            if watchdog.fired:
                raise Failure("timeout", "the statement ran past the time limit",
                              statement=statement) from None
            if isinstance(exc, psycopg.OperationalError) and con.closed:
                raise Failure(phase, "the server closed the connection",
                              statement=statement) from None
            kind = classify(exc, False)
            raise Failure(phase if kind == "run" else kind, message(exc),
                          statement=statement) from None

    def stage(self, deliveries: Mapping[str, pa.Table]) -> None:
        """Copy every delivery of the replay into the staging schema, with its batch and its
        place in delivery order, and make each `incoming.<source>` with the columns of the
        first batch."""
        for name, table in deliveries.items():
            columns = [c for c in table.column_names if c != "__batch"]
            types = {c: _pg_type(table.schema.field(c).type) for c in columns}
            self._types[name] = types
            staged = pgsql.Identifier("__staged", name)
            defs = pgsql.SQL(", ").join(
                pgsql.SQL("{} {}").format(pgsql.Identifier(c), pgsql.SQL(types[c]))
                for c in columns)
            self._admin.execute(pgsql.SQL(
                "CREATE TABLE {} ({}, __batch integer, __seq bigint)").format(staged, defs))
            names = pgsql.SQL(", ").join(pgsql.Identifier(c) for c in [*columns, "__batch"])
            with self._admin.cursor().copy(
                    pgsql.SQL("COPY {} ({}, __seq) FROM STDIN").format(staged, names)) as copy:
                data = [table.column(c).to_pylist() for c in [*columns, "__batch"]]
                for seq, row in enumerate(zip(*data, strict=True)):
                    copy.write_row((*row, seq))
            self._columns[name] = []

    def load(self, batch: int, columns: Mapping[str, Sequence[str]]) -> None:
        """Replace the rows of each `incoming.<source>` with the staged rows of `batch`, in
        delivery order; a column that appears (schema evolution) is added to the table."""
        parts: list[pgsql.Composable] = []
        for name, names in columns.items():
            target = pgsql.Identifier("incoming", name)
            have = self._columns.get(name)
            if have is None:
                continue
            if not have:
                defs = pgsql.SQL(", ").join(
                    pgsql.SQL("{} {}").format(pgsql.Identifier(c),
                                              pgsql.SQL(self._types[name][c]))
                    for c in names)
                parts.append(pgsql.SQL("CREATE TABLE {} ({}); GRANT SELECT ON {} TO replay")
                             .format(target, defs, target))
            else:
                for column in (c for c in names if c not in have):
                    parts.append(pgsql.SQL("ALTER TABLE {} ADD COLUMN {} {}").format(
                        target, pgsql.Identifier(column),
                        pgsql.SQL(self._types[name][column])))
                parts.append(pgsql.SQL("TRUNCATE {}").format(target))
            self._columns[name] = list(dict.fromkeys([*have, *names]))
            listed = pgsql.SQL(", ").join(pgsql.Identifier(c) for c in names)
            parts.append(pgsql.SQL("INSERT INTO {} ({}) SELECT {} FROM {} WHERE __batch = {} "
                                   "ORDER BY __seq").format(
                target, listed, listed, pgsql.Identifier("__staged", name),
                pgsql.Literal(batch)))
        if parts:
            sql = pgsql.SQL("; ").join(parts).as_string(self._admin)
            self._execute(self._admin, sql, "load")

    def run(self, statements: engine.Statements, count: int | None = None,
            meter: cost.Meter | None = None) -> None:
        """Run the first `count` statements (all by default) over a new connection. Closing
        it rolls back whatever transaction the script left open."""
        assert isinstance(statements, Statements)
        con = self._connect()
        try:
            for index, statement in enumerate(statements.parsed[:count]):
                start = time.perf_counter()
                try:
                    self._execute(con, statement.query, "run", index)
                finally:
                    self.engine_seconds += time.perf_counter() - start
        finally:
            con.close()

    def read(self, name: str) -> Table:
        con = self._connect()
        try:
            found = self._execute(con, _EXISTS, "read-target", params=[name, name]).fetchone()
            if not found:
                raise Failure("read-target", f"main.{name} does not exist after the last run")
            return self.query(pgsql.SQL("SELECT * FROM {}").format(
                pgsql.Identifier("main", str(found[0]))).as_string(con), "read-target", con)
        finally:
            con.close()

    def query(self, sql: str, phase: Phase, con: psycopg.Connection[Any] | None = None
              ) -> Table:
        """A query run as the replay's role (on a connection of its own unless given)."""
        if con is None:
            if self._reader is None or self._reader.closed:
                self._reader = self._connect()
            con = self._reader
        limit = self.limits.max_target_rows
        cursor = self._execute(con, sql, phase)
        description = cursor.description or []
        columns = tuple((d.name, duckdb_type(d)) for d in description)
        try:
            rows = cursor.fetchmany(limit + 1)
        except psycopg.Error as exc:
            raise Failure(classify(exc, False), message(exc)) from None
        if len(rows) > limit:
            raise Failure(phase, f"the result has more than {limit} rows, the limit")
        return Table(columns, tuple(tuple(_value(v) for v in row) for row in rows))

    def close(self) -> None:
        for con in (self._reader, self._admin):
            if con is not None:
                with contextlib.suppress(psycopg.Error):
                    con.close()


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
