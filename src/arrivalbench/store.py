"""The results file (DESIGN §8): one DuckDB database, the single source of truth of a study.

Schema version 1. A cell (arm, task, replicate) points at an artifact by digest; verdicts are
keyed by what determines them (task digest, schedule, seed, artifact digest, engine and harness
versions), so an artifact that two arms share is graded once and a key is never graded twice.
Timings live in their own table: verdict bytes never depend on them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from arrivalbench.errors import ArrivalBenchError
from arrivalbench.values import JSON, canonical_json, digest

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


@dataclass(frozen=True)
class Turn:
    """One turn of a model arm's repair loop."""

    turn: int
    sql: str | None
    snapshot_verdict: str | None
    feedback: str | None


class Store:
    """A results file. Writes are transactions, so a killed run loses nothing it finished."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.con = duckdb.connect(str(self.path))
        except (duckdb.Error, OSError) as exc:
            raise ArrivalBenchError(f"{self.path}: cannot open as a results file "
                                    f"({str(exc).splitlines()[0]}); give a new path or a "
                                    "results file written by arrivalbench") from None
        self.con.execute(DDL)
        found = self.con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if found is None:
            self.con.execute("INSERT INTO meta VALUES ('schema_version', ?)",
                             [str(SCHEMA_VERSION)])
        elif found[0] != str(SCHEMA_VERSION):
            self.con.close()
            raise ArrivalBenchError(f"{self.path}: results schema version {found[0]}, this "
                                    f"arrivalbench reads version {SCHEMA_VERSION}; use a new "
                                    "results file")

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add_artifact(self, sql: str, idioms: list[str] | None = None) -> str:
        """Store a script once by digest; returns the digest."""
        key = digest(sql)
        self.con.execute("INSERT INTO artifacts VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                         [key, sql, sorted(idioms) if idioms is not None else None])
        return key

    def add_cell(self, cell: Cell) -> None:
        """Insert or replace the cell (a regenerated replicate replaces the earlier one)."""
        self.con.execute("INSERT OR REPLACE INTO cells VALUES (?, ?, ?, ?, ?, ?, ?)",
                         [cell.arm, cell.task, cell.task_digest, cell.replicate, cell.artifact,
                          cell.reason, canonical_json(cell.provenance)])

    def cells(self, arms: list[str] | None = None) -> list[Cell]:
        rows = self.con.execute(
            "SELECT arm, task, task_digest, replicate, artifact, reason, provenance FROM cells "
            "WHERE $1 IS NULL OR list_contains($1, arm) ORDER BY arm, task, replicate",
            [arms]).fetchall()
        return [Cell(a, t, d, r, art, reason, json.loads(p)) for a, t, d, r, art, reason, p
                in rows]

    def artifact_sql(self, artifact: str) -> str:
        found = self.con.execute("SELECT sql FROM artifacts WHERE artifact = ?",
                                 [artifact]).fetchone()
        if found is None:
            raise ArrivalBenchError(f"{self.path}: artifact {artifact} is not stored")
        return str(found[0])

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
