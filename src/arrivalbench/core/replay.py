"""One replay: an artifact run batch by batch under a schedule, in one database.

Also the batch recomputation: `reference.sql` over the complete log, in a sandbox of its own.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import pyarrow as pa
import pyarrow.compute as pc

from arrivalbench.core import clock
from arrivalbench.core.artifacts import Artifact
from arrivalbench.core.artifacts.script import Script
from arrivalbench.core.engine import (
    DEFAULT_ENGINE,
    Database,
    EngineName,
    Failure,
    Limits,
    Table,
    backend,
)
from arrivalbench.core.engine import duckdb as reference_engine
from arrivalbench.core.engine.cost import Cost, Meter, check_measurable
from arrivalbench.core.log import Log, load_log
from arrivalbench.core.schedules import Schedule
from arrivalbench.core.task import Landing, TaskSpec
from arrivalbench.errors import TaskError


@dataclass(frozen=True)
class Outcome:
    """The final table, or where the replay stopped; timings are kept apart from verdicts.
    `table` is the first target's, `others` those of the task's other targets, in order."""

    table: Table | None
    failure: Failure | None
    wall_seconds: float
    engine_seconds: float
    cost: Cost | None = None  # what the replay read and wrote, when it was measured
    others: tuple[Table, ...] = ()

    @property
    def tables(self) -> tuple[Table, ...]:
        """Every target's final table, in the task's order; empty when the replay stopped."""
        return () if self.table is None else (self.table, *self.others)


@dataclass(frozen=True, eq=False)
class Deliveries:
    """Every record a schedule delivers, per source in delivery order, tagged with its batch."""

    tables: dict[str, pa.Table]  # the declared columns (+ the evolution column) and `__batch`
    base: dict[str, tuple[str, ...]]  # the columns each source shows from its first batch
    evolved: dict[str, tuple[str, ...]]  # ... and from `evolution_from` on, where that differs
    evolution_from: int | None

    def columns(self, batch: int) -> dict[str, tuple[str, ...]]:
        """The columns of each `incoming.<source>` in `batch`."""
        if self.evolution_from is None or batch < self.evolution_from:
            return self.base
        return {**self.base, **self.evolved}


def deliveries(spec: TaskSpec, log: Log, schedule: Schedule, landing: Landing = "batch"
               ) -> Deliveries:
    """What `schedule` delivers of `log`. Under `accumulate` landing each row also carries
    the clock of the batch that landed it, in its source's load-time column (replacing a
    column of that name in the data), and the evolution column is NULL in the rows landed
    before it appeared: a landing table holds rows as they were landed."""
    rows: dict[str, list[int]] = {s.name: [] for s in spec.sources}
    batches: dict[str, list[int]] = {s.name: [] for s in spec.sources}
    for number, batch in enumerate(schedule.batches):
        for name, row in batch.records:
            rows[name].append(row)
            batches[name].append(number)
    at = clock.of(schedule, log)
    accumulate = landing == "accumulate"
    tables = {}
    for source in spec.sources:
        name, picked = source.name, rows[source.name]
        indices = pa.array(picked, pa.int64())
        table = log.tables[name].take(indices)
        if spec.evolution is not None and spec.evolution.source == name:
            assert log.evolution is not None
            values = log.evolution.take(indices)
            start = schedule.evolution_from
            if start is not None:
                values = pc.if_else(pa.array([b >= start for b in batches[name]], pa.bool_()),
                                    values, pa.nulls(len(picked), values.type))
            table = table.append_column(spec.evolution.column, values)
        if accumulate:
            if source.load_time in table.column_names:
                table = table.drop_columns([source.load_time])
            table = table.append_column(source.load_time, pa.array(
                [at[b] for b in batches[name]], pa.timestamp("us")))
        tables[name] = table.append_column("__batch", pa.array(batches[name], pa.int32()))
    extra = {s.name: (s.load_time,) if accumulate else () for s in spec.sources}
    base = {s.name: (*(c.name for c in s.columns if not accumulate or c.name != s.load_time),
                     *extra[s.name]) for s in spec.sources}
    evolved = {}
    if spec.evolution is not None and schedule.evolution_from is not None:
        evolved = {spec.evolution.source: (*base[spec.evolution.source],
                                           spec.evolution.column)}
    return Deliveries(tables, base, evolved, schedule.evolution_from)


AfterRun = Callable[[int, Database], None]


def replay(spec: TaskSpec, artifact: Artifact | str, schedule: Schedule,
           limits: Limits = Limits(), after_run: AfterRun | None = None, *,
           measure: bool = False, engine_name: EngineName = DEFAULT_ENGINE,
           landing: Landing = "batch") -> Outcome:
    """Run `artifact` (an artifact, or the text of a SQL script) once per batch of `schedule` in
    one fresh sandboxed database, then read the target. Before each run `incoming` holds exactly
    that batch's records; a batch with an abort point stops its run there. Returns the target
    table, or the `Failure` (phase, batch, statement, masked message) that stopped the replay,
    with the wall and engine seconds. Never raises for anything the artifact does.

    `after_run(batch, db)`, when given, is called after each run that was not aborted (the
    every-batch check reads the target there). With `measure`, the outcome also carries the
    replay's cost (of the runs that ran); only a SQL script's statements are measured.
    `engine_name` chooses the engine the artifact runs on; the reference is DuckDB's always.
    `landing` says how a batch reaches `incoming`: alone (`batch`) or appended to what landed
    before (`accumulate`). Every run is given its batch's clock."""
    if isinstance(artifact, str):
        artifact = Script(artifact)
    if measure:
        check_measurable(engine_name)
    log = load_log(spec)
    staged = deliveries(spec, log, schedule, landing)
    at = clock.of(schedule, log)
    meter = Meter() if measure and isinstance(artifact, Script) else None
    records = sum(t.num_rows for t in staged.tables.values())
    start = time.perf_counter()
    with backend(engine_name).database(limits) as db:
        db.meter = meter
        try:
            run = artifact.start(db)
        except Failure as failure:
            return Outcome(None, failure.at(0), time.perf_counter() - start, 0.0,
                           meter.cost(records) if meter else None)
        try:
            db.stage(staged.tables)
            for number, batch in enumerate(schedule.batches):
                try:
                    db.load(number, staged.columns(number), accumulate=landing == "accumulate")
                    run(replace(batch, clock=at[number]))
                    if after_run is not None and not batch.aborted:
                        after_run(number, db)
                except Failure as failure:
                    raise failure.at(number) from None
            table, *others = (db.read(t.name) for t in spec.targets)
        except Failure as failure:
            return Outcome(None, failure, time.perf_counter() - start, db.engine_seconds,
                           meter.cost(records) if meter else None)
        return Outcome(table, None, time.perf_counter() - start, db.engine_seconds,
                       meter.cost(records) if meter else None, tuple(others))


