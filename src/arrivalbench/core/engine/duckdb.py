"""Embedded DuckDB as a sandbox for untrusted pipelines.

One in-memory database per replay, configured before anything runs and then locked: no file or
network access, no extension install or load, one thread (deterministic floating-point sums and a
fair share of the machine per worker), a memory limit and no spilling to disk. Every statement
runs under a watchdog that interrupts it at the time limit. Statement types that could only
breach the contract are refused before they run, so their verdict does not depend on which
setting happens to catch them.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from arrivalbench.core import engine
from arrivalbench.core.engine import Failure, Limits, Phase, Table, cost, normalize_message

NAME = "duckdb"
VERSION = duckdb.__version__


def version() -> str:
    return VERSION


REPLAY_TIMEOUT = "the replay ran past its wall-clock limit"
READ_MEMORY = "the result did not fit in the memory the grader's process allows"

# SET also covers RESET and USE; LOAD covers INSTALL.
_REFUSED = {
    duckdb.StatementType.SET: "changes a setting",
    duckdb.StatementType.LOAD: "installs or loads an extension",
    duckdb.StatementType.ATTACH: "attaches a database",
    duckdb.StatementType.DETACH: "detaches a database",
    duckdb.StatementType.COPY: "copies to or from a file",
    duckdb.StatementType.COPY_DATABASE: "copies a database",
    duckdb.StatementType.EXPORT: "exports to files",
    duckdb.StatementType.EXTENSION: "manages extensions",
}


def _config(limits: Limits) -> dict[str, Any]:
    return {
        "threads": 1,
        "memory_limit": limits.memory,
        "max_temp_directory_size": "0B",  # never spill to disk
        "enable_external_access": False,
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        "allow_community_extensions": False,
        "allow_unsigned_extensions": False,
        "python_enable_replacements": False,  # no Python variable is ever a table
        "lock_configuration": True,
    }


# Every function the harness calls in a replay's database is qualified with the built-in
# catalog: a pipeline may define macros in main (`main.lower`, a table macro `duckdb_tables`)
# that an unqualified name would resolve to, and so rewrite the harness's own queries.
_EXISTS = """
SELECT EXISTS (SELECT 1 FROM system.main.duckdb_tables()
               WHERE database_name = system.main.current_database() AND schema_name = 'main'
               AND system.main.lower(table_name) = system.main.lower($1))
    OR EXISTS (SELECT 1 FROM system.main.duckdb_views()
               WHERE database_name = system.main.current_database() AND schema_name = 'main'
               AND NOT internal AND system.main.lower(view_name) = system.main.lower($1))
"""


# Types whose Python values are of bounded size; any other is measured as it is read back.
_FIXED = re.compile(r"(BOOLEAN|TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|U\w*INT|FLOAT|DOUBLE|"
                    r"DECIMAL.*|DATE|TIME.*|TIMESTAMP.*|INTERVAL|UUID)$")
_CHUNK = 256  # rows fetched at a time when reading back


class _Watchdog:
    """One thread per process that interrupts the connection it is armed on once its deadline
    has passed. Arming is a single assignment and wakes nobody: at thousands of statements a
    second a timer, or even a notified condition, per statement costs more than the statements.
    The price is precision: a statement is interrupted up to one tick after its deadline."""

    TICK = 0.05

    def __init__(self) -> None:
        self._armed: tuple[duckdb.DuckDBPyConnection, float] | None = None
        self.fired = False
        threading.Thread(target=self._loop, name="arrivalbench-watchdog", daemon=True).start()

    def _loop(self) -> None:
        while True:
            time.sleep(self.TICK)
            armed = self._armed
            if armed is not None and time.monotonic() > armed[1]:
                self.fired = True
                armed[0].interrupt()

    @contextmanager
    def armed(self, con: duckdb.DuckDBPyConnection, seconds: float) -> Iterator[None]:
        self.fired = False
        self._armed = (con, time.monotonic() + seconds)
        try:
            yield
        finally:
            self._armed = None


_watchdogs: dict[int, _Watchdog] = {}
_watchdog_lock = threading.Lock()


def _get_watchdog() -> _Watchdog:
    # Keyed by process: a forked worker inherits its parent's watchdog object but not its
    # thread, and an unwatched statement would never time out.
    with _watchdog_lock:
        pid = os.getpid()
        if pid not in _watchdogs:
            _watchdogs[pid] = _Watchdog()
        return _watchdogs[pid]


def _interrupt(exc: RuntimeError) -> BaseException:
    """DuckDB turns the user's Ctrl-C during a statement into a RuntimeError: that is the
    user's interrupt, not a failure of the pipeline or of the harness."""
    return KeyboardInterrupt() if "interrupted" in str(exc).lower() else exc


