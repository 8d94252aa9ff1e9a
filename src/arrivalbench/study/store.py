"""The results file: one DuckDB database, the single source of truth of a study.

Every command that grades writes here, and `regrade` and the reports read only this file, so a
study moves as one file. Its tables and their version are in `study.schema`, a verdict's key
in `study.keys`; this module is the one way in: every read and write of a results file is a
method of `Store`.

Writes are small transactions made by one process (the parent of a run; workers only
compute), so a killed run loses nothing it had finished, and DuckDB's file lock keeps a second
writer out.
"""

from __future__ import annotations

import datetime as dt
import json
import platform
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from arrivalbench.core.artifacts import TRAITS, ArtifactRef
from arrivalbench.core.engine import DEFAULT_ENGINE, ENGINES, EngineName, check_engine
from arrivalbench.core.engine.cost import Cost
from arrivalbench.core.task import Budget
from arrivalbench.core.values import JSON, canonical_json, digest
from arrivalbench.errors import ArrivalBenchError
from arrivalbench.study import schema
from arrivalbench.study.keys import Key, current_versions, engine_of, key_of

if TYPE_CHECKING:
    from arrivalbench.core.task import TaskSpec
    from arrivalbench.core.verdict import Verdict

DEFAULT_RESULTS = Path("results") / "arrivalbench.duckdb"
KEY = ", ".join(schema.KEY)  # a verdict's key columns, in `Key`'s order


def _key(row: Sequence[object]) -> Key:
    d, sched, seed, a, e, h, landing, allowance = row
    return Key(str(d), str(sched), int(str(seed)), str(a), str(e), str(h), str(landing),
               str(allowance))  # a study's file unless told


@dataclass(frozen=True)
class Cell:
    """One (arm, task, replicate): one artifact, or the reason there is none."""

    arm: str
    task: str
    task_digest: str
    replicate: int
    artifact: str | None
    reason: str | None = None
    provenance: dict[str, JSON] = field(default_factory=dict)
    engine: EngineName = DEFAULT_ENGINE  # where its artifact is graded


@dataclass(frozen=True)
class Turn:
    """One turn of a model arm's repair loop."""

    turn: int
    sql: str | None
    snapshot_verdict: str | None
    feedback: str | None


@dataclass(frozen=True)
class Replayed:
    """A verdict to store (the final table's), with the timings and cost of the replay that
    produced it and, when the every-batch check ran, that check's verdict beside it."""

    verdict: Verdict
    wall_seconds: float
    engine_seconds: float
    cost: Cost | None = None
    every_batch: Verdict | None = None


@dataclass(frozen=True)
class StoredVerdict:
    key: Key
    task: str
    verdict: str
    record: str
    engine: EngineName = DEFAULT_ENGINE
    run_id: int | None = None  # the run that stored it (None: unknown, see `schema`)
    every_batch: str | None = None  # the every-batch check's record, when it ran


@dataclass(frozen=True)
class MinimalPlan:
    """One row of `minimal_plans`: the explain document of an artifact's first failing
    verdict, with its shape and the minimal plan's size."""

    task_digest: str
    artifact: str
    engine_version: str
    harness_version: str
    task: str
    schedule: str
    seed: int
    verdict: str
    shape: str
    records: int | None
    batches: int | None
    aborts: int | None
    one_minimal: bool | None
    replays: int | None
    nondeterministic: bool
    document: dict[str, JSON]


@dataclass(frozen=True)
class StoredTask:
    task_digest: str
    task: str
    source: str
    hazards: tuple[str, ...]


