"""The every-batch check: after each completed run the target must hold the reference over the
records delivered so far, not only after the last one.

"Delivered so far" after batch k is the set of distinct records of the batches 0..k whose run
completed: an aborted run's records count once the retry of its batch completes. The reference
over such a set is `reference.sql` over exactly those records, computed in a database of its own
after the replay (never inside the pipeline's database) and cached by the set, since shrinking
asks for the same sets again and again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa

from arrivalbench.core.artifacts import Artifact
from arrivalbench.core.engine import DEFAULT_ENGINE, Database, EngineName, Failure, Limits, Table
from arrivalbench.core.engine import duckdb as reference_engine
from arrivalbench.core.log import load_log
from arrivalbench.core.oracle import Diff, compare_all
from arrivalbench.core.replay import Outcome, expected_all, replay
from arrivalbench.core.schedules import Ref, Schedule
from arrivalbench.core.task import TaskSpec
from arrivalbench.core.values import JSON
from arrivalbench.errors import TaskError


@dataclass(frozen=True)
class Check:
    """The target after one completed run, against the reference over what was delivered."""

    batch: int
    diff: Diff | None  # None when the target could not be read
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.diff is not None and self.diff.ok

    def document(self) -> dict[str, JSON]:
        if self.diff is None:
            return {"batch": self.batch, "error": self.error}
        return {"batch": self.batch, "diff": self.diff.document()}


@dataclass(frozen=True)
class Checked:
    outcome: Outcome
    checks: tuple[Check, ...]

    @property
    def first_divergence(self) -> Check | None:
        return next((c for c in self.checks if not c.ok), None)


def delivered(schedule: Schedule) -> dict[int, frozenset[Ref]]:
    """Completed batch -> the distinct records delivered up to and including it."""
    seen: set[Ref] = set()
    out: dict[int, frozenset[Ref]] = {}
    for number, batch in enumerate(schedule.batches):
        if batch.aborted:
            continue
        seen.update(batch.records)
        out[number] = frozenset(seen)
    return out


def final_delivered(schedule: Schedule) -> frozenset[Ref]:
    sets = delivered(schedule)
    return sets[max(sets)] if sets else frozenset()


def reference_over(spec: TaskSpec, records: frozenset[Ref], limits: Limits = Limits()) -> Table:
    """`reference.sql` over exactly `records`, cast to the declared target types."""
    return references_over(spec, [records], limits)[0]


_CACHE: dict[tuple[TaskSpec, Limits, int, frozenset[Ref]], Table] = {}
_CACHE_SIZE = 8192


def references_over(spec: TaskSpec, sets: Sequence[frozenset[Ref]], limits: Limits = Limits(),
                    target: int = 0) -> list[Table]:
    """The reference of the `target`-th target over each of `sets`. Sets not yet known are
    computed in one database, in order, adding only the new records before each query when a
    set grows on the last one (the sets of one replay do), which costs far less than a
    database per set."""
    full = expected_all(spec, limits)[target]  # also validates the reference queries once
    log = load_log(spec)
    size = sum(t.num_rows for t in log.tables.values())
    missing = list(dict.fromkeys(s for s in sets if len(s) != size and
                                 (spec, limits, target, s) not in _CACHE))
    if missing:
        if len(_CACHE) + len(missing) > _CACHE_SIZE:
            _CACHE.clear()
        for records, table in zip(missing, _compute(spec, missing, limits, target=target),
                                  strict=True):
            _CACHE[(spec, limits, target, records)] = table
    return [full if len(s) == size else _CACHE[(spec, limits, target, s)] for s in sets]


def references_all(spec: TaskSpec, sets: Sequence[frozenset[Ref]], limits: Limits = Limits()
                   ) -> list[tuple[Table, ...]]:
    """For each of `sets`, every target's reference over it, in the task's order."""
    per_target = [references_over(spec, sets, limits, n) for n in range(len(spec.targets))]
    return [tuple(tables) for tables in zip(*per_target, strict=True)]


def query_over(spec: TaskSpec, sql: str, sets: Sequence[frozenset[Ref]], file: str,
               limits: Limits = Limits(), target: int = 0) -> list[Table]:
    """Another batch query over the same task (one SELECT, as `reference.sql` is: the gate's
    independent reference) over each of `sets`, cast to the declared target types; not
    cached. A query that does not run raises TaskError naming `file`."""
    return _compute(spec, list(sets), limits, sql, file, target)


def _compute(spec: TaskSpec, sets: list[frozenset[Ref]], limits: Limits,
             sql: str | None = None, file: str | None = None, target: int = 0) -> list[Table]:
    """Sets that grow one on another form a chain. For each chain, every source is loaded
    once with a `__step` column, the index of the first set of the chain that holds the
    record, and read through a view that keeps the rows up to the current step: moving to
    the next set is a one-row update rather than a copy of records."""
    log = load_log(spec)
    out: list[Table] = []
    chosen = spec.targets[target]
    file = file or chosen.reference_file
    with reference_engine.database(limits) as db:
        try:
            query = db.split(chosen.reference_sql if sql is None else sql).parsed[0].query
        except Failure as failure:
            raise TaskError(f"{spec.path / file}: {failure.message}") from None
        query = query.strip().rstrip(";")
        casts = ", ".join(f'CAST("{c.name}" AS {c.type}) AS "{c.name}"'
                          for c in chosen.columns)
        db.create("__step", pa.table({"k": pa.array([0], pa.int64())}))
        try:
            for number, chain in enumerate(_chains(sets)):
                first: dict[Ref, int] = {}
                for step, records in enumerate(chain):
                    for ref in records:
                        first.setdefault(ref, step)
                for name, table in log.tables.items():
                    steps = pa.array([first.get((name, row)) for row in range(table.num_rows)],
                                     pa.int64())
                    db.create(f"__log_{number}_{name}", table.append_column("__step", steps))
                    columns = ", ".join(f'"{c}"' for c in table.column_names)
                    db.define(name, f'SELECT {columns} FROM main."__log_{number}_{name}" '
                                    'WHERE __step <= (SELECT k FROM main."__step")')
                for step in range(len(chain)):
                    db.set_step("__step", step)
                    out.append(db.query(f"SELECT {casts} FROM ({query})", "run"))
        except Failure as failure:
            raise TaskError(f"{spec.path / file}: over a part of the log: "
                            f"{failure.message}") from None
    return out


def _chains(sets: list[frozenset[Ref]]) -> list[list[frozenset[Ref]]]:
    chains: list[list[frozenset[Ref]]] = []
    for records in sets:
        if chains and chains[-1][-1] <= records:
            chains[-1].append(records)
        else:
            chains.append([records])
    return chains


def replay_checked(spec: TaskSpec, script: Artifact | str, schedule: Schedule,
                   limits: Limits = Limits(), measure: bool = False,
                   engine_name: EngineName = DEFAULT_ENGINE) -> Checked:
    """A replay that also reads the target after every completed run and compares it."""
    tables: list[tuple[int, tuple[Table, ...] | None, str | None]] = []

    last = len(schedule.batches) - 1

    def after_run(number: int, db: Database) -> None:
        if number == last:
            return  # the replay itself reads the final tables
        try:
            # One query per target: a missing one is the engine's own error, kept as the reason.
            tables.append((number, tuple(db.query(f'SELECT * FROM main."{t.name}"',
                                                  "read-target") for t in spec.targets), None))
        except Failure as failure:
            tables.append((number, None, failure.message))

    outcome = replay(spec, script, schedule, limits, after_run, measure, engine_name)
    if outcome.failure is None and last in delivered(schedule):
        tables.append((last, outcome.tables, None))
    elif outcome.failure is not None and outcome.failure.phase == "read-target" and \
            outcome.failure.batch is None and last in delivered(schedule):
        tables.append((last, None, outcome.failure.message))
    sets = delivered(schedule)
    wanted = references_all(spec, [sets[number] for number, table, _ in tables
                                    if table is not None], limits)
    checks = []
    for number, table, error in tables:
        if table is None:
            checks.append(Check(number, None, error))
        else:
            checks.append(Check(number, compare_all(wanted.pop(0), table, spec.targets)))
    return Checked(outcome, tuple(checks))
