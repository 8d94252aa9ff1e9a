"""The results file: one DuckDB database, the single source of truth of a study.

Schema version 1, recorded in `meta` and checked on every open: a file of another version is
refused with a one-line error rather than misread. Every command that grades writes here, and
`regrade` and the reports read only this file, so a study moves as one file.

Tables
------
`meta (key, value)`
    `schema_version` = "1".
`runs`
    One row per `run` (or `grade_arms` call): when it started and finished, its status
    (`running` until it ends, then `finished`, `interrupted` by Ctrl-C or SIGTERM, or `failed`
    on a harness error; a run that was killed stays `running` with no `finished_at`), the
    engine it graded on (`engine`) and the versions of the harness, that engine and Python, the
    executor and its worker count, the seeds,
    arms and tasks asked for, how many replays it graded and how many it found already graded,
    and the command line.
`tasks`
    One row per task digest graded into the file: the task id, where it was loaded from (a
    built-in id, or the folder's path for a user's task), title, mode, difficulty, the declared
    hazards and a JSON summary (negatives and the hazards each declares it fails). Reports and
    `regrade` need nothing but this file to know what a task declares.
`artifacts (artifact, sql, idioms)`
    Each script once, by `sha256:<hex>` of its text, with its idiom signature tags (sorted; NULL
    when no idiom extractor was installed).
`cells (arm, task, task_digest, replicate, artifact, reason, provenance, engine)`
    One (arm, task, replicate) on one engine: the artifact it produced, or NULL with the reason
    it produced none. The same arm may hold cells on both engines (its gold differs by engine);
    a file written before a second engine gets the column, every cell `duckdb`, when opened to
    write. `provenance` is JSON: the source file of a gold or negative script (and, for a
    negative, its name and the hazards it declares to fail), the generator of a template, the
    submission file of a human arm, the model and prompt variant of a model arm.
`verdicts`
    One row per replay, keyed by what determines it: (`task_digest`, `schedule`, `seed`,
    `artifact`, `engine_version`, `harness_version`). `engine_version` is DuckDB's bare version
    (as in every file written before a second engine) or `<engine> <version>` for another
    engine (`postgres 18.1`), so the verdicts of two engines never share a key; `engine` names
    the engine. An artifact that two arms share is graded once per engine; a key is never
    graded twice. `record` is the canonical verdict JSON, the
    same bytes whatever the executor, worker count or order of work; `record_digest` is its
    SHA-256; `verdict` is PASS, FAIL or ERROR.
`nondeterministic`
    Artifacts whose `snapshot` replay, run a second time in the same worker, gave a different
    final table (or error): their verdicts are stored but may not reproduce, and `regrade`
    reports their differences apart from mismatches.
`timings`
    Kept apart from verdicts, so verdict bytes never depend on them: for each replay graded, the
    run that graded it, the wall seconds of the whole work unit in its worker (schedule, replay,
    oracle) and the seconds DuckDB spent on the pipeline's own statements.
`costs`
    Beside verdicts and keyed like them, for replays graded with cost measurement: rows the
    pipeline's statements read from tables in `main` (logical rows after pushed-down filters),
    rows they wrote, the records the schedule delivered, their ratio `read_amplification`, and
    `unprofiled`, the statements (EXECUTE, CALL) whose reads the profiler could not see.
`turns`, `transcripts`
    Model arms: every turn of the repair loop, and the whole transcript with token counts.

Cells join verdicts on (`task_digest`, `artifact`); a verdict's schedule and seed come from the
plan (`snapshot` seed 0, then each control and declared hazard for seeds 0..N-1).

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

from arrivalbench.core.engine import DEFAULT_ENGINE, ENGINES, EngineName, backend
from arrivalbench.core.engine import duckdb as duckdb_engine
from arrivalbench.core.engine.cost import Cost
from arrivalbench.core.values import JSON, canonical_json, digest
from arrivalbench.core.version import harness_version
from arrivalbench.errors import ArrivalBenchError

if TYPE_CHECKING:
    from arrivalbench.core.task import TaskSpec
    from arrivalbench.core.verdict import Verdict

SCHEMA_VERSION = 1
DEFAULT_RESULTS = Path("results") / "arrivalbench.duckdb"  # a study's file unless told

CELLS_DDL = """
CREATE TABLE IF NOT EXISTS cells (
    arm         VARCHAR NOT NULL,
    task        VARCHAR NOT NULL,
    task_digest VARCHAR NOT NULL,
    replicate   INTEGER NOT NULL,
    artifact    VARCHAR,                   -- NULL: the arm produced no script (see reason)
    reason      VARCHAR,
    provenance  JSON NOT NULL,             -- source file, model, prompt variant, ...
    engine      VARCHAR NOT NULL DEFAULT 'duckdb',  -- where the artifact is graded
    PRIMARY KEY (arm, task, replicate, engine)
);
"""

DDL = """
CREATE TABLE IF NOT EXISTS meta (
    key   VARCHAR PRIMARY KEY,
    value VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    run_id          INTEGER PRIMARY KEY,
    started_at      TIMESTAMP NOT NULL,
    harness_version VARCHAR NOT NULL,
    engine_version  VARCHAR NOT NULL,
    python_version  VARCHAR NOT NULL,
    executor        VARCHAR NOT NULL,
    workers         INTEGER NOT NULL,
    seeds           INTEGER NOT NULL,
    arms            VARCHAR[] NOT NULL,
    tasks           VARCHAR[],
    command         VARCHAR,
    status          VARCHAR,               -- running | finished | interrupted | failed
    finished_at     TIMESTAMP,
    graded          INTEGER,               -- replays graded by this run
    skipped         INTEGER,               -- replays of its plan found already graded
    engine          VARCHAR DEFAULT 'duckdb'
);
CREATE TABLE IF NOT EXISTS tasks (
    task_digest VARCHAR PRIMARY KEY,
    task        VARCHAR NOT NULL,
    source      VARCHAR NOT NULL,          -- a built-in id, or the task folder's path
    title       VARCHAR NOT NULL,
    mode        VARCHAR NOT NULL,
    difficulty  VARCHAR NOT NULL,
    hazards     VARCHAR[] NOT NULL,
    summary     JSON NOT NULL              -- negatives and what each declares it fails, ...
);
CREATE TABLE IF NOT EXISTS artifacts (
    artifact VARCHAR PRIMARY KEY,          -- sha256:<hex> of the script text
    sql      VARCHAR NOT NULL,
    idioms   VARCHAR[]                     -- idiom signature tags, sorted
);
""" + CELLS_DDL + """
CREATE TABLE IF NOT EXISTS verdicts (
    task_digest     VARCHAR NOT NULL,
    schedule        VARCHAR NOT NULL,
    seed            INTEGER NOT NULL,
    artifact        VARCHAR NOT NULL,
    engine_version  VARCHAR NOT NULL,
    harness_version VARCHAR NOT NULL,
    task            VARCHAR NOT NULL,
    verdict         VARCHAR NOT NULL,      -- PASS | FAIL | ERROR
    record          VARCHAR NOT NULL,      -- the canonical verdict JSON
    record_digest   VARCHAR NOT NULL,
    engine          VARCHAR DEFAULT 'duckdb',
    PRIMARY KEY (task_digest, schedule, seed, artifact, engine_version, harness_version)
);
CREATE TABLE IF NOT EXISTS nondeterministic (  -- artifacts whose snapshot replayed differently
    task_digest     VARCHAR NOT NULL,
    artifact        VARCHAR NOT NULL,
    engine_version  VARCHAR NOT NULL,
    harness_version VARCHAR NOT NULL,
    detail          JSON NOT NULL,         -- the rows (or errors) the two replays differ in
    PRIMARY KEY (task_digest, artifact, engine_version, harness_version)
);
CREATE TABLE IF NOT EXISTS timings (
    task_digest    VARCHAR NOT NULL,
    schedule       VARCHAR NOT NULL,
    seed           INTEGER NOT NULL,
    artifact       VARCHAR NOT NULL,
    run_id         INTEGER NOT NULL,
    wall_seconds   DOUBLE NOT NULL,
    engine_seconds DOUBLE NOT NULL
);
CREATE TABLE IF NOT EXISTS costs (        -- beside verdicts, keyed like them
    task_digest        VARCHAR NOT NULL,
    schedule           VARCHAR NOT NULL,
    seed               INTEGER NOT NULL,
    artifact           VARCHAR NOT NULL,
    engine_version     VARCHAR NOT NULL,
    harness_version    VARCHAR NOT NULL,
    rows_read          BIGINT NOT NULL,
    rows_written       BIGINT NOT NULL,
    records            BIGINT NOT NULL,
    read_amplification DOUBLE NOT NULL,
    unprofiled         INTEGER NOT NULL,
    PRIMARY KEY (task_digest, schedule, seed, artifact, engine_version, harness_version)
);
CREATE TABLE IF NOT EXISTS turns (         -- model arms: every turn of the repair loop
    arm              VARCHAR NOT NULL,
    task             VARCHAR NOT NULL,
    replicate        INTEGER NOT NULL,
    turn             INTEGER NOT NULL,     -- 1-based
    sql              VARCHAR,              -- NULL: the reply held no script
    snapshot_verdict VARCHAR,
    feedback         VARCHAR,
    PRIMARY KEY (arm, task, replicate, turn)
);
CREATE TABLE IF NOT EXISTS transcripts (
    arm           VARCHAR NOT NULL,
    task          VARCHAR NOT NULL,
    replicate     INTEGER NOT NULL,
    turns         INTEGER NOT NULL,
    input_tokens  BIGINT,
    output_tokens BIGINT,
    transcript    JSON NOT NULL,
    PRIMARY KEY (arm, task, replicate)
);
"""

# Files written before a second engine lack the `engine` columns: added when opened to write.
# A cell's engine is part of its key (the gold of one task differs by engine), so `cells` is
# rebuilt with the new key; every cell of such a file was graded on DuckDB.
MIGRATIONS = """
ALTER TABLE runs ADD COLUMN IF NOT EXISTS engine VARCHAR DEFAULT 'duckdb';
ALTER TABLE verdicts ADD COLUMN IF NOT EXISTS engine VARCHAR DEFAULT 'duckdb';
"""
MIGRATE_CELLS = f"""
ALTER TABLE cells RENAME TO cells_before_engines;
{CELLS_DDL}
INSERT INTO cells SELECT *, 'duckdb' FROM cells_before_engines;
DROP TABLE cells_before_engines;
"""

# (task_digest, schedule, seed, artifact, engine_version, harness_version): the verdict key,
# its engine_version written by `version_tag`.
Key = tuple[str, str, int, str, str, str]


def version_tag(engine: str, version: str) -> str:
    """The engine part of a verdict key: DuckDB's bare version, so that every key stored
    before a second engine existed stays valid, and `<engine> <version>` for any other engine,
    which no DuckDB version can equal."""
    return version if engine == DEFAULT_ENGINE else f"{engine} {version}"


def engine_of(tag: str) -> EngineName:
    """The engine of a key's engine_version (see `version_tag`)."""
    name = tag.split(" ", 1)[0] if " " in tag else DEFAULT_ENGINE
    return name if name in ENGINES else DEFAULT_ENGINE  # type: ignore[return-value]