class Store:
    """A results file. Writes are transactions, so a killed run loses nothing it finished.

    `read_only=True` opens an existing file without changing it (and without creating one)."""

    def __init__(self, path: Path | str, read_only: bool = False) -> None:
        self.path = Path(path)
        if read_only and not self.path.is_file():
            raise ArrivalBenchError(f"{self.path}: no such results file; grade into it first "
                                    "(arrivalbench run)")
        try:
            if not read_only:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self.con = duckdb.connect(str(self.path), read_only=read_only)
        except (duckdb.Error, OSError) as exc:
            fix = ("give a results file written by arrivalbench" if read_only else
                   "give a new path or a results file written by arrivalbench")
            raise ArrivalBenchError(f"{self.path}: cannot open as a results file "
                                    f"({str(exc).splitlines()[0]}); {fix}, not in use by "
                                    "another arrivalbench process") from None
        try:
            self._check_schema(read_only)
        except BaseException:
            self.con.close()
            raise

    def _check_schema(self, read_only: bool) -> None:
        """Refuse what is not a results file of a version this arrivalbench reads; bring an
        older one to the current version (in memory when read-only). Only what the file
        records is judged here: an error of the schema's own SQL is a bug and propagates."""
        found = schema.version_of(self.con)
        if found is None:
            if read_only or _holds_anything(self.con):  # never add tables to another database
                raise ArrivalBenchError(f"{self.path}: not a results file written by "
                                        "arrivalbench (it records no schema version)")
            schema.create(self.con)
            return
        if not found.isdigit() or not 1 <= int(found) <= schema.SCHEMA_VERSION:
            raise ArrivalBenchError(f"{self.path}: results schema version {found}, this "
                                    f"arrivalbench reads versions 1 to "
                                    f"{schema.SCHEMA_VERSION}; use a newer arrivalbench or a "
                                    "new results file")
        if int(found) == schema.SCHEMA_VERSION:
            return
        if read_only:
            self.con = _migrated_copy(self.con, self.path, int(found))
        else:
            schema.migrate(self.con, int(found))

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- artifacts and cells ---------------------------------------------------------------------

    def add_artifact(self, ref: ArtifactRef, idioms: list[str] | None = None) -> str:
        """Store an artifact once by digest, with a project's files once by their digest;
        returns the artifact digest. Idiom tags given later fill in tags that were missing
        (NULL) and never replace stored ones."""
        key = ref.digest
        with self._transaction():
            if ref.project is not None:
                self.con.execute(
                    "INSERT INTO projects VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                    [ref.project, ref.origin,
                     [{"path": rel, "data": data} for rel, data in ref.files]])
            self.con.execute(
                "INSERT INTO artifacts VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
                "idioms = COALESCE(artifacts.idioms, excluded.idioms)",
                [key, ref.text, sorted(idioms) if idioms is not None else None, ref.kind,
                 ref.project, list(ref.models), list(ref.passed_env)])
        return key

    def artifact(self, artifact: str) -> ArtifactRef:
        """The stored description of `artifact`, content and all. A project whose files this
        file does not hold (one stored before they were) is a one-line error."""
        found = self.con.execute(
            "SELECT a.sql, a.kind, a.project, a.models, a.passed_env, p.origin, p.files, "
            "a.project IS NULL OR p.project IS NOT NULL FROM artifacts a LEFT JOIN projects p "
            "ON p.project = a.project WHERE a.artifact = ?", [artifact]).fetchone()
        if found is None:
            raise ArrivalBenchError(f"{self.path}: artifact {artifact} is not stored")
        text, kind, project, models, passed_env, origin, files, whole = found
        if not whole or (TRAITS[kind].files and project is None):
            raise ArrivalBenchError(f"{self.path}: artifact {artifact} is a {kind} artifact "
                                    "whose files this results file does not hold (it was "
                                    "stored by an older arrivalbench); grade it again")
        return ArtifactRef(kind, text, tuple((f["path"], bytes(f["data"])) for f in files or ()),
                           project, tuple(models or ()), tuple(passed_env or ()), origin or "")

    def add_cell(self, cell: Cell) -> None:
        """Insert or replace the cell (a regenerated replicate replaces the earlier one)."""
        self.con.execute("INSERT OR REPLACE INTO cells VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         [cell.arm, cell.task, cell.task_digest, cell.replicate, cell.artifact,
                          cell.reason, canonical_json(cell.provenance), cell.engine])

    def replace_cells(self, arm: str, task: str, cells: Sequence[Cell],
                      engine: EngineName = DEFAULT_ENGINE) -> None:
        """In one transaction, make `cells` the only cells of (arm, task) on `engine`: a
        replicate that the arm no longer produces (a removed negative or submission file)
        goes; the arm's cells on another engine stay."""
        with self._transaction():
            self.con.execute("DELETE FROM cells WHERE arm = ? AND task = ? AND engine = ?",
                             [arm, task, engine])
            for cell in cells:
                self.add_cell(cell)

    def cells(self, arms: list[str] | None = None, engine: EngineName | None = None
              ) -> list[Cell]:
        """The cells of `arms` (default: all) on `engine` (default: every engine)."""
        rows = self.con.execute(
            "SELECT arm, task, task_digest, replicate, artifact, reason, provenance, "
            "engine FROM cells WHERE ($1 IS NULL OR list_contains($1, arm)) "
            "AND ($2 IS NULL OR engine = $2) ORDER BY arm, task, replicate, engine",
            [arms, engine]).fetchall()
        return [Cell(a, t, d, r, art, reason, json.loads(p), e)
                for a, t, d, r, art, reason, p, e in rows]

    def idioms(self, arms: Sequence[str]) -> dict[str, tuple[str, ...] | None]:
        """The sorted idiom tags of every artifact of `arms`' cells; None: not analysed."""
        return {a: (tuple(sorted(tags)) if tags is not None else None) for a, tags in
                self.con.execute(
                    "SELECT artifact, idioms FROM artifacts a WHERE EXISTS (SELECT 1 FROM cells "
                    "c WHERE list_contains($1, c.arm) AND c.artifact = a.artifact) "
                    "ORDER BY artifact", [list(arms)]).fetchall()}

    def arms(self) -> list[str]:
        return [r[0] for r in self.con.execute(
            "SELECT DISTINCT arm FROM cells ORDER BY arm").fetchall()]

    def artifact_sql(self, artifact: str) -> str:
        found = self.con.execute("SELECT sql FROM artifacts WHERE artifact = ?",
                                 [artifact]).fetchone()
        if found is None:
            raise ArrivalBenchError(f"{self.path}: artifact {artifact} is not stored")
        return str(found[0])

    def artifact_idioms(self, artifact: str) -> list[str] | None:
        found = self.con.execute("SELECT idioms FROM artifacts WHERE artifact = ?",
                                 [artifact]).fetchone()
        return None if found is None or found[0] is None else list(found[0])

    # -- tasks -----------------------------------------------------------------------------------

    def add_task(self, spec: TaskSpec, source: str) -> None:
        """Record what a task declares, under its digest. `source` is how to load it again: a
        built-in id or the task folder's path."""
        summary: dict[str, JSON] = {"negatives": {n.name: list(n.fails) for n in spec.negatives},
                   "target": spec.target.name, "gold_idiom": spec.gold_idiom,
                   "evolution": None if spec.evolution is None else
                   {"source": spec.evolution.source, "column": spec.evolution.column,
                    "type": spec.evolution.type},
                   "budget": {"read_amplification": spec.budget.read_amplification},
                   "tier": spec.tier, "family": spec.family}
        if len(spec.targets) > 1:
            summary["targets"] = [t.name for t in spec.targets]
        if any(n.fails_on(e) != n.fails for n in spec.negatives for e in ENGINES):
            # Only then, so that a task declared alike on every engine keeps its bytes.
            summary["fails_by_engine"] = {e: {n.name: list(n.fails_on(e)) for n in
                                              spec.negatives} for e in ENGINES}
        self.con.execute("INSERT OR REPLACE INTO tasks VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         [spec.digest, spec.id, source, spec.title, spec.mode, spec.difficulty,
                          list(spec.hazards), canonical_json(summary)])

    def budgets(self) -> dict[str, Budget]:
        """The read budget each stored task declared, by task digest."""
        rows = self.con.execute(
            "SELECT task_digest, CAST(json_extract(summary, '$.budget.read_amplification') "
            "AS DOUBLE) FROM tasks").fetchall()
        return {d: Budget(float(b)) for d, b in rows if b is not None}

    def tiers(self) -> dict[str, str]:
        """The tier each stored task declared, by task digest (core for a task stored before
        tiers existed)."""
        rows = self.con.execute(
            "SELECT task_digest, json_extract_string(summary, '$.tier') FROM tasks").fetchall()
        return {d: t or "core" for d, t in rows}

    def tasks(self) -> dict[str, StoredTask]:
        """Every stored task by digest."""
        rows = self.con.execute(
            "SELECT task_digest, task, source, hazards FROM tasks ORDER BY task, task_digest"
        ).fetchall()
        return {d: StoredTask(d, t, s, tuple(h)) for d, t, s, h in rows}

    # -- runs ------------------------------------------------------------------------------------

    def start_run(self, executor: str, workers: int, seeds: int, arms: Sequence[str],
                  tasks: Sequence[str] | None = None, command: str | None = None,
                  engine: EngineName = DEFAULT_ENGINE) -> int:
        engine_version, harness_version = current_versions(engine)
        with self._transaction():
            found = self.con.execute("SELECT coalesce(max(run_id), 0) + 1 FROM runs").fetchone()
            run_id = int(found[0]) if found else 1
            self.con.execute(
                "INSERT INTO runs (run_id, started_at, harness_version, engine_version, "
                "python_version, executor, workers, seeds, arms, tasks, command, status, engine) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?)",
                [run_id, _now(), harness_version, engine_version, platform.python_version(),
                 executor, workers, seeds, list(arms), list(tasks) if tasks is not None else None,
                 command, engine])
        return run_id

    def finish_run(self, run_id: int, status: str, graded: int, skipped: int) -> None:
        self.con.execute("UPDATE runs SET status = ?, finished_at = ?, graded = ?, skipped = ? "
                         "WHERE run_id = ?", [status, _now(), graded, skipped, run_id])

    # -- verdicts --------------------------------------------------------------------------------

    def add_verdicts(self, replayed: Iterable[Replayed], run_id: int) -> int:
        """Store verdicts and their timings in one transaction. A key already stored keeps its
        first verdict (and gets no second timing); one stored without the every-batch check
        gains that check's verdict. Returns how many were new, or newly checked."""
        added = 0
        with self._transaction():
            for g in replayed:
                v, extra = g.verdict, g.every_batch
                record = v.json()
                key = key_of(v).row()
                checked = (None, None) if extra is None else (extra.status, extra.json())
                new = self.con.execute(
                    f"INSERT INTO verdicts ({KEY}, task, verdict, record, record_digest, "
                    "engine, run_id, every_batch_verdict, every_batch_record) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT DO NOTHING RETURNING 1",
                    [*key, v.task, v.status, record, digest(record), v.engine, run_id,
                     *checked]).fetchall()
                if new:
                    self.con.execute("INSERT INTO timings VALUES (?, ?, ?, ?, ?, ?, ?)",
                                     [v.task_digest, v.schedule, v.seed, v.artifact, run_id,
                                      g.wall_seconds, g.engine_seconds])
                elif extra is not None:
                    new = self.con.execute(
                        f"UPDATE verdicts SET every_batch_verdict = ?, every_batch_record = ? "
                        f"WHERE ({KEY}) = (?, ?, ?, ?, ?, ?, ?, ?) AND every_batch_record "
                        "IS NULL RETURNING 1", [*checked, *key]).fetchall()
                added += bool(new)
                if g.cost is not None:
                    self._add_cost(v, g.cost)
        return added

    def mark_nondeterministic(self, verdict: Verdict, detail: str) -> None:
        """The artifact's snapshot gave another final table when replayed again."""
        self.con.execute("INSERT OR REPLACE INTO nondeterministic VALUES (?, ?, ?, ?, ?)",
                         [verdict.task_digest, verdict.artifact, key_of(verdict).engine_version,
                          verdict.harness_version, detail])

    def nondeterministic(self) -> set[tuple[str, str]]:
        """(task digest, artifact) of every artifact marked nondeterministic."""
        return {(d, a) for d, a in self.con.execute(
            "SELECT task_digest, artifact FROM nondeterministic").fetchall()}

    def _add_cost(self, v: Verdict, cost: Cost) -> None:
        # Only with a new verdict: a key is graded once, so is its cost.
        self.con.execute(
            "INSERT INTO costs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            [*key_of(v).row(), cost.rows_read, cost.rows_written, cost.records,
             cost.read_amplification, cost.unprofiled])

    def costs(self) -> dict[Key, Cost]:
        """Every stored cost, by verdict key."""
        rows = self.con.execute(
            f"SELECT {KEY}, rows_read, rows_written, records, unprofiled FROM costs").fetchall()
        return {_key(row[:8]): Cost(*(int(v) for v in row[8:])) for row in rows}

    def graded_keys(self, engine_version: str | None = None,
                    harness_version: str | None = None,
                    engine: EngineName = DEFAULT_ENGINE, every_batch: bool = False) -> set[Key]:
        """Keys already graded, by default those of this installation's versions on `engine`
        (`engine_version` as a key holds it, see `version_tag`); with `every_batch`, only
        those graded with the every-batch check too."""
        current = current_versions(engine)
        rows = self.con.execute(
            f"SELECT {KEY} FROM verdicts WHERE engine_version = ? AND harness_version = ? "
            "AND (NOT ? OR every_batch_record IS NOT NULL)",
            [engine_version or current[0], harness_version or current[1],
             every_batch]).fetchall()
        return {_key(row) for row in rows}

    def verdict_kinds(self, engine: EngineName = DEFAULT_ENGINE) -> dict[Key, str]:
        """PASS / FAIL / ERROR for every key of this installation's versions on `engine`."""
        rows = self.con.execute(
            f"SELECT {KEY}, verdict FROM verdicts WHERE engine_version = ? AND "
            "harness_version = ?", list(current_versions(engine))).fetchall()
        return {_key(row[:8]): row[8] for row in rows}

    def verdicts(self, arms: Sequence[str] | None = None) -> list[StoredVerdict]:
        """Every stored verdict (with `arms`, of the artifacts of those arms' cells), in key
        order."""
        rows = self.con.execute(
            f"SELECT {KEY}, task, verdict, record, engine, run_id, every_batch_record "
            "FROM verdicts v "
            "WHERE $1 IS NULL OR EXISTS "
            "(SELECT 1 FROM cells c WHERE list_contains($1, c.arm) AND c.artifact = v.artifact "
            f"AND c.task_digest = v.task_digest) ORDER BY {KEY}",
            [None if arms is None else list(arms)]).fetchall()
        return [StoredVerdict(_key(row[:8]), t, k, r,
                              check_engine(engine) if engine else engine_of(row[4]), run, every)
                for row in rows for t, k, r, engine, run, every in [row[8:]]]

    # -- explain --results -----------------------------------------------------------------------

    def failing_verdicts(self, engine_version: str, harness_version: str
                         ) -> dict[tuple[str, str], list[tuple[str, int, str]]]:
        """(schedule, seed, verdict) of every verdict not PASS of these versions, by (task
        digest, artifact)."""
        failing: dict[tuple[str, str], list[tuple[str, int, str]]] = {}
        for d, a, s, seed, v in self.con.execute(
                "SELECT task_digest, artifact, schedule, seed, verdict FROM verdicts WHERE "
                "verdict <> 'PASS' AND engine_version = ? AND harness_version = ? "
                "ORDER BY ALL", [engine_version, harness_version]).fetchall():
            failing.setdefault((d, a), []).append((s, int(seed), v))
        return failing

    def explained(self, engine_version: str, harness_version: str) -> set[tuple[str, str]]:
        """(task digest, artifact) of every minimal plan stored for these versions."""
        return {(d, a) for d, a in self.con.execute(
            "SELECT task_digest, artifact FROM minimal_plans WHERE engine_version = ? AND "
            "harness_version = ?", [engine_version, harness_version]).fetchall()}

    def add_minimal_plan(self, plan: MinimalPlan) -> None:
        self.con.execute(
            "INSERT INTO minimal_plans VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [plan.task_digest, plan.artifact, plan.engine_version, plan.harness_version,
             plan.task, plan.schedule, plan.seed, plan.verdict, plan.shape, plan.records,
             plan.batches, plan.aborts, plan.one_minimal, plan.replays,
             plan.nondeterministic, canonical_json(plan.document)])

    def minimal_plans(self) -> list[tuple[str, dict[str, JSON]]]:
        """(shape, explain document) of every stored minimal plan, by task and artifact."""
        return [(shape, json.loads(document)) for shape, document in self.con.execute(
            "SELECT shape, document FROM minimal_plans ORDER BY task, artifact").fetchall()]

    # -- model arms ------------------------------------------------------------------------------

    def add_turns(self, arm: str, task: str, replicate: int, turns: list[Turn]) -> None:
        self.con.execute("DELETE FROM turns WHERE arm = ? AND task = ? AND replicate = ?",
                         [arm, task, replicate])
        for t in turns:
            self.con.execute("INSERT INTO turns VALUES (?, ?, ?, ?, ?, ?, ?)",
                             [arm, task, replicate, t.turn, t.sql, t.snapshot_verdict,
                              t.feedback])

    def turns(self, arms: Sequence[str]) -> list[tuple[str, str, int, int, str | None]]:
        """(arm, task, replicate, turn, snapshot verdict) of every turn of `arms`."""
        return [(a, t, int(r), int(n), v) for a, t, r, n, v in self.con.execute(
            "SELECT arm, task, replicate, turn, snapshot_verdict FROM turns "
            "WHERE list_contains($1, arm) ORDER BY arm, task, replicate, turn",
            [list(arms)]).fetchall()]

    def add_transcript(self, arm: str, task: str, replicate: int, turns: int,
                       input_tokens: int | None, output_tokens: int | None,
                       transcript: JSON) -> None:
        self.con.execute("INSERT OR REPLACE INTO transcripts VALUES (?, ?, ?, ?, ?, ?, ?)",
                         [arm, task, replicate, turns, input_tokens, output_tokens,
                          canonical_json(transcript)])

    # -- helpers ---------------------------------------------------------------------------------

    def _transaction(self) -> _Transaction:
        return _Transaction(self.con)


