"""The golden report: a small results file built by hand, every metric derived by hand.

The file has three tasks (t1, t2, t3) and three arms. Verdicts are written per cell as one
letter per seed (P = PASS, F = FAIL, E = ERROR), seeds 0 and 1; `snapshot` has seed 0 only.

alpha (one cell per task, no idiom tags, no turns)
    a1 t1: snapshot P | in_order PP trickle PP | late_arrival PP, duplicates PF
    a2 t2: snapshot P | in_order PP trickle PF | out_of_order PP, crash_retry EP,
           schema_evolution PP
    a3 t3: snapshot F | in_order PP trickle PP | duplicates FF, backfill PP
m:unhinted (a model arm: replicates 0 and 1, repair turns, idiom tags)
    b1 t1 r0: [batch_dedup, history_table]; snapshot P | PP PP | late_arrival PP,
              duplicates PP (+ an older harness version's FAIL on seed 1, + a `chaos` FAIL:
              both must be ignored); turns: PASS
    b2 t1 r1: [history_table]; snapshot P | PP PP | late_arrival PP, duplicates FP;
              turns: FAIL, PASS (repaired)
    -- t2 r0: no artifact ("no SQL in the reply"); turns: one reply without a script
    b3 t2 r1: [] (analysed, no tag); snapshot P | PP PP | out_of_order FF, crash_retry PP,
              schema_evolution EE; turns: PASS
    b4 t3 r0: idioms NULL; no verdict at all (ungraded); turns: FAIL, PASS
    b5 t3 r1: [batch_dedup]; snapshot F | PP PP | duplicates PP, backfill FF; turns: F, F, F
negatives (two negative controls of t1; no control verdicts)
    n1 t1 r0: snapshot P | late_arrival FP, duplicates PP
    n2 t1 r1: snapshot P | late_arrival PP, duplicates PE

Intervals. The bootstrap draws 3 tasks with replacement from an arm's 3 tasks. A metric whose
eligible tasks all have the same rate has a degenerate interval (low = high = value). With two
eligible tasks of rates a < b (the third task ineligible), "only t1 among the eligible draws" and
"only t2" each have probability 7/27 (26% >> 2.5%), so the interval is [a, b]. With three
tasks of rates (1, 1, 0), all three draws hit the 0-task with probability 1/27 = 3.7% > 2.5%,
so the interval is [0, 1]; likewise (1, 0.5, 1) gives [0.5, 1]. For the repair difference see
the comment at its line. Each bound also holds for the seeded draw (2000 resamples, seed 0):
the rarest extreme is expected in ~74 resamples, 50 are enough.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import duckdb
import pytest

from arrivalbench import report
from arrivalbench.core.task import HAZARDS
from arrivalbench.core.values import canonical_json, digest
from arrivalbench.study.schema import DDL, SCHEMA_VERSION

GOLDEN = Path(__file__).parent / "golden" / "report"
UPDATE = os.environ.get("ARRIVALBENCH_UPDATE_GOLDEN") == "1"
HARNESS, OLD_HARNESS = "0.10.0", "0.9.0"  # as text 0.9.0 sorts last; a later run stored 0.10.0
RUNS = {OLD_HARNESS: 1, HARNESS: 2}  # the run that stored each harness version's verdicts
LETTER = {"P": "PASS", "F": "FAIL", "E": "ERROR"}


# -- writing a results file by hand --------------------------------------------------------------


def verdict_row(task: str, artifact: str, schedule: str, seed: int, letter: str,
                harness: str = HARNESS) -> tuple[Any, ...]:
    record = canonical_json({"artifact": artifact, "harness_version": harness, "schedule":
                             schedule, "seed": seed, "task": task, "verdict": LETTER[letter]})
    return (f"sha256:{task}", schedule, seed, artifact, "2.0.1", harness, task, LETTER[letter],
            record, digest(record))


def cell_verdicts(task: str, artifact: str, plan: dict[str, str]) -> list[tuple[Any, ...]]:
    """plan: schedule -> one letter per seed, e.g. {"snapshot": "P", "duplicates": "PF"}."""
    return [verdict_row(task, artifact, schedule, seed, letter)
            for schedule, letters in plan.items() for seed, letter in enumerate(letters)]


def write_results(path: Path, cells: Iterable[tuple[Any, ...]],
                  verdicts: Iterable[tuple[Any, ...]],
                  artifacts: Iterable[tuple[str, list[str] | None]] = (),
                  turns: Iterable[tuple[Any, ...]] = ()) -> Path:
    """A results file from the store's DDL and plain INSERTs.
    cells: (arm, task, replicate, artifact | None, reason | None)."""
    con = duckdb.connect(str(path))
    con.execute(DDL)
    con.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)",
                [str(SCHEMA_VERSION)])
    for artifact, idioms in artifacts:
        con.execute("INSERT INTO artifacts (artifact, sql, idioms) VALUES (?, ?, ?)",
                    [artifact, f"-- script {artifact}", idioms])
    for arm, task, replicate, artifact, reason in cells:
        con.execute("INSERT INTO cells (arm, task, task_digest, replicate, artifact, reason, "
                    "provenance) VALUES (?, ?, ?, ?, ?, ?, '{}')",
                    [arm, task, f"sha256:{task}", replicate, artifact, reason])
    for harness, run in RUNS.items():
        con.execute("INSERT INTO runs (run_id, started_at, harness_version, engine_version, "
                    "python_version, executor, workers, seeds, arms) VALUES "
                    "(?, '2025-01-01', ?, '2.0.1', '3.12', 'local', 1, 2, [])", [run, harness])
    for row in verdicts:
        con.execute("INSERT INTO verdicts (task_digest, schedule, seed, artifact, engine_version,"
                    " harness_version, task, verdict, record, record_digest, run_id) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [*row, RUNS.get(row[5])])
    for arm, task, replicate, turn, verdict in turns:
        con.execute("INSERT INTO turns (arm, task, replicate, turn, sql, snapshot_verdict, "
                    "feedback) VALUES (?, ?, ?, ?, ?, ?, NULL)",
                    [arm, task, replicate, turn, None if verdict is None else "select 1",
                     verdict])
    con.close()
    return path


CONTROLS_OK = {"in_order": "PP", "trickle": "PP"}
PLANS: dict[str, tuple[str, dict[str, str]]] = {
    "a1": ("t1", {"snapshot": "P", **CONTROLS_OK, "late_arrival": "PP", "duplicates": "PF"}),
    "a2": ("t2", {"snapshot": "P", "in_order": "PP", "trickle": "PF", "out_of_order": "PP",
                  "crash_retry": "EP", "schema_evolution": "PP"}),
    "a3": ("t3", {"snapshot": "F", **CONTROLS_OK, "duplicates": "FF", "backfill": "PP"}),
    "b1": ("t1", {"snapshot": "P", **CONTROLS_OK, "late_arrival": "PP", "duplicates": "PP"}),
    "b2": ("t1", {"snapshot": "P", **CONTROLS_OK, "late_arrival": "PP", "duplicates": "FP"}),
    "b3": ("t2", {"snapshot": "P", **CONTROLS_OK, "out_of_order": "FF", "crash_retry": "PP",
                  "schema_evolution": "EE"}),
    "b5": ("t3", {"snapshot": "F", **CONTROLS_OK, "duplicates": "PP", "backfill": "FF"}),
    "n1": ("t1", {"snapshot": "P", "late_arrival": "FP", "duplicates": "PP"}),
    "n2": ("t1", {"snapshot": "P", "late_arrival": "PP", "duplicates": "PE"}),
}
CELLS = [
    ("alpha", "t1", 0, "a1", None), ("alpha", "t2", 0, "a2", None),
    ("alpha", "t3", 0, "a3", None),
    ("m:unhinted", "t1", 0, "b1", None), ("m:unhinted", "t1", 1, "b2", None),
    ("m:unhinted", "t2", 0, None, "no SQL in the reply"), ("m:unhinted", "t2", 1, "b3", None),
    ("m:unhinted", "t3", 0, "b4", None), ("m:unhinted", "t3", 1, "b5", None),
    ("negatives", "t1", 0, "n1", None), ("negatives", "t1", 1, "n2", None),
]
IDIOMS: list[tuple[str, list[str] | None]] = [
    ("a1", None), ("a2", None), ("a3", None), ("b1", ["batch_dedup", "history_table"]),
    ("b2", ["history_table"]), ("b3", []), ("b4", None), ("b5", ["batch_dedup"]),
    ("n1", None), ("n2", None)]
TURNS = [
    ("m:unhinted", "t1", 0, 1, "PASS"),
    ("m:unhinted", "t1", 1, 1, "FAIL"), ("m:unhinted", "t1", 1, 2, "PASS"),
    ("m:unhinted", "t2", 0, 1, None),
    ("m:unhinted", "t2", 1, 1, "PASS"),
    ("m:unhinted", "t3", 0, 1, "FAIL"), ("m:unhinted", "t3", 0, 2, "PASS"),
    ("m:unhinted", "t3", 1, 1, "FAIL"), ("m:unhinted", "t3", 1, 2, "FAIL"),
    ("m:unhinted", "t3", 1, 3, "FAIL"),
]
USED = [row for art, (task, plan) in PLANS.items() for row in cell_verdicts(task, art, plan)]
IGNORED = [verdict_row("t1", "b1", "duplicates", 1, "F", harness=OLD_HARNESS),
           verdict_row("t1", "b1", "chaos", 0, "F")]


def build_golden(path: Path) -> Path:
    return write_results(path, CELLS, USED + IGNORED, IDIOMS, TURNS)


# -- the hand-derived metrics --------------------------------------------------------------------

NONE = (None, None, None, 0)


def row(task: str, replicate: int, snapshot: str | None, in_order: str | None,
        trickle: str | None, cls: str, **hazards: str) -> dict[str, Any]:
    """A cell of a small arm's table: verdict letters per seed, None where there is none."""
    return {"task": task, "replicate": replicate, "snapshot": snapshot, "in_order": in_order,
            "trickle": trickle, "hazards": {h: hazards.get(h) for h in HAZARDS}, "class": cls}
