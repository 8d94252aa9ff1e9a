"""The engine seam: everything that executes a pipeline sits behind it.

`replay` and the oracle see only these values and the `Database` of the engine a replay runs
on: `engine.duckdb` (the default, and the engine of every reference) or `engine.postgres`.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Literal, Protocol, get_args

from arrivalbench.errors import ArrivalBenchError

if TYPE_CHECKING:
    import pyarrow as pa

    from arrivalbench.core.engine.cost import Meter

EngineName = Literal["duckdb", "postgres"]
ENGINES: tuple[EngineName, ...] = get_args(EngineName)
DEFAULT_ENGINE: EngineName = "duckdb"


@dataclass(frozen=True)
class Facts:
    """What the rest of the harness may ask of an engine without importing it (an engine's
    module needs its extra): one place, instead of `engine == "duckdb"` where it matters."""

    title: str  # how a person writes its name
    runs_dbt: bool  # dbt projects run on it (dbt-duckdb is the adapter the harness drives)
    locates_parse_errors: bool  # its parser says where a whole script stops parsing
    # Which engines measure cost is `cost.MEASURABLE_ENGINES`, beside the profiler that does.


FACTS: dict[EngineName, Facts] = {
    "duckdb": Facts("DuckDB", runs_dbt=True, locates_parse_errors=True),
    "postgres": Facts("PostgreSQL", runs_dbt=False, locates_parse_errors=False),
}


def check_engine(name: str) -> EngineName:
    """`name` as an engine name, or a one-line error listing the engines."""
    if name not in ENGINES:
        raise ArrivalBenchError(f"unknown engine {name!r}; engines: {', '.join(ENGINES)}")
    return name  # type: ignore[return-value]


def backend(name: EngineName) -> ModuleType:
    """The module of engine `name`: `NAME`, `version()` (a function: PostgreSQL's asks its
    binaries), `database(limits)`, a context manager giving one replay's `Database`, and
    `split(script)`, the script's statements (each with its `query` text) without a replay.
    Imported on first use, so that an engine's extra is needed only by who uses it."""
    return importlib.import_module(f"arrivalbench.core.engine.{check_engine(name)}")


Phase = Literal["load", "run", "read-target", "timeout", "memory", "sandbox"]


@dataclass(frozen=True)
class Limits:
    """What one replay may use. Part of the harness configuration, not of a verdict's key."""

    statement_seconds: float = 5.0
    memory: str = "512MB"
    # Rows as well as bytes: a million small values cost the oracle far more than their bytes.
    max_target_rows: int = 250_000
    # What the harness reads back from a replay (a target, a result) in bytes of values: rows
    # alone do not bound it (30 rows of 30 MB each are 900 MB in the grader).
    max_read_bytes: int = 64 * 1024 * 1024
    disk: str = "1GB"  # what a replay's tables may occupy on a server engine (PostgreSQL)
    # The wall-clock bound of one whole replay (every run of the artifact, loads included) and
    # of loading a dbt project, enforced by a process that does not run the artifact.
    replay_seconds: float = 300.0
    load_seconds: float = 120.0
    # One invocation of dbt in a replay (a batch's `dbt run`), killed past it: a run takes under
    # 2 s here, and a Jinja hang would otherwise hold each replay for all of `replay_seconds`.
    run_seconds: float = 30.0


@dataclass(frozen=True)
class Table:
    """A result read back from the engine: column names and DuckDB types, and its rows."""

    columns: tuple[tuple[str, str], ...]
    rows: tuple[tuple[object, ...], ...]


class Failure(Exception):
    """Where and why a replay stopped. Not an ArrivalBenchError: it becomes an ERROR verdict."""

    def __init__(self, phase: Phase, message: str, batch: int | None = None,
                 statement: int | None = None) -> None:
        super().__init__(message)
        self.phase, self.message, self.batch, self.statement = phase, message, batch, statement

    def at(self, batch: int) -> Failure:
        return Failure(self.phase, self.message, batch, self.statement)


class Statements(Protocol):
    """A script split into statements by an engine, for that engine's `Database.run`."""

    def __len__(self) -> int: ...


class Database(Protocol):
    """The database of one replay, on any engine: what the replay loop, the artifacts and the
    every-batch check may do with it."""

    limits: Limits
    engine_seconds: float  # time inside the engine on the pipeline's own statements
    meter: Meter | None  # set by the replay to measure cost (DuckDB only)

    def split(self, script: str) -> Statements:
        """The statements of `script`; a `Failure` (`run`, or `sandbox` for a refused kind)."""

    def stage(self, deliveries: Mapping[str, pa.Table]) -> None:
        """Every delivery of the replay, per source, with a `__batch` column."""

    def load(self, batch: int, columns: Mapping[str, Sequence[str]], *,
             accumulate: bool = False) -> None:
        """Make each `incoming.<source>` hold exactly the rows of `batch` (with `accumulate`:
        of every batch up to and including it)."""

    def run(self, statements: Statements, count: int | None = None,
            meter: Meter | None = None) -> None:
        """Run the first `count` statements over a new connection (phase `run`)."""

    def read(self, name: str) -> Table:
        """`main.<name>` after the last run, in DuckDB's types and Python values."""

    def query(self, sql: str, phase: Phase) -> Table:
        """A query of the harness, as the pipeline would see the database."""


_VOLATILE = [
    # Every absolute path, not only temporary ones: a message can name the home directory of
    # whoever ran the replay (DuckDB's secret directory), and verdict bytes must not depend on
    # the machine. A slash after a word, a dot or a masked value is division or a ratio.
    (re.compile(r"(?<![\w.>/\\])/[A-Za-z_.~][^\s\"'`,;:()]*"), "<path>"),
    (re.compile(r"\b[A-Za-z]:\\[^\s\"'`,;:()]*"), "<path>"),  # a Windows drive path
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    (re.compile(r"\d+(\.\d+)? ?(bytes|[KMGT]i?B)\b"), "<size>"),
    (re.compile(r"\d+(\.\d+)? ?(ms|s|seconds)\b"), "<time>"),
]


def normalize_message(message: str) -> str:
    """The first line of an engine message with addresses, sizes, timings and absolute paths
    masked, so that the same failure always reads the same on any machine."""
    line = message.strip().splitlines()[0] if message.strip() else "error"
    for pattern, replacement in _VOLATILE:
        line = pattern.sub(replacement, line)
    return line.strip()
