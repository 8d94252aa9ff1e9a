"""The results file (DESIGN §8): one DuckDB database, the single source of truth of a study.

Schema version 1. A cell (arm, task, replicate) points at an artifact by digest; verdicts are
keyed by what determines them (task digest, schedule, seed, artifact digest, engine and harness
versions), so an artifact that two arms share is graded once and a key is never graded twice.
Timings live in their own table: verdict bytes never depend on them.
"""

from __future__ import annotations

SCHEMA_VERSION = 1

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
    arms            VARCHAR[] NOT NULL
);
CREATE TABLE IF NOT EXISTS artifacts (
    artifact VARCHAR PRIMARY KEY,          -- sha256:<hex> of the script text
    sql      VARCHAR NOT NULL,
    idioms   VARCHAR[]                     -- idiom signature tags, sorted
);
CREATE TABLE IF NOT EXISTS cells (
    arm         VARCHAR NOT NULL,
    task        VARCHAR NOT NULL,
    task_digest VARCHAR NOT NULL,
    replicate   INTEGER NOT NULL,
    artifact    VARCHAR,                   -- NULL: the arm produced no script (see reason)
    reason      VARCHAR,
    provenance  JSON NOT NULL,             -- source file, model, prompt variant, ...
    PRIMARY KEY (arm, task, replicate)
);
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
    PRIMARY KEY (task_digest, schedule, seed, artifact, engine_version, harness_version)
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