def key_of(verdict: Verdict) -> Key:
    return (verdict.task_digest, verdict.schedule, verdict.seed, verdict.artifact,
            version_tag(verdict.engine, verdict.engine_version), verdict.harness_version)


def current_versions(engine: EngineName = DEFAULT_ENGINE) -> tuple[str, str]:
    """(engine_version as a key holds it, harness_version) of this installation on `engine`:
    the tail of every key it makes there. Asks the engine its version (PostgreSQL's needs its
    extra installed)."""
    version = duckdb_engine.VERSION if engine == DEFAULT_ENGINE else backend(engine).version()
    return version_tag(engine, version), harness_version()


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
class Graded:
    """A verdict to store, with the timings of the replay that produced it."""

    verdict: Verdict
    wall_seconds: float
    engine_seconds: float
    cost: Cost | None = None


@dataclass(frozen=True)
class StoredVerdict:
    key: Key
    task: str
    verdict: str
    record: str

    @property
    def engine(self) -> EngineName:
        return engine_of(self.key[4])


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
                                    "with 'arrivalbench run --results FILE'")
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
            if not read_only:
                self.con.execute(DDL)
                self.con.execute(MIGRATIONS)
                if not self._has_column("cells", "engine"):
                    with self._transaction():
                        self.con.execute(MIGRATE_CELLS)
            found = self.con.execute(
                "SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except duckdb.Error as exc:
            self.con.close()
            raise ArrivalBenchError(f"{self.path}: not a results file written by arrivalbench "
                                    f"({str(exc).splitlines()[0]})") from None
        if found is None and not read_only:
            self.con.execute("INSERT INTO meta VALUES ('schema_version', ?)",
                             [str(SCHEMA_VERSION)])
        elif found is None or found[0] != str(SCHEMA_VERSION):
            self.con.close()
            got = found[0] if found is not None else "unknown"
            raise ArrivalBenchError(f"{self.path}: results schema version {got}, this "
                                    f"arrivalbench reads version {SCHEMA_VERSION}; use a new "
                                    "results file")

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- artifacts and cells ---------------------------------------------------------------------

    def add_artifact(self, sql: str, idioms: list[str] | None = None) -> str:
        """Store a script once by digest; returns the digest. Idiom tags given later fill in
        tags that were missing (NULL) and never replace stored ones."""
        key = digest(sql)
        self.con.execute(
            "INSERT INTO artifacts VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET "
            "idioms = COALESCE(artifacts.idioms, excluded.idioms)",
            [key, sql, sorted(idioms) if idioms is not None else None])
        return key

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
        """The cells of `arms` (default: all) on `engine` (default: every engine). A file
        written before a second engine, opened read-only, has DuckDB's alone."""
        column = "engine" if self._has_column("cells", "engine") else "'duckdb'"
        rows = self.con.execute(
            "SELECT arm, task, task_digest, replicate, artifact, reason, provenance, "
            f"{column} AS engine FROM cells WHERE ($1 IS NULL OR list_contains($1, arm)) "
            "AND ($2 IS NULL OR engine = $2) ORDER BY arm, task, replicate, engine",
            [arms, engine]).fetchall()
        return [Cell(a, t, d, r, art, reason, json.loads(p), e)
                for a, t, d, r, art, reason, p, e in rows]

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
                   "budget": {"read_amplification": spec.budget.read_amplification}}
        if any(n.fails_on(e) != n.fails for n in spec.negatives for e in ENGINES):
            # Only then, so that a task declared alike on every engine keeps its bytes.
            summary["fails_by_engine"] = {e: {n.name: list(n.fails_on(e)) for n in
                                              spec.negatives} for e in ENGINES}
        self.con.execute("INSERT OR REPLACE INTO tasks VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         [spec.digest, spec.id, source, spec.title, spec.mode, spec.difficulty,
                          list(spec.hazards), canonical_json(summary)])

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

    def add_verdicts(self, graded: Iterable[Graded], run_id: int) -> int:
        """Store verdicts and their timings in one transaction; a key already stored keeps its
        first verdict (and gets no second timing). Returns how many were new."""
        added = 0
        with self._transaction():
            for g in graded:
                v = g.verdict
                record = v.json()
                row = self.con.execute(
                    "INSERT INTO verdicts (task_digest, schedule, seed, artifact, "
                    "engine_version, harness_version, task, verdict, record, record_digest, "
                    "engine) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT DO NOTHING RETURNING 1",
                    [*key_of(v), v.task, v.status, record, digest(record),
                     v.engine]).fetchall()
                if row:
                    added += 1
                    self.con.execute("INSERT INTO timings VALUES (?, ?, ?, ?, ?, ?, ?)",
                                     [v.task_digest, v.schedule, v.seed, v.artifact, run_id,
                                      g.wall_seconds, g.engine_seconds])
                if g.cost is not None:
                    self._add_cost(v, g.cost)
        return added

    def mark_nondeterministic(self, verdict: Verdict, detail: str) -> None:
        """The artifact's snapshot gave another final table when replayed again."""
        self.con.execute("INSERT OR REPLACE INTO nondeterministic VALUES (?, ?, ?, ?, ?)",
                         [verdict.task_digest, verdict.artifact, key_of(verdict)[4],
                          verdict.harness_version, detail])

    def nondeterministic(self) -> set[tuple[str, str]]:
        """(task digest, artifact) of every artifact marked nondeterministic (none in a file
        written before the table existed, opened read-only)."""
        try:
            return {(d, a) for d, a in self.con.execute(
                "SELECT task_digest, artifact FROM nondeterministic").fetchall()}
        except duckdb.CatalogException:
            return set()
    def _add_cost(self, v: Verdict, cost: Cost) -> None:
        # Only with a new verdict: a key is graded once, so is its cost.
        self.con.execute(
            "INSERT INTO costs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [*key_of(v), cost.rows_read, cost.rows_written, cost.records,
             cost.read_amplification, cost.unprofiled])

    def costs(self) -> dict[Key, Cost]:
        """Every stored cost, by verdict key."""
        rows = self.con.execute(
            "SELECT task_digest, schedule, seed, artifact, engine_version, harness_version, "
            "rows_read, rows_written, records, unprofiled FROM costs").fetchall()
        return {(d, s, int(seed), a, e, h): Cost(int(r), int(w), int(n), int(u))
                for d, s, seed, a, e, h, r, w, n, u in rows}

    def graded_keys(self, engine_version: str | None = None,
                    harness_version: str | None = None,
                    engine: EngineName = DEFAULT_ENGINE) -> set[Key]:
        """Keys already graded, by default those of this installation's versions on `engine`
        (`engine_version` as a key holds it, see `version_tag`)."""
        current = current_versions(engine)
        rows = self.con.execute(
            "SELECT task_digest, schedule, seed, artifact, engine_version, harness_version "
            "FROM verdicts WHERE engine_version = ? AND harness_version = ?",
            [engine_version or current[0], harness_version or current[1]]).fetchall()
        return {(d, s, int(seed), a, e, h) for d, s, seed, a, e, h in rows}

    def verdict_kinds(self, engine: EngineName = DEFAULT_ENGINE) -> dict[Key, str]:
        """PASS / FAIL / ERROR for every key of this installation's versions on `engine`."""
        rows = self.con.execute(
            "SELECT task_digest, schedule, seed, artifact, engine_version, harness_version, "
            "verdict FROM verdicts WHERE engine_version = ? AND harness_version = ?",
            list(current_versions(engine))).fetchall()
        return {(d, s, int(seed), a, e, h): k for d, s, seed, a, e, h, k in rows}

    def verdicts(self) -> list[StoredVerdict]:
        """Every stored verdict, in key order."""
        rows = self.con.execute(
            "SELECT task_digest, schedule, seed, artifact, engine_version, harness_version, "
            "task, verdict, record FROM verdicts ORDER BY task_digest, schedule, seed, "
            "artifact, engine_version, harness_version").fetchall()
        return [StoredVerdict((d, s, int(seed), a, e, h), t, k, r)
                for d, s, seed, a, e, h, t, k, r in rows]

    # -- model arms ------------------------------------------------------------------------------

    def add_turns(self, arm: str, task: str, replicate: int, turns: list[Turn]) -> None:
        self.con.execute("DELETE FROM turns WHERE arm = ? AND task = ? AND replicate = ?",
                         [arm, task, replicate])
        for t in turns:
            self.con.execute("INSERT INTO turns VALUES (?, ?, ?, ?, ?, ?, ?)",
                             [arm, task, replicate, t.turn, t.sql, t.snapshot_verdict,
                              t.feedback])

    def add_transcript(self, arm: str, task: str, replicate: int, turns: int,
                       input_tokens: int | None, output_tokens: int | None,
                       transcript: JSON) -> None:
        self.con.execute("INSERT OR REPLACE INTO transcripts VALUES (?, ?, ?, ?, ?, ?, ?)",
                         [arm, task, replicate, turns, input_tokens, output_tokens,
                          canonical_json(transcript)])

    # -- helpers ---------------------------------------------------------------------------------

    def _has_column(self, table: str, column: str) -> bool:
        found = self.con.execute(
            "SELECT count(*) FROM information_schema.columns WHERE table_name = ? AND "
            "column_name = ?", [table, column]).fetchone()
        return bool(found and found[0])

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


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)