def reference_tables(spec: TaskSpec, log: Log) -> dict[str, pa.Table]:
    """The sources as a reference reads them: the log, and for a source that declares a
    load-time column (`landed_at:`) that column too, every row landed at the reference's clock
    (a full recomputation lands everything at once: a model's full refresh may read it)."""
    at = clock.reference_of(log)
    tables = dict(log.tables)
    for source in spec.sources:
        table = tables[source.name]
        if source.landed_at is not None and source.landed_at not in table.column_names:
            tables[source.name] = table.append_column(
                source.landed_at, pa.array([at] * table.num_rows, pa.timestamp("us")))
    return tables


def expected(spec: TaskSpec, limits: Limits = Limits()) -> Table:
    """`reference.sql` over the complete log, cast to the declared target types: the first
    target's (`expected_all` for every target)."""
    return _expected(spec, limits, 0)


def expected_all(spec: TaskSpec, limits: Limits = Limits()) -> tuple[Table, ...]:
    """Each target's reference over the complete log, in the task's order."""
    return tuple(_expected(spec, limits, n) for n in range(len(spec.targets)))


@functools.lru_cache(maxsize=64)  # the whole corpus, with room for a user's tasks
def _expected(spec: TaskSpec, limits: Limits, number: int) -> Table:
    log = load_log(spec)
    target = spec.targets[number]
    where = spec.path / target.reference_file
    with reference_engine.database(limits) as db:
        try:
            statements = db.split(target.reference_sql)
        except Failure as failure:
            raise TaskError(f"{where}: {failure.message}") from None
        if len(statements) != 1 or statements.parsed[0].type.name != "SELECT":
            raise TaskError(f"{where}: must hold exactly one SELECT query, found "
                            f"{len(statements)} statements")
        query = statements.parsed[0].query.strip().rstrip(";")
        try:
            for name, table in reference_tables(spec, log).items():
                db.create(name, table)
            shape = db.query(f"SELECT * FROM ({query}) LIMIT 0", "run")
            got = [name for name, _type in shape.columns]
            want = [c.name for c in target.columns]
            if sorted(n.lower() for n in got) != sorted(n.lower() for n in want):
                raise TaskError(f"{where}: returns columns {got}; target {target.name} "
                                f"declares {want}")
            casts = ", ".join(f'CAST("{c.name}" AS {c.type}) AS "{c.name}"'
                              for c in target.columns)
            return db.query(f"SELECT {casts} FROM ({query})", "run")
        except Failure as failure:
            raise TaskError(f"{where}: {failure.message}") from None