T = 2 / 3  # rounded to 6 decimals below


def m(value: float | None, low: float | None = None, high: float | None = None,
      n: int = 1) -> tuple[float | None, float | None, float | None, int]:
    """A metric; low and high default to the value (a degenerate interval)."""
    return (value, value if low is None else low, value if high is None else high, n)


EXPECTED: dict[str, dict[str, Any]] = {
    "alpha": {
        "gradeable": m(1.0, n=3),                    # every cell has an artifact
        "snapshot_pass": m(T, 0.0, 1.0, n=3),        # t1 1, t2 1, t3 0 -> 2/3
        "gap": m(1.0, n=2),                          # eligible a1 (dup F), a2 (crash E): 1, 1
        "gap_controls": m(1.0, n=1),                 # a2 fails trickle seed 1 -> only a1
        "silent": m(0.5, 0.0, 1.0, n=2),             # t1 1 (dup F), t2 0 -> 0.5
        "crash": m(0.5, 0.0, 1.0, n=2),              # t1 0, t2 1 (crash_retry E) -> 0.5
        "all_in": m(1.0, n=2),                       # = gap
        "ordering": m(1.0, n=2),                     # late t1 1, out_of_order t2 1
        "idempotency": m(0.0, n=2),                  # duplicates t1 0, crash_retry t2 0
        "ordering_minus_idempotency": m(1.0, n=2),
        "schema_evolution": m(1.0),                  # t2 PP
        "hazards": {"late_arrival": m(1.0), "out_of_order": m(1.0), "duplicates": m(0.0),
                    "crash_retry": m(0.0),
                    "backfill": NONE,                # only t3 has it, and a3 fails the snapshot
                    "schema_evolution": m(1.0)},
        "composition": {"late_arrival": (1.0, 0.0, 0.0, 1), "out_of_order": (1.0, 0.0, 0.0, 1),
                        "duplicates": (0.5, 0.5, 0.0, 1), "crash_retry": (0.5, 0.0, 0.5, 1),
                        "backfill": (None, None, None, 0), "schema_evolution": (1.0, 0, 0, 1)},
        # hazard means late 1 (t1), out_of_order 1 (t2), duplicates 0 (t1), crash_retry 0 (t2)
        "weakest_link": {"ordering": m(1.0, n=2), "idempotency": m(0.0, n=2),
                         "ordering_minus_idempotency": m(1.0, n=2)},
        # per task: t1 late 1 - dup 0 = 1, t2 out_of_order 1 - crash_retry 0 = 1, t3 neither
        "paired": {"median": m(1.0, n=2), "mean": m(1.0, n=2), "ordering_better": 2,
                   "idempotency_better": 0, "ties": 0},
        "cells": {"total": 3, "gradeable": 3, "no_artifact": 0, "ungraded": 0,
                  "snapshot_pass": 2, "eligible": 2, "first_turn": 0, "repaired": 0,
                  "with_batch_dedup": 0, "without_batch_dedup": 0, "tasks": 3,
                  "no_artifact_reasons": {}},
        "per_task": [  # three tasks < 10: listed cell by cell
            row("t1", 0, "P", "PP", "PP", "silent", late_arrival="PP", duplicates="PF"),
            row("t2", 0, "P", "PP", "PF", "crash", out_of_order="PP", crash_retry="EP",
                schema_evolution="PP"),
            row("t3", 0, "F", "PP", "PP", "snapshot FAIL", duplicates="FF", backfill="PP"),
        ],
    },
    "m:unhinted": {
        "gradeable": m(5 / 6, 0.5, 1.0, n=3),        # t1 2/2, t2 1/2, t3 2/2 -> 2.5/3
        "snapshot_pass": m(T, 0.0, 1.0, n=3),        # t1 1 (b1, b2), t2 1 (b3), t3 0 (b5;
                                                     # b4 ungraded, left out)
        "gap": m(0.75, 0.5, 1.0, n=2),               # t1 (b1 0 + b2 1)/2, t2 b3 1
        "gap_controls": m(0.75, 0.5, 1.0, n=2),      # every eligible cell passes the controls
        "silent": m(0.75, 0.5, 1.0, n=2),            # t1 0.5, t2 1 (out_of_order F)
        "crash": m(0.5, 0.0, 1.0, n=2),              # t1 0, t2 1 (schema_evolution E)
        "all_in": m(0.75, 0.5, 1.0, n=2),
        "ordering": m(0.5, 0.0, 1.0, n=2),           # late t1 1, out_of_order t2 0
        "idempotency": m(0.75, 0.5, 1.0, n=2),       # duplicates t1 (1 + 0)/2, crash_retry t2 1
        # resamples: both tasks -0.25, t1 only 1 - 0.5, t2 only 0 - 1
        "ordering_minus_idempotency": m(-0.25, -1.0, 0.5, n=2),
        "schema_evolution": m(0.0),                  # b3 EE
        "hazards": {"late_arrival": m(1.0), "out_of_order": m(0.0),
                    "duplicates": m(0.5),            # b1 passes (the old FAIL is ignored), b2 not
                    "crash_retry": m(1.0), "backfill": NONE,  # b5 fails the snapshot
                    "schema_evolution": m(0.0)},
        "composition": {"late_arrival": (1.0, 0.0, 0.0, 1), "out_of_order": (0.0, 1.0, 0.0, 1),
                        "duplicates": (0.75, 0.25, 0.0, 1),  # b1 PP, b2 FP
                        "crash_retry": (1.0, 0.0, 0.0, 1), "backfill": (None, None, None, 0),
                        "schema_evolution": (0.0, 0.0, 1.0, 1)},
        "repair": {
            "first_turn": m(0.5, 0.0, 1.0, n=2),     # b1 (t1) 0, b3 (t2) 1
            "repaired": m(1.0),                      # b2 (t1) 1; b4 is ungraded
            # defined when t1 is drawn: t1 only 1 - 0 (7/27); t1 and t2 with counts
            # (1,1) 0.5 (6/27), (2,1) 2/3 (3/27), (1,2) 1/3 (3/27) -> [1/3, 1]
            "repaired_minus_first_turn": m(0.5, 1 / 3, 1.0, n=2),
        },
        "batch_dedup": {"with": {"silent": m(0.0), "crash": m(0.0)},     # b1 (b5 snapshot F)
                        "without": {"silent": m(1.0), "crash": m(0.0)}},  # b2
        # hazard means late 1 (t1), out_of_order 0 (t2), duplicates 0.5 (t1), crash_retry 1
        # (t2). Resamples: both tasks min(1, 0) = 0 and min(0.5, 1) = 0.5; t1 only 1 and 0.5;
        # t2 only 0 and 1 (each 7/27)
        "weakest_link": {"ordering": m(0.0, 0.0, 1.0, n=2),
                         "idempotency": m(0.5, 0.5, 1.0, n=2),
                         "ordering_minus_idempotency": m(-0.5, -1.0, 0.5, n=2)},
        # per task: t1 late 1 - dup 0.5 = 0.5, t2 out_of_order 0 - crash_retry 1 = -1; the
        # median of two is their mean; t1 only gives 0.5, t2 only -1
        "paired": {"median": m(-0.25, -1.0, 0.5, n=2), "mean": m(-0.25, -1.0, 0.5, n=2),
                   "ordering_better": 1, "idempotency_better": 1, "ties": 0},
        "cells": {"total": 6, "gradeable": 5, "no_artifact": 1, "ungraded": 1,
                  "snapshot_pass": 3, "eligible": 3, "first_turn": 2, "repaired": 1,
                  "with_batch_dedup": 1, "without_batch_dedup": 1, "tasks": 3,
                  "no_artifact_reasons": {"no SQL in the reply": 1}},
        "per_task": [
            row("t1", 0, "P", "PP", "PP", "pass", late_arrival="PP", duplicates="PP"),
            row("t1", 1, "P", "PP", "PP", "silent", late_arrival="PP", duplicates="FP"),
            row("t2", 0, None, None, None, "no script"),
            row("t2", 1, "P", "PP", "PP", "silent+crash", out_of_order="FF", crash_retry="PP",
                schema_evolution="EE"),
            row("t3", 0, None, None, None, "ungraded"),
            row("t3", 1, "F", "PP", "PP", "snapshot FAIL", duplicates="PP", backfill="FF"),
        ],
        # replicate 0: b1, (no artifact), b4 (ungraded); replicate 1: b2, b3, b5
        "spread": {
            "gradeable": ([T, 1.0], 0.235702),       # r0: t1 1, t2 0, t3 1
            "snapshot_pass": ([1.0, T], 0.235702),   # r0: only b1; r1: b2 P, b3 P, b5 F
            "gap": ([0.0, 1.0], 0.707107),           # r0: b1 0; r1: b2 1, b3 1
            "gap_controls": ([0.0, 1.0], 0.707107),
            "silent": ([0.0, 1.0], 0.707107),
            "crash": ([0.0, 0.5], 0.353553),         # r1: t1 0, t2 1
            "ordering": ([1.0, 0.5], 0.353553),      # r0: late 1; r1: late 1, out_of_order 0
            "idempotency": ([1.0, 0.5], 0.353553),   # r0: dup 1; r1: dup 0, crash_retry 1
            "ordering_minus_idempotency": ([0.0, 0.0], 0.0),
            "schema_evolution": ([None, 0.0], None),  # r0 has no cell with it
            "hazards": {
                "late_arrival": ([1.0, 1.0], 0.0),   # b1 | b2
                "out_of_order": ([None, 0.0], None),  # - | b3
                "duplicates": ([1.0, 0.0], 0.707107),  # b1 PP | b2 FP
                "crash_retry": ([None, 1.0], None),  # - | b3
                "backfill": ([None, None], None),    # b5 fails the snapshot
                "schema_evolution": ([None, 0.0], None),
            },
        },
    },
    "negatives": {
        "gradeable": m(1.0), "snapshot_pass": m(1.0),
        "gap": m(1.0),                               # n1 F on late, n2 E on duplicates
        "gap_controls": NONE,                        # no control verdicts: never "passes both"
        "silent": m(0.5), "crash": m(0.5), "all_in": m(1.0),
        "ordering": m(0.5),                          # late: n1 0, n2 1
        "idempotency": m(0.5),                       # duplicates: n1 1, n2 0
        "ordering_minus_idempotency": m(0.0),
        "schema_evolution": NONE,
        "weakest_link": {"ordering": m(0.5), "idempotency": m(0.5),  # one hazard per group
                         "ordering_minus_idempotency": m(0.0)},
        "paired": {"median": m(0.0), "mean": m(0.0), "ordering_better": 0,
                   "idempotency_better": 0, "ties": 1},  # t1: late 0.5 - dup 0.5
        "hazards": {"late_arrival": m(0.5), "out_of_order": NONE, "duplicates": m(0.5),
                    "crash_retry": NONE, "backfill": NONE, "schema_evolution": NONE},
        "composition": {"late_arrival": (0.75, 0.25, 0.0, 1), "out_of_order": (None,) * 3 + (0,),
                        "duplicates": (0.75, 0.0, 0.25, 1), "crash_retry": (None,) * 3 + (0,),
                        "backfill": (None,) * 3 + (0,), "schema_evolution": (None,) * 3 + (0,)},
        "cells": {"total": 2, "gradeable": 2, "no_artifact": 0, "ungraded": 0,
                  "snapshot_pass": 2, "eligible": 2, "first_turn": 0, "repaired": 0,
                  "with_batch_dedup": 0, "without_batch_dedup": 0, "tasks": 1,
                  "no_artifact_reasons": {}},
        "per_task": [
            row("t1", 0, "P", None, None, "silent", late_arrival="FP", duplicates="PP"),
            row("t1", 1, "P", None, None, "crash", late_arrival="PP", duplicates="PE"),
        ],
        # no "spread": the replicates of `negatives` are distinct controls, not replications
    },
}


