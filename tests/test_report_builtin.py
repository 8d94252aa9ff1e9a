"""The report of real verdicts: gold and the negative controls of built-in tasks, graded by the
harness into a results file written with the store's DDL (seed 0 only, to stay fast)."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import duckdb
import pytest

from arrivalbench import report
from arrivalbench.core.grading import plan
from arrivalbench.core.task import HAZARDS, load_spec
from arrivalbench.core.values import digest
from arrivalbench.study.schema import DDL, SCHEMA_VERSION
from conftest import grade_each

TASKS = ("customer_current_address", "store_daily_revenue", "web_page_views")


def grade_script(task: str, sql: str) -> list[list[object]]:
    """Verdict rows of one script on one task (snapshot, controls and hazards; seed 0)."""
    spec = load_spec(task)
    return [[v.task_digest, v.schedule, v.seed, v.artifact, v.engine_version, v.harness_version,
             v.task, v.status, v.json(), digest(v.json())]
            for v, _ in grade_each(spec, sql, plan(spec, seeds=1))]


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> report.Written:
    root = tmp_path_factory.mktemp("builtin")
    con = duckdb.connect(str(root / "results.duckdb"))
    con.execute(DDL)
    con.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)",
                [str(SCHEMA_VERSION)])
    jobs = []
    for task in TASKS:
        spec = load_spec(task)
        scripts = [("gold", 0, spec.gold_sql)]
        scripts += [("negatives", i, n.sql) for i, n in enumerate(spec.negatives)]
        for arm, replicate, sql in scripts:
            con.execute("INSERT INTO artifacts (artifact, sql) VALUES (?, ?) "
                        "ON CONFLICT DO NOTHING", [digest(sql), sql])
            con.execute("INSERT INTO cells (arm, task, task_digest, replicate, artifact, "
                        "provenance) VALUES (?, ?, ?, ?, ?, '{}')",
                        [arm, task, spec.digest, replicate, digest(sql)])
            jobs.append((task, sql))
    # two processes (the CI machine has two cores); spawned, not forked, from a process that
    # holds a DuckDB connection
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        for rows in pool.map(grade_script, *zip(*jobs, strict=True)):
            con.executemany("INSERT INTO verdicts (task_digest, schedule, seed, artifact, "
                            "engine_version, harness_version, task, verdict, record, "
                            "record_digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    con.close()
    return report.write(root / "results.duckdb", root / "out")


def test_gold_passes_everything(graded: report.Written) -> None:
    gold = graded.doc["arms"]["gold"]  # type: ignore[index]
    assert gold["snapshot_pass"]["value"] == 1.0 and gold["snapshot_pass"]["n"] == len(TASKS)
    for key in ("gap", "all_in", "silent", "crash", "gap_controls"):
        assert gold[key] == {"value": 0.0, "low": 0.0, "high": 0.0, "n": len(TASKS)}, key
    for hazard in HAZARDS:
        assert gold["hazards"][hazard]["value"] in (1.0, None), hazard


def test_every_negative_fails_after_passing_the_snapshot(graded: report.Written) -> None:
    negatives = graded.doc["arms"]["negatives"]  # type: ignore[index]
    assert negatives["snapshot_pass"]["value"] == 1.0
    assert negatives["gap"] == {"value": 1.0, "low": 1.0, "high": 1.0, "n": len(TASKS)}
    assert negatives["gap_controls"]["value"] == 1.0  # they pass both controls, too
    expected = sum(len(load_spec(t).negatives) for t in TASKS)
    assert negatives["cells"]["eligible"] == expected


def test_each_negative_fails_what_it_declares(graded: report.Written) -> None:
    """Per hazard, the negatives' pass rate is the share of a task's negatives that do not
    declare it (the gate: each fails what it declares and passes the rest)."""
    hazards = graded.doc["arms"]["negatives"]["hazards"]  # type: ignore[index]
    for hazard in HAZARDS:
        per_task = []
        for task in TASKS:
            spec = load_spec(task)
            if hazard in spec.hazards:
                per_task.append(sum(hazard not in n.fails for n in spec.negatives)
                                / len(spec.negatives))
        want = round(sum(per_task) / len(per_task), 6) if per_task else None
        assert hazards[hazard]["value"] == want, hazard
