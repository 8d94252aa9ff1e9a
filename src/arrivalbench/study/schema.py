"""The schema of a results file: its tables, its version, and the migrations between versions.

The schema version is recorded in `meta` and checked on every open. Every change of the
tables is a migration and moves `SCHEMA_VERSION`: a file of an older version is migrated when
opened to write, and read through a migrated copy in memory when opened read-only; a file of a
newer version is refused with a one-line error rather than misread.

Versions: 1, the first; 2, a verdict's and a run's engine, and a cell's engine in its key;
3, the run that stored each verdict (`verdicts.run_id`), which decides which of a key's
verdicts is the newest; 4, an artifact's kind and description (`artifacts.kind`, `project`,
`models`, `passed_env`, and a project's files in `projects`), the every-batch check's verdict
beside the final table's (`verdicts.every_batch_verdict`, `every_batch_record`), and the
landing and allowance a verdict was graded under in its key (`landing`, `allowance`).
Every command that grades writes here, and `regrade` and the reports read only this file, so a
study moves as one file.

Tables
------
`meta (key, value)`
    `schema_version`, see above.
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
`artifacts (artifact, sql, idioms, kind, project, models, passed_env)`
    Each artifact once, by `sha256:<hex>` of its text, with its idiom signature tags (sorted;
    NULL when no idiom extractor was installed) and its kind: `script` (`sql` is the script)
    or `dbt` (`sql` is what the project compiled, under a line naming its files; `project` the
    digest of those files, `models` the models graded, `passed_env` the names of the variables
    it may read). A file migrated from version 3 marks its dbt artifacts but holds no files for
    them: they cannot be regraded.
`projects (project, origin, files)`
    The files of each dbt project an artifact names, once by their digest (`origin` the folder
    they were read from): a regrade runs the project as it was graded, wherever the file is.
`cells (arm, task, task_digest, replicate, artifact, reason, provenance, engine)`
    One (arm, task, replicate) on one engine: the artifact it produced, or NULL with the reason
    it produced none. The same arm may hold cells on both engines (its gold differs by engine);
    a file written before a second engine gets the column, every cell `duckdb`, when opened to
    write. `provenance` is JSON: the source file of a gold or negative script (and, for a
    negative, its name and the hazards it declares to fail), the generator of a template, the
    submission file of a human arm, the model and prompt variant of a model arm.
`verdicts`
    One row per replay, keyed by what determines it: (`task_digest`, `schedule`, `seed`,
    `artifact`, `engine_version`, `harness_version`, `landing`, `allowance`). `landing` is
    how the batches reached the sources (`batch` or `accumulate`), `allowance` the records the
    oracle held the artifact to (empty: every one; a duration in seconds such as `3600s`; or
    `model`, the artifact's own), so that verdicts graded under different ones never mix.
    `engine_version` is DuckDB's bare version (as in every file written before a second
    engine) or `<engine> <version>` for another engine (`postgres 18.1`), so the verdicts of
    two engines never share a key; `engine` names the engine. An artifact that two arms share
    is graded once per engine; a key is never graded twice. `record` is the canonical verdict
    JSON, the same bytes whatever the executor, worker count or order of work; `record_digest`
    is its SHA-256; `verdict` is PASS, FAIL or ERROR; `run_id` is the run that stored it (NULL when
    a file migrated from version 2 had no run of the verdict's versions). `record` is always
    the verdict of the final table (the study's figures); when the replay was graded with the
    every-batch check too (`run --every-batch`), that check's verdict is beside it in
    `every_batch_verdict` and `every_batch_record` (NULL otherwise).
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
`minimal_plans`
    `explain --results`: per failing artifact, engine and harness version, the explain
    document of its first failing verdict (the minimal failing plan, its timeline) and its
    shape in words.

Cells join verdicts on (`task_digest`, `artifact`); a verdict's schedule and seed come from the
plan (`snapshot` seed 0, then each control and declared hazard for seeds 0..N-1).

Writes are small transactions made by one process (the parent of a run; workers only
compute), so a killed run loses nothing it had finished, and DuckDB's file lock keeps a second
writer out.
"""

from __future__ import annotations

import duckdb

SCHEMA_VERSION = 4

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

# A verdict's key: what determines its bytes (`study.keys.Key`).
KEY = ("task_digest", "schedule", "seed", "artifact", "engine_version", "harness_version",
       "landing", "allowance")