def r6(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def as_metric(expected: tuple[Any, ...]) -> dict[str, Any]:
    value, low, high, n = expected
    return {"value": r6(value), "low": r6(low), "high": r6(high), "n": n}


def spread_entry(values: list[float | None], sd: float | None) -> dict[str, Any]:
    defined = [v for v in values if v is not None]
    return {"replicates": [0, 1], "values": [r6(v) for v in values],
            "min": r6(min(defined)) if defined else None,
            "max": r6(max(defined)) if defined else None, "sd": sd}


def expected_arm(arm: str) -> dict[str, Any]:
    """The hand-derived metrics of an arm in the metrics.json layout."""
    e = EXPECTED[arm]
    out: dict[str, Any] = {}
    for key, value in e.items():
        if key == "hazards":
            out[key] = {h: as_metric(v) for h, v in value.items()}
        elif key == "composition":
            out[key] = {h: {verdict: as_metric((share, share, share, v[3]))
                            for verdict, share in zip(("PASS", "FAIL", "ERROR"), v[:3],
                                                      strict=True)}
                        for h, v in value.items()}
        elif key == "repair":
            out[key] = {k: as_metric(v) for k, v in value.items()}
        elif key == "batch_dedup":
            out[key] = {side: {k: as_metric(v) for k, v in kinds.items()}
                        for side, kinds in value.items()}
        elif key == "weakest_link":
            out[key] = {k: as_metric(v) for k, v in value.items()}
        elif key == "paired":
            out[key] = {k: as_metric(v) if isinstance(v, tuple) else v
                        for k, v in value.items()}
        elif key in ("cells", "per_task"):
            out[key] = value
        elif key == "spread":
            out[key] = {name: spread_entry(*v) for name, v in value.items() if name != "hazards"}
            out[key]["hazards"] = {h: spread_entry(*v) for h, v in value["hazards"].items()}
        else:
            out[key] = as_metric(value)
    return out


# -- tests ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, report.Written]:
    root = tmp_path_factory.mktemp("golden")
    results = build_golden(root / "results.duckdb")
    return results, report.write(results, root / "out")


@pytest.mark.parametrize("arm", sorted(EXPECTED))
def test_every_metric_matches_the_hand_derivation(golden: tuple[Path, report.Written],
                                                  arm: str) -> None:
    doc = golden[1].doc
    assert doc["arms"][arm] == expected_arm(arm)  # type: ignore[index]


def test_document_layout_seed_and_digest(golden: tuple[Path, report.Written]) -> None:
    doc = golden[1].doc
    assert list(doc) == ["arms", "no_scripts", "seed", "results_digest"]
    assert doc["no_scripts"] == {}
    assert list(doc["arms"]) == ["alpha", "m:unhinted", "negatives"]  # type: ignore[call-overload]
    assert doc["seed"] == 0
    # the digest covers exactly the verdicts used: not the older version, not `chaos`
    assert doc["results_digest"] == digest("\n".join(sorted(r[8] for r in USED)))
    # the file on disk is that document
    written = json.loads((golden[1].out / "metrics.json").read_text(encoding="utf-8"))
    assert written == doc


def test_report_md_snapshot(golden: tuple[Path, report.Written]) -> None:
    text = (golden[1].out / "report.md").read_text(encoding="utf-8")
    target = GOLDEN / "report.md"
    if UPDATE:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    assert target.exists(), "no golden report.md; run with ARRIVALBENCH_UPDATE_GOLDEN=1"
    assert text == target.read_text(encoding="utf-8"), (
        "report.md differs from tests/golden/report/report.md; if the change is intended, "
        "regenerate with ARRIVALBENCH_UPDATE_GOLDEN=1 and review the diff")


def test_metrics_json_snapshot(golden: tuple[Path, report.Written]) -> None:
    text = (golden[1].out / "metrics.json").read_text(encoding="utf-8")
    target = GOLDEN / "metrics.json"
    if UPDATE:
        target.write_text(text, encoding="utf-8")
    assert text == target.read_text(encoding="utf-8")


def test_csv_per_table(golden: tuple[Path, report.Written]) -> None:
    out = golden[1].out
    names = {p.name for p in out.glob("*.csv")}
    assert names == {"summary.csv", "hazards.csv", "groups.csv", "weakest_link.csv",
                     "paired.csv", "composition.csv", "repair.csv", "batch_dedup.csv",
                     "spread.csv", "cells.csv", "no_artifact.csv", "per_task.csv"}
    summary = (out / "summary.csv").read_text(encoding="utf-8").splitlines()
    assert summary[0].startswith("arm,tasks,cells,snapshot_pass,snapshot_pass_low,"
                                 "snapshot_pass_high,snapshot_pass_n,gap,")
    assert summary[2].startswith("m:unhinted,3,6,0.666667,0.0,1.0,3,0.75,0.5,1.0,2,")
    repair = (out / "repair.csv").read_text(encoding="utf-8").splitlines()
    assert len(repair) == 2 and repair[1].startswith("m:unhinted,2,0.5,0.0,1.0,2,1,1.0,")
    reasons = (out / "no_artifact.csv").read_text(encoding="utf-8").splitlines()
    assert reasons == ["arm,reason,cells", "m:unhinted,no SQL in the reply,1"]


def test_figures_written_and_linked(golden: tuple[Path, report.Written]) -> None:
    out = golden[1].out
    svgs = sorted(p.name for p in (out / "figures").glob("*.svg"))
    # the dedup figure exists because m:unhinted carries idiom tags
    assert svgs == ["batch_dedup.svg", "composition.svg", "ordering_vs_idempotency.svg",
                    "snapshot_vs_silent.svg"]
    md = (out / "report.md").read_text(encoding="utf-8")
    for name in svgs:
        assert f"](figures/{name})" in md
    snapshot = (out / "figures" / "snapshot_vs_silent.svg").read_text(encoding="utf-8")
    for arm in ("alpha", "m:unhinted", "negatives"):  # one labelled point per arm, marked:
        assert f">{arm}\u2020<" in snapshot  # its intervals rest on fewer than 10 tasks
    assert "<dc:date>" not in snapshot  # no timestamp in the metadata


def test_arm_selection_changes_only_what_it_should(golden: tuple[Path, report.Written],
                                                   tmp_path: Path) -> None:
    written = report.write(golden[0], tmp_path, arms=["alpha"])
    assert list(written.doc["arms"]) == ["alpha"]  # type: ignore[call-overload]
    assert written.doc["arms"]["alpha"] == expected_arm("alpha")  # type: ignore[index]
    alpha = [r[8] for r in USED if r[3].startswith("a")]
    assert written.doc["results_digest"] == digest("\n".join(sorted(alpha)))
    # no idiom tags among alpha's artifacts: no dedup figure, and none left from an earlier run
    (tmp_path / "figures" / "batch_dedup.svg").write_text("stale", encoding="utf-8")
    report.write(golden[0], tmp_path, arms=["alpha"])
    assert not (tmp_path / "figures" / "batch_dedup.svg").exists()


def test_same_results_same_bytes_across_processes(golden: tuple[Path, report.Written],
                                                  tmp_path: Path) -> None:
    """Two CLI runs in fresh interpreters with different hash seeds give identical files."""
    outs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"run{hash_seed}"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run([sys.executable, "-c", "from arrivalbench.cli import main; main()",
                               "report", "--results", str(golden[0]), "--out", str(out)],
                              capture_output=True, text=True, env=env, check=False)
        assert done.returncode == 0, done.stderr
        outs.append(out)
    first = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*") if p.is_file())
    second = sorted(p.relative_to(outs[1]) for p in outs[1].rglob("*") if p.is_file())
    assert first == second and len(first) == 19  # 12 CSV, 4 SVG, json, md, html
    for rel in first:
        assert (outs[0] / rel).read_bytes() == (outs[1] / rel).read_bytes(), rel
    # and the in-process report of the fixture is byte-identical too
    for rel in ("metrics.json", "report.md", "report.html"):
        assert (outs[0] / rel).read_bytes() == (golden[1].out / rel).read_bytes(), rel


# -- --compare alpha m:unhinted, derived by hand -------------------------------------------------
#
# Common tasks t1, t2, t3. Each input is kept on the tasks where both arms define it, so a
# simple rate's shift is the task mean of per-task differences; a resample of only one kind of
# task has probability >= 1/27 > 2.5%, so the interval runs from the smallest to the largest
# value a one-task resample gives (t1 only and t2 only: 7/27 each; t2 three times: 1/27).

SHIFTS: dict[str, tuple[float, float, tuple[Any, ...]]] = {
    # path: (alpha, m:unhinted, shift)
    "gradeable": (1.0, 5 / 6, m(-1 / 6, -0.5, 0.0, n=3)),   # diffs t1 0, t2 -0.5, t3 0
    "snapshot_pass": (T, T, m(0.0, n=3)),                    # both 1, 1, 0
    "gap": (1.0, 0.75, m(-0.25, -0.5, 0.0, n=2)),             # diffs t1 -0.5, t2 0
    "silent": (0.5, 0.75, m(0.25, -0.5, 1.0, n=2)),           # t1 1 -> 0.5, t2 0 -> 1
    "crash": (0.5, 0.5, m(0.0, n=2)),                         # t1 0 and 0, t2 1 and 1
    # late t1 1 | 1, out_of_order t2 1 | 0: t1 only 1 - 1, t2 only 0 - 1
    "ordering": (1.0, 0.5, m(-0.5, -1.0, 0.0, n=2)),
    # duplicates t1 0 | 0.5, crash_retry t2 0 | 1: t1 only 0.5, t2 only 1
    "idempotency": (0.0, 0.75, m(0.75, 0.5, 1.0, n=2)),
    "gap_controls": (1.0, 0.5, m(-0.5, n=1)),                # a2 fails trickle: t1 only
    "all_in": (1.0, 0.75, m(-0.25, -0.5, 0.0, n=2)),          # = gap
    "weakest_link.ordering": (1.0, 0.0, m(-1.0, -1.0, 0.0, n=2)),  # min(1, 1) | min(1, 0)
    # min(0, 0) | min(0.5, 1): t1 only 0 | 0.5, t2 only 0 | 1
    "weakest_link.idempotency": (0.0, 0.5, m(0.5, 0.5, 1.0, n=2)),
    # 1 - 0 | 0 - 0.5: t1 only 1 | 1 - 0.5, t2 only 1 | 0 - 1
    "weakest_link.ordering_minus_idempotency": (1.0, -0.5, m(-1.5, -2.0, -0.5, n=2)),
    # per task t1 1 | 0.5, t2 1 | -1: any resample's shift lies between -0.5 (t1s) and -2
    "paired.median": (1.0, -0.25, m(-1.25, -2.0, -0.5, n=2)),
    "paired.mean": (1.0, -0.25, m(-1.25, -2.0, -0.5, n=2)),
    "hazards.out_of_order": (1.0, 0.0, m(-1.0, n=1)),
    "hazards.duplicates": (0.0, 0.5, m(0.5, n=1)),
    "composition.duplicates.FAIL": (0.5, 0.25, m(-0.25, n=1)),  # a1 PF | b1 PP, b2 FP
}


def test_compare_derived_by_hand(tmp_path: Path) -> None:
    results = build_golden(tmp_path / "results.duckdb")
    written = report.write(results, tmp_path / "out", compare=("alpha", "m:unhinted"))
    doc: Any = written.doc
    assert list(doc) == ["arms", "no_scripts", "comparison", "seed", "results_digest"]
    c = doc["comparison"]
    assert (c["a"], c["b"], c["tasks"]) == ("alpha", "m:unhinted", 3)
    for path, (a, b, shift) in SHIFTS.items():
        node = c["metrics"]
        for key in path.split("."):
            node = node[key]
        assert node == {"a": r6(a), "b": r6(b), "shift": as_metric(shift)}, path
    # alpha has no repair turns and no idiom tags: those metrics are not compared
    assert "repair" not in c["metrics"] and "batch_dedup" not in c["metrics"]
    # cells matched on (task, replicate 0); replicate 1 exists only in m:unhinted
    assert c["cells"] == {"compared": 3, "only_a": 0, "only_b": 3, "changed": [
        {"task": "t1", "replicate": 0, "a": "silent", "b": "pass"},        # a1 dup F | b1
        {"task": "t2", "replicate": 0, "a": "crash", "b": "no script"},    # a2 | no reply
        {"task": "t3", "replicate": 0, "a": "snapshot FAIL", "b": "ungraded"}]}  # a3 | b4
    # the arms' own metrics do not change with a comparison
    assert doc["arms"]["alpha"] == expected_arm("alpha")
    names = {p.name for p in written.out.glob("*.csv")}
    assert {"comparison.csv", "changed_cells.csv"} <= names
    md = (written.out / "report.md").read_text(encoding="utf-8")
    assert "## Comparison: m:unhinted against alpha" in md
    assert "| t2 | 0 | crash | no script |" in md