class _Transaction:
    """BEGIN ... COMMIT, rolled back on any exception; nests by joining the outer one."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.outer = False

    def __enter__(self) -> None:
        try:
            self.con.execute("BEGIN TRANSACTION")
        except duckdb.TransactionException:  # already inside one: join it
            self.outer = True

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        if self.outer:
            return
        self.con.execute("ROLLBACK" if kind is not None else "COMMIT")


def _migrated_copy(con: duckdb.DuckDBPyConnection, path: Path, version: int
                   ) -> duckdb.DuckDBPyConnection:
    """The file's tables copied into memory and migrated there: a reader of an older file sees
    the current schema and the file is left as it was."""
    con.close()
    memory = duckdb.connect()
    quoted = "'" + str(path).replace("'", "''") + "'"
    memory.execute(f"ATTACH {quoted} AS written (READ_ONLY)")
    memory.execute("COPY FROM DATABASE written TO memory")
    memory.execute("DETACH written")
    schema.migrate(memory, version)
    return memory


def _holds_anything(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether a database holds a table, view, sequence, macro or schema of its own, in any
    schema: a user's tables in `raw` are as much theirs as those in `main`."""
    return bool(con.execute(
        "SELECT 1 FROM duckdb_tables() WHERE NOT internal UNION ALL "
        "SELECT 1 FROM duckdb_views() WHERE NOT internal UNION ALL "
        "SELECT 1 FROM duckdb_sequences() UNION ALL "
        "SELECT 1 FROM duckdb_functions() WHERE NOT internal AND database_name <> 'system' "
        "UNION ALL SELECT 1 FROM duckdb_schemas() WHERE NOT internal "
        "AND schema_name NOT IN ('main', 'information_schema', 'pg_catalog') LIMIT 1"
    ).fetchall())


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)