def classify(exc: BaseException, timed_out: bool) -> Phase:
    if timed_out or isinstance(exc, duckdb.InterruptException):
        return "timeout"
    if isinstance(exc, duckdb.OutOfMemoryException):
        return "memory"
    if isinstance(exc, duckdb.PermissionException) or "configuration has been locked" in str(exc):
        return "sandbox"
    return "run"


class Statements:
    """A script split by DuckDB's own parser."""

    def __init__(self, parsed: Sequence[Any]) -> None:
        self.parsed = list(parsed)

    def __len__(self) -> int:
        return len(self.parsed)


class _Instance:
    """One locked DuckDB instance per process and limits, holding exactly one database: the
    current replay's, an attached in-memory database that is the default of every connection.
    Its built-in default database is detached, so no object outlives its replay. Attaching a
    database costs well under a millisecond where opening an instance costs tens of them, and
    replays in one process run one at a time. The replay's database always has the same name,
    so that nothing that names it (an engine message, SQL that dbt compiles) varies by replay."""

    NAME = "replay"

    def __init__(self, limits: Limits) -> None:
        self.root = duckdb.connect(":memory:", config=_config(limits))
        self.root.execute(f"ATTACH ':memory:' AS {self.NAME}; USE {self.NAME}; DETACH memory")

    def rotate(self, keep: str | None = None) -> None:
        """Replace the current database with a new empty one, or with a copy of `keep`."""
        name = self.NAME
        self.root.execute(f"ATTACH ':memory:' AS __swap; USE __swap; DETACH {name}; "
                          f"ATTACH ':memory:' AS {name}")
        if keep is not None:
            self.root.execute(f"COPY FROM DATABASE {keep} TO {name}")
        self.root.execute(f"USE {name}; DETACH __swap")


_instances: dict[tuple[int, Limits], _Instance] = {}


def _instance(limits: Limits) -> _Instance:
    key = (os.getpid(), limits)  # a forked worker must not share its parent's instance
    if key not in _instances:
        _instances[key] = _Instance(limits)
    return _instances[key]