VERDICTS_DDL = """
CREATE TABLE IF NOT EXISTS verdicts (
    task_digest     VARCHAR NOT NULL,
    schedule        VARCHAR NOT NULL,
    seed            INTEGER NOT NULL,
    artifact        VARCHAR NOT NULL,
    engine_version  VARCHAR NOT NULL,
    harness_version VARCHAR NOT NULL,
    landing         VARCHAR NOT NULL DEFAULT 'batch',  -- batch | accumulate
    allowance       VARCHAR NOT NULL DEFAULT '',       -- '' (every record), 3600s, model
    task            VARCHAR NOT NULL,
    verdict         VARCHAR NOT NULL,      -- PASS | FAIL | ERROR
    record          VARCHAR NOT NULL,      -- the canonical verdict JSON
    record_digest   VARCHAR NOT NULL,
    engine          VARCHAR DEFAULT 'duckdb',
    run_id          INTEGER,               -- the run that stored it
    every_batch_verdict VARCHAR,           -- the every-batch check's, when it ran
    every_batch_record  VARCHAR,
    PRIMARY KEY (task_digest, schedule, seed, artifact, engine_version, harness_version,
                 landing, allowance)
);
"""

COSTS_DDL = """
CREATE TABLE IF NOT EXISTS costs (        -- beside verdicts, keyed like them
    task_digest        VARCHAR NOT NULL,
    schedule           VARCHAR NOT NULL,
    seed               INTEGER NOT NULL,
    artifact           VARCHAR NOT NULL,
    engine_version     VARCHAR NOT NULL,
    harness_version    VARCHAR NOT NULL,
    landing            VARCHAR NOT NULL DEFAULT 'batch',
    allowance          VARCHAR NOT NULL DEFAULT '',
    rows_read          BIGINT NOT NULL,
    rows_written       BIGINT NOT NULL,
    records            BIGINT NOT NULL,
    read_amplification DOUBLE NOT NULL,
    unprofiled         INTEGER NOT NULL,
    PRIMARY KEY (task_digest, schedule, seed, artifact, engine_version, harness_version,
                 landing, allowance)
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
    artifact   VARCHAR PRIMARY KEY,        -- sha256:<hex> of the text
    sql        VARCHAR NOT NULL,           -- the script, or the SQL a dbt project compiled
    idioms     VARCHAR[],                  -- idiom signature tags, sorted
    kind       VARCHAR NOT NULL DEFAULT 'script',  -- script | dbt
    project    VARCHAR,                    -- dbt: the digest of its files (table projects)
    models     VARCHAR[],                  -- dbt: the models graded, one per target
    passed_env VARCHAR[]                   -- dbt: the variables it may read, by name
);
CREATE TABLE IF NOT EXISTS projects (
    project VARCHAR PRIMARY KEY,           -- the digest of the files (and the dbt versions)
    origin  VARCHAR NOT NULL,              -- the folder they were read from
    files   STRUCT(path VARCHAR, data BLOB)[] NOT NULL
);
""" + CELLS_DDL + """
""" + VERDICTS_DDL + """
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
""" + COSTS_DDL + """
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
CREATE TABLE IF NOT EXISTS minimal_plans (  -- explain --results: one per failing artifact
    task_digest      VARCHAR NOT NULL,
    artifact         VARCHAR NOT NULL,
    engine_version   VARCHAR NOT NULL,
    harness_version  VARCHAR NOT NULL,
    task             VARCHAR NOT NULL,
    schedule         VARCHAR NOT NULL,     -- the failing verdict explained
    seed             INTEGER NOT NULL,
    verdict          VARCHAR NOT NULL,     -- FAIL | ERROR | PASS (passes with the check: none)
    shape            VARCHAR NOT NULL,     -- e.g. "one record twice in one batch"
    records          INTEGER,
    batches          INTEGER,
    aborts           INTEGER,
    one_minimal      BOOLEAN,
    replays          INTEGER,
    nondeterministic BOOLEAN NOT NULL,
    document         JSON NOT NULL,        -- the explain document: plan, timeline, diff
    PRIMARY KEY (task_digest, artifact, engine_version, harness_version)
);
"""


# Version 1 -> 2: files written before a second engine lack the `engine` columns. A cell's
# engine is part of its key (the gold of one task differs by engine), so `cells` is rebuilt
# with the new key; every cell of such a file was graded on DuckDB.
_ENGINE_COLUMNS = """
ALTER TABLE runs ADD COLUMN IF NOT EXISTS engine VARCHAR DEFAULT 'duckdb';
ALTER TABLE verdicts ADD COLUMN IF NOT EXISTS engine VARCHAR DEFAULT 'duckdb';
"""
_CELLS_BY_ENGINE = f"""
ALTER TABLE cells RENAME TO cells_before_engines;
{CELLS_DDL}
INSERT INTO cells SELECT *, 'duckdb' FROM cells_before_engines;
DROP TABLE cells_before_engines;
"""

