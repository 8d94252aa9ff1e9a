"""Reading a results file for a report: through a read-only `Store`, into plain rows.

A wrong path must be an error, not a new empty results file: the store is opened read-only,
which neither creates a file nor changes one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from arrivalbench.core.engine import DEFAULT_ENGINE
from arrivalbench.errors import ArrivalBenchError
from arrivalbench.study.store import Store

REQUIRED_TABLES = ("meta", "cells", "verdicts", "artifacts", "turns")

# A replay's cost against its task's budget (recorded with the task), NULL when not measured;
# a cost with unprofiled statements is never within budget.
_WITHIN_BUDGET = """(SELECT k.unprofiled = 0 AND k.read_amplification <= CAST(
    json_extract(t.summary, '$.budget.read_amplification') AS DOUBLE)
  FROM costs k LEFT JOIN tasks t ON t.task_digest = k.task_digest
  WHERE k.task_digest = v.task_digest AND k.schedule = v.schedule AND k.seed = v.seed
    AND k.artifact = v.artifact AND k.engine_version = v.engine_version
    AND k.harness_version = v.harness_version)"""

# The engine a verdict ran on, from its canonical record; records written before verdicts
# carried an engine are DuckDB's, the only engine there was.
_ENGINE_OF_RECORD = f"COALESCE(TRY(json_extract_string(v.record, '$.engine')), '{DEFAULT_ENGINE}')"


def _engine(con: duckdb.DuckDBPyConnection) -> str:
    """The expression of a verdict's engine: an `engine` column of `verdicts` when the file has
    one (and it is set), else the record's."""
    columns = {r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = 'main' "
        "AND table_name = 'verdicts'").fetchall()}
    return f"COALESCE(v.engine, {_ENGINE_OF_RECORD})" if "engine" in columns \
        else _ENGINE_OF_RECORD


@dataclass(frozen=True)
class CellRow:
    """One (arm, task, replicate); `artifact` is None when the arm produced no script."""

    arm: str
    task: str
    task_digest: str
    replicate: int
    artifact: str | None
    reason: str | None = None
    engine: str = DEFAULT_ENGINE  # where its artifact is graded (a gold differs per engine)


@dataclass(frozen=True)
class VerdictRow:
    """One stored replay verdict, keyed like the `verdicts` table."""

    task_digest: str
    artifact: str
    schedule: str
    seed: int
    verdict: str
    engine_version: str = "duckdb"
    harness_version: str = "0"
    record: str = ""
    # Whether the replay stayed within its task's read budget; None: its cost was not measured.
    within_budget: bool | None = None
    engine: str = DEFAULT_ENGINE  # the engine the replay ran on


@dataclass(frozen=True)
class TurnRow:
    """One turn of a model arm's snapshot repair loop (1-based)."""

    arm: str
    task: str
    replicate: int
    turn: int
    snapshot_verdict: str | None


@dataclass(frozen=True)
class Results:
    """Everything a report reads, for the selected arms only."""

    arms: tuple[str, ...]
    cells: tuple[CellRow, ...]
    verdicts: tuple[VerdictRow, ...]
    idioms: dict[str, tuple[str, ...] | None]  # artifact -> sorted tags; None: not analysed
    turns: tuple[TurnRow, ...]


def load(path: Path | str, arms: Sequence[str] = (), compare: Sequence[str] = ()) -> Results:
    """Read the cells of `arms` (all arms when empty) and of the `compare` arms, and everything
    attached to them, through a read-only `Store`: the report never creates or changes a
    results file.

    Raises ArrivalBenchError, with a one-line message, for a missing or unreadable file, a file
    that is not a results file of this schema version, a results file without cells, or an arm
    that it does not hold."""
    path = Path(path)
    if not path.exists():
        raise ArrivalBenchError(f"{path}: no such results file; give --results FILE written by "
                                "'arrivalbench run'")
    if path.is_dir():
        raise ArrivalBenchError(f"{path}: is a folder; give --results FILE, a DuckDB results "
                                "file written by 'arrivalbench run'")
    with Store(path, read_only=True) as store:
        try:
            return _read(store, path, list(arms), list(compare))
        except duckdb.Error as exc:
            first = str(exc).strip().splitlines()[0]
            raise ArrivalBenchError(f"{path}: cannot be read as a results file ({first})") \
                from None


def _read(store: Store, path: Path, wanted: list[str], compare: list[str]) -> Results:
    con = store.con
    present = {r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
    ).fetchall()}
    missing = [t for t in REQUIRED_TABLES if t not in present]
    if missing:
        raise ArrivalBenchError(f"{path}: not an arrivalbench results file (no table "
                                f"{', '.join(missing)}); give a file written by "
                                "'arrivalbench run'")
    known = store.arms()
    if not known:
        raise ArrivalBenchError(f"{path}: holds no cells yet; grade some arms first with "
                                "'arrivalbench run --results FILE'")
    unknown = [a for a in dict.fromkeys(wanted) if a not in known]
    if unknown:
        raise ArrivalBenchError(f"--arm {unknown[0]}: not in {path}; arms there: "
                                f"{', '.join(known)}")
    for arm in compare:
        if arm not in known:
            raise ArrivalBenchError(f"--compare {arm}: not in {path}; arms there: "
                                    f"{', '.join(known)}")
    if len(compare) == 2 and compare[0] == compare[1]:
        raise ArrivalBenchError(f"--compare {compare[0]} {compare[1]}: the same arm twice; "
                                "give two different arms")
    arms = tuple(sorted(dict.fromkeys([*wanted, *compare]))) if wanted else tuple(known)
    cells = tuple(CellRow(c.arm, c.task, c.task_digest, c.replicate, c.artifact, c.reason,
                          c.engine) for c in store.cells(list(arms)))
    verdicts = tuple(VerdictRow(*r) for r in con.execute(
        "SELECT task_digest, artifact, schedule, seed, verdict, engine_version, harness_version, "
        f"record, {_WITHIN_BUDGET if 'costs' in present else 'NULL'}, {_engine(con)} "
        "FROM verdicts v WHERE EXISTS (SELECT 1 FROM cells c WHERE list_contains($1, c.arm)"
        " AND c.artifact = v.artifact AND c.task_digest = v.task_digest) "
        "ORDER BY task_digest, artifact, schedule, seed, engine_version, harness_version",
        [list(arms)]).fetchall())
    idioms = {a: (tuple(sorted(tags)) if tags is not None else None) for a, tags in con.execute(
        "SELECT artifact, idioms FROM artifacts a WHERE EXISTS (SELECT 1 FROM cells c "
        "WHERE list_contains($1, c.arm) AND c.artifact = a.artifact) ORDER BY artifact",
        [list(arms)]).fetchall()}
    turns = tuple(TurnRow(*r) for r in con.execute(
        "SELECT arm, task, replicate, turn, snapshot_verdict FROM turns "
        "WHERE list_contains($1, arm) ORDER BY arm, task, replicate, turn",
        [list(arms)]).fetchall())
    return Results(arms, cells, verdicts, idioms, turns)
