"""The every-batch check: after each completed run the target must hold the reference over the
records delivered so far, not only after the last one.

"Delivered so far" after batch k is the set of distinct records of the batches 0..k whose run
completed: an aborted run's records count once the retry of its batch completes. The reference
over such a set is `reference.sql` over exactly those records, computed in a database of its own
after the replay (never inside the pipeline's database) and cached by the set, since shrinking
asks for the same sets again and again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa
import sqlglot
from sqlglot import exp

from arrivalbench.core.artifacts import Artifact
from arrivalbench.core.engine import DEFAULT_ENGINE, Database, EngineName, Failure, Limits, Table
from arrivalbench.core.engine import duckdb as reference_engine
from arrivalbench.core.log import load_log
from arrivalbench.core.oracle import Diff, compare_all
from arrivalbench.core.replay import Outcome, expected_all, reference_tables, replay
from arrivalbench.core.schedules import Ref, Schedule
from arrivalbench.core.task import Landing, TaskSpec
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
    record. The sets of a chain are then computed in one query (`stepped`), each source read
    through a subquery of the rows up to the step of the outer row: DuckDB runs the query
    once for all of them, at a fraction of the cost of one query per set. The first time a
    query is computed so in a process, four of its sets (`_probes`) are also computed on their
    own, through a view of the rows up to the current step, and must agree row for row; where
    they do not, or where the query cannot be written so, every set is computed on its own."""
    log = load_log(spec)
    tables = reference_tables(spec, log)
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
        key = (spec.digest, query, casts)
        try:
            for number, chain in enumerate(_chains(sets)):
                first: dict[Ref, int] = {}
                for step, records in enumerate(chain):
                    for ref in records:
                        first.setdefault(ref, step)
                logs = {}
                for name, table in tables.items():
                    steps = pa.array([first.get((name, row)) for row in range(table.num_rows)],
                                     pa.int64())
                    logs[name] = f"__log_{number}_{name}"
                    db.create(logs[name], table.append_column("__step", steps))
                    columns = ", ".join(f'"{c}"' for c in table.column_names)
                    db.define(name, f'SELECT {columns} FROM main."{logs[name]}" '
                                    'WHERE __step <= (SELECT k FROM main."__step")')
                together = _together(db, query, casts, logs, tables, number, len(chain)) \
                    if len(chain) > 1 and _STEPPED.get(key, True) else None

                def alone(step: int) -> Table:
                    db.set_step("__step", step)
                    return db.query(f"SELECT {casts} FROM ({query})", "run")

                if together is not None and key not in _STEPPED:
                    _STEPPED[key] = all(_same(alone(step), together[step])
                                        for step in _probes(len(chain)))
                if together is not None and _STEPPED[key]:
                    out.extend(together)
                else:
                    out.extend(alone(step) for step in range(len(chain)))
        except Failure as failure:
            raise TaskError(f"{spec.path / file}: over a part of the log: "
                            f"{failure.message}") from None
    return out


# Whether a query's sets, computed together, agreed with the same sets computed alone (per
# process, by task digest and query): checked once, then trusted.
_STEPPED: dict[tuple[str, str, str], bool] = {}


def _together(db: reference_engine.Database, query: str, casts: str, logs: dict[str, str],
              tables: Mapping[str, pa.Table], number: int, count: int) -> list[Table] | None:
    """The query over each step 0..count-1 of a chain, in one query; None where the query
    cannot be written so or DuckDB cannot run it (each step is then computed alone)."""
    columns = {name: tuple(table.column_names) for name, table in tables.items()}
    text = stepped(query, logs, columns)
    if text is None:
        return None
    db.create(f"__steps_{number}", pa.table({"k": pa.array(range(count), pa.int64())}))
    try:
        table = db.query(f'SELECT __s.k AS "__k", {casts} FROM main."__steps_{number}" AS __s, '
                         f"LATERAL ({text}) AS __r", "run")
    except Failure:
        return None
    rows: list[list[tuple[object, ...]]] = [[] for _ in range(count)]
    for row in table.rows:
        rows[int(str(row[0]))].append(row[1:])
    return [Table(table.columns[1:], tuple(r)) for r in rows]