class Database:
    """The database of one replay."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._instance = _instance(limits)
        self._db = self._instance.root.cursor()
        self._db.execute("CREATE SCHEMA incoming")
        # per source: the deliveries, and where each batch's rows start and how many they are
        self._staged: dict[str, tuple[pa.Table, dict[int, tuple[int, int]]]] = {}
        self._watchdog = _get_watchdog()
        self.engine_seconds = 0.0  # time inside DuckDB on the pipeline's own statements
        # The wall clock (time.monotonic) past which nothing of this replay runs any more.
        self.deadline = time.monotonic() + limits.replay_seconds
        self.meter: cost.Meter | None = None  # measures every run of the replay when set

    def _connect(self) -> duckdb.DuckDBPyConnection:
        return self._instance.root.cursor()

    def connect(self) -> duckdb.DuckDBPyConnection:
        """A new connection to the replay's database, for an artifact that sends its own
        statements (through `execute`, which keeps the time limit and the phases)."""
        return self._connect()

    def execute(self, con: duckdb.DuckDBPyConnection, sql: str, statement: int,
                params: object = None) -> duckdb.DuckDBPyConnection:
        """One statement an artifact sends, under the time limit, as phase `run`."""
        start = time.perf_counter()
        try:
            return self._execute(con, sql, "run", statement, params)  # type: ignore[arg-type]
        finally:
            self.engine_seconds += time.perf_counter() - start

    def save(self) -> None:
        """Keep a copy of the replay's database, to go back to with `restore`."""
        self._db.execute(f"ATTACH ':memory:' AS __saved; "
                         f"COPY FROM DATABASE {_Instance.NAME} TO __saved")

    def restore(self) -> None:
        """Replace the replay's database with the copy `save` kept, and drop the copy."""
        self._db.close()
        self._instance.rotate(keep="__saved")
        self._instance.root.execute("DETACH __saved")
        self._db = self._instance.root.cursor()

    def close(self) -> None:
        try:
            self._db.close()
            self._instance.rotate()
        except duckdb.Error:
            # A pipeline that invalidated the instance (a fatal engine error) must not take the
            # next replay with it: drop the instance and let the next replay open a new one.
            _instances.pop((os.getpid(), self.limits), None)
            with contextlib.suppress(duckdb.Error):
                self._instance.root.close()

    def split(self, script: str) -> Statements:
        try:
            parsed = self._db.extract_statements(script)
        except Exception as exc:  # the parser also raises non-DuckDB errors on odd input
            raise Failure("run", normalize_message(str(exc)), statement=None) from None
        for index, statement in enumerate(parsed):
            try:
                reason = _REFUSED.get(statement.type)
            except ValueError:
                # A type the Python API has no name for (UPDATE EXTENSIONS is one): refused,
                # since nothing vouches for it, rather than crashing the harness.
                reason = "is of a kind the sandbox does not know"
            if reason is not None:
                words = " ".join(statement.query.split())[:60]
                # Normalized like an engine message: the words may quote a temporary path.
                raise Failure("sandbox", normalize_message(f"statement refused: {words!r} "
                                                           f"{reason}"), statement=index)
        return Statements(parsed)

    def _execute(self, con: duckdb.DuckDBPyConnection, sql: Any, phase: Phase,
                 statement: int | None = None, params: list[object] | None = None
                 ) -> duckdb.DuckDBPyConnection:
        # The replay's own bound as well as the statement's: many quick statements must not
        # add up to a replay without end. The watchdog is a thread that runs no artifact code,
        # and every statement of a script runs inside DuckDB, where an interrupt reaches it.
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise Failure("timeout", REPLAY_TIMEOUT, statement=statement)
        try:
            with self._watchdog.armed(con, min(self.limits.statement_seconds, left)):
                return con.execute(sql, params)
        except duckdb.Error as exc:
            fired = self._watchdog.fired
            kind = classify(exc, fired)
            message = normalize_message(str(exc))
            if kind == "timeout" and left < self.limits.statement_seconds:
                message = REPLAY_TIMEOUT
            raise Failure(phase if kind == "run" else kind, message,
                          statement=statement) from None
        except RuntimeError as exc:
            raise _interrupt(exc) from None
        except MemoryError:
            raise Failure("memory", READ_MEMORY, statement=statement) from None

    def stage(self, deliveries: Mapping[str, pa.Table]) -> None:
        """Keep every delivery of the replay in the harness's own memory, one Arrow table per
        source with a `__batch` column, in batch order. No batch is visible to any connection
        until `load` copies it: a later batch never exists where SQL (the pipeline's, or
        harness SQL built from an artifact's names) could name it."""
        self._staged = {}
        for name, table in deliveries.items():
            spans, offset = {}, 0
            for entry in pc.value_counts(table.column("__batch")).to_pylist():
                spans[entry["values"]] = (offset, entry["counts"])
                offset += entry["counts"]
            self._staged[name] = (table.drop_columns(["__batch"]), spans)

    def load(self, batch: int, columns: Mapping[str, Sequence[str]], *,
             accumulate: bool = False) -> None:
        """Replace each `incoming.<source>` with the staged rows of `batch`, in delivery order
        (one thread preserves it), or with `accumulate` with the rows of every batch up to and
        including it: what landed so far, whatever the pipeline did to the table. Only that
        slice is registered, on the loader's own connection, for the length of one statement.
        Rebuild the schema if the pipeline disturbed it."""
        registered: list[str] = []
        statements: list[str] = []
        for name, names in columns.items():
            table, spans = self._staged[name]
            offset, length = spans.get(batch, (0, 0))
            if accumulate:
                offset, length = 0, max((o + n for b, (o, n) in spans.items() if b <= batch),
                                        default=0)
            view = f"__batch_{len(registered)}"
            self._db.register(view, table.slice(offset, length))
            registered.append(view)
            statements.append(f'CREATE OR REPLACE TABLE incoming."{name}" AS SELECT '
                              + ", ".join(f'"{c}"' for c in names) + f' FROM "{view}"')
        if not statements:
            return
        sql = "; ".join(statements)
        try:
            self._db.execute(sql)
        except RuntimeError as exc:
            raise _interrupt(exc) from None
        except duckdb.Error:
            self._execute(self._db, "DROP SCHEMA IF EXISTS incoming CASCADE", "load")
            self._execute(self._db, "CREATE SCHEMA incoming", "load")
            self._execute(self._db, sql, "load")
        finally:
            for view in registered:
                self._db.unregister(view)

    def create(self, name: str, table: pa.Table) -> None:
        """A trusted table in schema main (the log under its bare name, for the reference)."""
        self._db.from_arrow(table).create(f'main."{name}"')

    def define(self, name: str, query: str) -> None:
        """A trusted view in schema main."""
        self._db.execute(f'CREATE OR REPLACE VIEW main."{name}" AS {query}')

    def set_step(self, name: str, value: int) -> None:
        """Set the one value of a one-row table made by `create`."""
        self._db.execute(f'UPDATE main."{name}" SET k = $1', [value])

    def run(self, statements: engine.Statements, count: int | None = None,
            meter: cost.Meter | None = None) -> None:
        """Run the first `count` statements (all by default) over a new connection. Closing
        it rolls back whatever transaction the script left open. With a `meter` (by default
        the database's own, `self.meter`), each statement that can be profiled runs under the
        profiler and its rows are added up."""
        assert isinstance(statements, Statements)
        meter = meter or self.meter
        con = self._connect()
        try:
            if meter is not None and meter.database is None:
                meter.database = self._database(con)
            for index, statement in enumerate(statements.parsed[:count]):
                start = time.perf_counter()
                try:
                    profiled = meter.wrap(con, index, statement) if meter is not None else None
                    if profiled is None:
                        if meter is not None:
                            meter.skip(statement)
                        self._execute(con, statement, "run", index)
                    else:
                        assert meter is not None
                        meter.add(self._execute(con, profiled, "run", index),
                                  meter.database or "")
                finally:
                    self.engine_seconds += time.perf_counter() - start
        finally:
            con.close()

    def _database(self, con: duckdb.DuckDBPyConnection) -> str:
        found = self._execute(con, "SELECT system.main.current_database()", "run").fetchone()
        return str(found[0]) if found else ""

    def read(self, name: str) -> Table:
        con = self._connect()
        try:
            found = self._execute(con, _EXISTS, "read-target", params=[name]).fetchone()
            if not found or not found[0]:
                raise Failure("read-target", f"main.{name} does not exist after the last run")
            return self.query(f'SELECT * FROM main."{name}"', "read-target", con)
        finally:
            con.close()

    def query(self, sql: str, phase: Phase, con: duckdb.DuckDBPyConnection | None = None
              ) -> Table:
        con = con or self._db
        return self.fetch(self._execute(con, sql, phase), phase)

    def fetch(self, result: duckdb.DuckDBPyConnection, phase: Phase) -> Table:
        """What the last statement on `result` returned, read back within the row and byte
        bounds of the limits."""
        limit = self.limits.max_target_rows
        columns = tuple((d[0], str(d[1])) for d in result.description or ())
        # Fixed-width values cost about their width; variable ones (text, blobs, nested) are
        # measured, chunk by chunk, so that 30 rows of 30 MB stop long before the grader
        # holds them all.
        fixed = 16 * len(columns)
        wide = [i for i, (_name, kind) in enumerate(columns) if not _FIXED.match(kind)]
        budget = self.limits.max_read_bytes
        rows: list[tuple[object, ...]] = []
        try:
            while True:
                # One row past the limit tells an oversized result without a second query.
                chunk = result.fetchmany(min(_CHUNK, limit + 1 - len(rows)))
                if not chunk:
                    break
                budget -= fixed * len(chunk) + sum(
                    len(str(row[i])) for row in chunk for i in wide if row[i] is not None)
                if budget < 0:
                    raise Failure("memory", f"the result is larger than "
                                  f"{self.limits.max_read_bytes} bytes, the limit")
                rows.extend(chunk)
                if len(rows) > limit:
                    raise Failure(phase, f"the result has more than {limit} rows, the limit")
        except duckdb.Error as exc:
            raise Failure(classify(exc, self._watchdog.fired), normalize_message(str(exc))
                          ) from None
        except RuntimeError as exc:
            raise _interrupt(exc) from None
        except MemoryError:  # past the process's data bound (an executor's worker)
            rows.clear()
            raise Failure("memory", READ_MEMORY) from None
        return Table(columns, tuple(rows))


def split(script: str) -> Statements:
    """`Database.split` without a replay: the statements of `script` (each with its `query`
    text), or the `Failure` a replay would stop with before running anything."""
    with database(Limits()) as db:
        return db.split(script)


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