# Version 2 -> 3: the run that stored each verdict. A verdict was stored by the run whose
# timing row of the same replay has the verdict's versions (both are written in the one
# transaction that stores the verdict), else by the first run of those versions.
_RUN_OF_VERDICT = """
ALTER TABLE verdicts ADD COLUMN IF NOT EXISTS run_id INTEGER;
UPDATE verdicts v SET run_id = COALESCE(
    (SELECT min(t.run_id) FROM timings t JOIN runs r ON r.run_id = t.run_id
     WHERE t.task_digest = v.task_digest AND t.schedule = v.schedule AND t.seed = v.seed
       AND t.artifact = v.artifact AND r.harness_version = v.harness_version
       AND r.engine_version = v.engine_version),
    (SELECT min(r.run_id) FROM runs r WHERE r.harness_version = v.harness_version
       AND r.engine_version = v.engine_version))
WHERE v.run_id IS NULL;
"""


# Version 3 -> 4: an artifact's kind and description, and the every-batch verdict. A file of
# version 3 told a dbt artifact only by its cells' provenance, and kept no files for it.
_ARTIFACT_KINDS = """
ALTER TABLE artifacts ADD COLUMN IF NOT EXISTS kind VARCHAR DEFAULT 'script';
ALTER TABLE artifacts ADD COLUMN IF NOT EXISTS project VARCHAR;
ALTER TABLE artifacts ADD COLUMN IF NOT EXISTS models VARCHAR[];
ALTER TABLE artifacts ADD COLUMN IF NOT EXISTS passed_env VARCHAR[];
UPDATE artifacts a SET kind = 'dbt' WHERE EXISTS (
    SELECT 1 FROM cells c WHERE c.artifact = a.artifact
    AND json_extract(c.provenance, '$.dbt_project')::BOOLEAN);
"""
# ... and a verdict's landing and allowance in its key (and a cost's): every verdict of a file
# of version 3 was graded with batch landing and no allowance.
_KEYED_BY_LANDING = f"""
ALTER TABLE verdicts RENAME TO verdicts_v3;
{VERDICTS_DDL}
INSERT INTO verdicts (task_digest, schedule, seed, artifact, engine_version, harness_version,
                      task, verdict, record, record_digest, engine, run_id)
SELECT task_digest, schedule, seed, artifact, engine_version, harness_version, task, verdict,
       record, record_digest, engine, run_id FROM verdicts_v3;
DROP TABLE verdicts_v3;
ALTER TABLE costs RENAME TO costs_v3;
{COSTS_DDL}
INSERT INTO costs (task_digest, schedule, seed, artifact, engine_version, harness_version,
                   rows_read, rows_written, records, read_amplification, unprofiled)
SELECT task_digest, schedule, seed, artifact, engine_version, harness_version, rows_read,
       rows_written, records, read_amplification, unprofiled FROM costs_v3;
DROP TABLE costs_v3;
"""


def _has_column(con: duckdb.DuckDBPyConnection, table: str, column: str) -> bool:
    found = con.execute(
        "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'main' AND "
        "table_name = ? AND column_name = ?", [table, column]).fetchone()
    return bool(found and found[0])


def _to_2(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(_ENGINE_COLUMNS)
    if not _has_column(con, "cells", "engine"):
        con.execute(_CELLS_BY_ENGINE)


def _to_3(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(_RUN_OF_VERDICT)


def _to_4(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(_ARTIFACT_KINDS)
    if not _has_column(con, "verdicts", "landing"):
        con.execute(_KEYED_BY_LANDING)


# MIGRATIONS[v] brings a file of version v to v + 1; each is safe to run on a file that
# already has what it adds (files of version 1 were written with and without engine columns).
MIGRATIONS = {1: _to_2, 2: _to_3, 3: _to_4}
assert sorted(MIGRATIONS) == list(range(1, SCHEMA_VERSION)), "a migration per version"


def tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
    ).fetchall()}


def version_of(con: duckdb.DuckDBPyConnection) -> str | None:
    """The schema version a file records; None when it records none (no `meta` table, or no
    version in it)."""
    if "meta" not in tables(con):
        return None
    found = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return None if found is None else str(found[0])


def create(con: duckdb.DuckDBPyConnection) -> None:
    """Every table of the current version, in a database that holds none."""
    con.execute(DDL)
    con.execute("INSERT INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])


def migrate(con: duckdb.DuckDBPyConnection, version: int) -> None:
    """Bring a file of `version` to `SCHEMA_VERSION`, in one transaction. Tables added since
    the file was written are created first, then each migration runs in turn."""
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(DDL)  # CREATE TABLE IF NOT EXISTS: only what the file lacks
        for step in range(version, SCHEMA_VERSION):
            MIGRATIONS[step](con)
        con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'",
                    [str(SCHEMA_VERSION)])
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")