def stepped(query: str, logs: Mapping[str, str], columns: Mapping[str, Sequence[str]]
            ) -> str | None:
    """`query` with each source it reads by name replaced by the rows of its log (`logs`:
    source -> table in main) up to the step `__s.k` of an outer row; None when sqlglot cannot
    parse it back."""
    try:
        tree = sqlglot.parse_one(query, read="duckdb")
    except sqlglot.errors.SqlglotError:
        return None
    own = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    for table in list(tree.find_all(exp.Table)):
        name = table.name
        # `main.x` is the source; a bare `x` is the query's own common table expression if
        # it has one of that name (the check against each set alone catches any other case).
        if name in logs and not table.catalog and (table.db == "main" or
                                                   (not table.db and name not in own)):
            picked = ", ".join(f'"{c}"' for c in columns[name])
            rows = sqlglot.parse_one(f'SELECT {picked} FROM main."{logs[name]}" '
                                     "WHERE __step <= __s.k", read="duckdb")
            table.replace(exp.Subquery(this=rows, alias=exp.TableAlias(
                this=exp.to_identifier(table.alias or name))))
    return tree.sql(dialect="duckdb")


def _probes(count: int) -> list[int]:
    """The steps of a chain computed alone to check the query that computes them together:
    the first, the last and two between."""
    return sorted({0, count // 3, 2 * count // 3, count - 1})


def _same(a: Table, b: Table) -> bool:
    return a.columns == b.columns and Counter(a.rows) == Counter(b.rows)


def _chains(sets: list[frozenset[Ref]]) -> list[list[frozenset[Ref]]]:
    chains: list[list[frozenset[Ref]]] = []
    for records in sets:
        if chains and chains[-1][-1] <= records:
            chains[-1].append(records)
        else:
            chains.append([records])
    return chains


def replay_checked(spec: TaskSpec, script: Artifact | str, schedule: Schedule,
                   limits: Limits = Limits(), *, measure: bool = False,
                   engine_name: EngineName = DEFAULT_ENGINE, first_only: bool = False,
                   landing: Landing = "batch", late: frozenset[Ref] = frozenset()
                   ) -> Checked:
    """A replay that also reads the target after every completed run and compares it with the
    reference over the records delivered so far (but those in `late`: beyond an allowance).
    With `first_only` (a verdict needs no more) the checks stop at the first divergence, and
    the runs after it are not compared: a diff of a wrong table is the costly kind."""
    unread = frozenset(s.load_time.lower() for s in spec.sources) \
        if landing == "accumulate" else frozenset()
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

    outcome = replay(spec, script, schedule, limits, after_run, measure=measure,
                     engine_name=engine_name, landing=landing)
    if outcome.failure is None and last in delivered(schedule):
        tables.append((last, outcome.tables, None))
    elif outcome.failure is not None and outcome.failure.phase == "read-target" and \
            outcome.failure.batch is None and last in delivered(schedule):
        tables.append((last, None, outcome.failure.message))
    sets = delivered(schedule)
    wanted = references_all(spec, [sets[number] - late for number, table, _ in tables
                                    if table is not None], limits)
    checks: list[Check] = []
    for number, table, error in tables:
        if first_only and checks and not checks[-1].ok:
            break
        if table is None:
            checks.append(Check(number, None, error))
        else:
            checks.append(Check(number, compare_all(wanted.pop(0), table, spec.targets,
                                                    unread=unread)))
    return Checked(outcome, tuple(checks))


def reads_its_sources(spec: TaskSpec) -> bool:
    """Whether every target's reference reads the task's sources, and so has a result over
    every part of the log (a task derived from a dbt project may hold its full refresh's rows
    instead)."""
    names = {source.name.lower() for source in spec.sources}
    for target in spec.targets:
        tree = sqlglot.parse_one(target.reference_sql, read="duckdb")
        if not any(t.name.lower() in names and not t.db for t in tree.find_all(exp.Table)):
            return False
    return True
