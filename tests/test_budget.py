"""The read budget: task.yaml's `budget`, `incremental.sql`, and the gate's check of it."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from arrivalbench.core.artifacts import script_ref
from arrivalbench.core.engine import duckdb as duckdb_engine
from arrivalbench.core.engine.cost import Cost
from arrivalbench.core.task import BUILTIN_DIR, DEFAULT_BUDGETS, Budget, TaskSpec, load_spec
from arrivalbench.corpus import gate
from arrivalbench.corpus.budget import over_budget, within
from arrivalbench.corpus.labels import is_builtin
from arrivalbench.errors import TaskError
from arrivalbench.report.load import CellRow, VerdictRow
from arrivalbench.report.metrics import CellFacts, arm_metrics, cell_facts, incremental
from conftest import TINY_NO_DEDUP, write_task

# Each run reads only its batch's keys from the stored history and updates the shops it
# touches: no rebuild from history.
TINY_INCREMENTAL = """\
CREATE TABLE IF NOT EXISTS seen (order_id BIGINT PRIMARY KEY, shop VARCHAR,
                                 amount DECIMAL(10,2), placed_at TIMESTAMP);
CREATE TABLE IF NOT EXISTS shop_revenue (shop VARCHAR PRIMARY KEY, revenue DECIMAL(12,2),
                                         orders BIGINT);
BEGIN;
CREATE TEMP TABLE fresh AS
SELECT b.* FROM (SELECT DISTINCT ON (order_id) * FROM incoming.orders ORDER BY order_id) b
ANTI JOIN seen s ON s.order_id = b.order_id;
INSERT INTO seen SELECT * FROM fresh;
INSERT INTO shop_revenue
SELECT shop, CAST(COALESCE(SUM(amount), 0) AS DECIMAL(12,2)), COUNT(*) FROM fresh GROUP BY shop
ON CONFLICT (shop) DO UPDATE SET revenue = shop_revenue.revenue + excluded.revenue,
                                 orders = shop_revenue.orders + excluded.orders;
COMMIT;
"""


def with_budget(tiny_yaml: dict[str, Any], budget: object) -> dict[str, Any]:
    tiny_yaml["budget"] = budget
    return tiny_yaml


def test_the_budget_defaults_per_mode(tiny_dir: Path) -> None:
    spec = load_spec(tiny_dir)
    assert spec.budget == DEFAULT_BUDGETS["aggregate"] and spec.incremental_sql is None
    assert set(DEFAULT_BUDGETS) == {"append", "upsert", "aggregate"}
    assert all(b.read_amplification > 0 for b in DEFAULT_BUDGETS.values())


def test_a_declared_budget_and_incremental_sql_are_loaded(tmp_path: Path,
                                                          tiny_yaml: dict[str, Any]) -> None:
    folder = write_task(tmp_path, spec=with_budget(tiny_yaml, {"read_amplification": 2.5}))
    (folder / "incremental.sql").write_text(TINY_INCREMENTAL, encoding="utf-8")
    spec = load_spec(folder)
    assert spec.budget == Budget(2.5) and spec.incremental_sql == TINY_INCREMENTAL


@pytest.mark.parametrize("budget, message", [
    ({"read_amplification": 0}, r"field budget\.read_amplification: 0 must be a positive"),
    ({"read_amplification": -3}, r"field budget\.read_amplification: -3 must be a positive"),
    ({"read_amplification": ".inf"}, r"field budget\.read_amplification: must be a int or"),
    ({"read_amplification": "4"}, r"field budget\.read_amplification: must be a int or float"),
    ({"read_amplification": True}, r"field budget\.read_amplification: True must be a positive"),
    ({}, r"field budget\.read_amplification: is required"),
    ({"read_amplification": 4, "rows": 9}, r"field budget\.rows: unknown key"),
    (4, r"field budget: must be a dict"),
])
def test_a_bad_budget_is_refused_naming_the_field(tmp_path: Path, tiny_yaml: dict[str, Any],
                                                  budget: object, message: str) -> None:
    folder = write_task(tmp_path, spec=with_budget(tiny_yaml, budget))
    with pytest.raises(TaskError, match=message):
        load_spec(folder)


def test_an_infinite_budget_is_refused(tmp_path: Path, tiny_yaml: dict[str, Any]) -> None:
    folder = write_task(tmp_path, spec=with_budget(tiny_yaml, {"read_amplification": 1e400}))
    with pytest.raises(TaskError, match=r"budget\.read_amplification: inf must be a positive"):
        load_spec(folder)


def test_within_budget_needs_a_complete_cost_at_most_the_budget() -> None:
    budget = Budget(2.0)
    assert within(Cost(80, 0, 40), budget) and over_budget(Cost(80, 0, 40), budget) is None
    assert not within(Cost(81, 0, 40), budget)
    assert over_budget(Cost(81, 0, 40), budget) == (
        "read amplification 2.025 (81 rows read for 40 records delivered) exceeds the "
        "budget 2")
    assert not within(Cost(1, 0, 40, unprofiled=1), budget)
    assert not within(None, budget)


def gate_findings(folder: Path) -> list[gate.Finding]:
    report = gate.run([load_spec(folder)], workers=1, seeds=(0,))
    return [f for f in report.findings if f.check == "incremental"]


def test_the_gate_passes_an_incremental_gold_within_budget(tmp_path: Path,
                                                           tiny_yaml: dict[str, Any]) -> None:
    # Twelve records over ~40 runs, most of them empty: DuckDB scans a stored table whole when
    # the batch it is joined with is empty, so the tiny task needs a loose budget.
    folder = write_task(tmp_path, spec=with_budget(tiny_yaml, {"read_amplification": 40}),
                        negatives={"no_dedup": TINY_NO_DEDUP})
    (folder / "incremental.sql").write_text(TINY_INCREMENTAL, encoding="utf-8")
    assert gate_findings(folder) == []


def test_the_gate_names_the_figure_over_budget(tmp_path: Path,
                                               tiny_yaml: dict[str, Any]) -> None:
    folder = write_task(tmp_path, spec=with_budget(tiny_yaml, {"read_amplification": 1}))
    (folder / "incremental.sql").write_text(TINY_INCREMENTAL, encoding="utf-8")
    findings = gate_findings(folder)
    assert [(f.schedule, f.seed) for f in findings] == [("trickle", 0)]
    assert findings[0].reason.startswith("read amplification ")
    assert findings[0].reason.endswith("exceeds the budget 1")


def test_the_gate_fails_an_incremental_gold_that_misses_a_hazard(
        tmp_path: Path, tiny_yaml: dict[str, Any]) -> None:
    folder = write_task(tmp_path, spec=with_budget(tiny_yaml, {"read_amplification": 1000}))
    (folder / "incremental.sql").write_text(TINY_NO_DEDUP, encoding="utf-8")
    findings = gate_findings(folder)
    assert {f.schedule for f in findings} == {"duplicates", "crash_retry"}
    assert all(f.reason.startswith("FAIL") for f in findings)


# -- correct_and_incremental in the report -----------------------------------------------------


def row(schedule: str, verdict: str = "PASS", within: bool | None = True, seed: int = 0,
        artifact: str = "sha256:a", task_digest: str = "sha256:t") -> VerdictRow:
    return VerdictRow(task_digest, artifact, schedule, seed, verdict, within_budget=within)


def facts_of(rows: list[VerdictRow], task: str = "t", artifact: str = "sha256:a",
             task_digest: str = "sha256:t") -> CellFacts:
    return cell_facts([CellRow("arm", task, task_digest, 0, artifact)], rows)[0]


def test_a_cell_is_incremental_when_every_replay_is_within_budget() -> None:
    plan = ["snapshot", "in_order", "trickle", "duplicates"]
    assert facts_of([row(s) for s in plan]).incremental is True
    assert facts_of([row(s, within=s != "trickle") for s in plan]).incremental is False
    assert facts_of([row(s, within=None if s == "trickle" else True)
                     for s in plan]).incremental is None
    assert incremental([]) is None


def test_correct_and_incremental_needs_both(tmp_path: Path) -> None:
    plan = ["snapshot", "in_order", "trickle", "duplicates"]
    cells = [
        facts_of([row(s) for s in plan], task="a"),  # correct and incremental
        facts_of([row(s, within=s != "trickle") for s in plan], task="b"),  # a full rebuild
        facts_of([row(s, "FAIL" if s == "duplicates" else "PASS") for s in plan], task="c"),
    ]
    metrics = arm_metrics("arm", cells, seed=0, resamples=50)
    value = metrics["correct_and_incremental"]
    assert isinstance(value, dict) and value["n"] == 3
    assert value["value"] == pytest.approx(1 / 3, abs=1e-6)
    unmeasured = facts_of([row(s, within=None) for s in plan])
    assert "correct_and_incremental" not in arm_metrics("arm", [unmeasured], seed=0,
                                                        resamples=10)


def test_the_report_reads_budgets_and_costs_from_the_results_file(tmp_path: Path,
                                                                  tiny: TaskSpec) -> None:
    from arrivalbench.core.verdict import Verdict
    from arrivalbench.report.load import load
    from arrivalbench.study.store import Cell, Replayed, Store

    path = tmp_path / "r.duckdb"
    with Store(path) as store:
        store.add_task(tiny, "tiny")
        artifact = store.add_artifact(script_ref("SELECT 1"))
        store.add_cell(Cell("arm", tiny.id, tiny.digest, 0, artifact))
        run = store.start_run("local", 1, 1, ["arm"])
        budget = tiny.budget.read_amplification
        graded = []
        for seed, rows_read in enumerate((int(budget * 10), int(budget * 10) + 1)):
            v = Verdict(tiny.id, tiny.digest, "trickle", seed, "sha256:s", artifact, "PASS", {},
                        "duckdb", duckdb_engine.VERSION)
            graded.append(Replayed(v, 1, 1, Cost(rows_read, 0, 10)))
        v = Verdict(tiny.id, tiny.digest, "in_order", 0, "sha256:s", artifact, "PASS", {},
                    "duckdb", duckdb_engine.VERSION)
        graded.append(Replayed(v, 1, 1))
        store.add_verdicts(graded, run)
    within = {(r.schedule, r.seed): r.within_budget for r in load(path).verdicts}
    assert within == {("trickle", 0): True, ("trickle", 1): False, ("in_order", 0): None}


def test_run_with_cost_fills_the_costs_table_and_the_report_metric(
        tmp_path: Path, tiny_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from arrivalbench.report.load import load
    from arrivalbench.report.metrics import study
    from arrivalbench.study.store import Store
    from conftest import cli

    results = tmp_path / "r.duckdb"
    code, _, err = cli(capsys, "run", "--arm", "gold", "--task", str(tiny_dir), "--seeds", "1",
                       "--results", str(results), "--workers", "1", "--cost")
    assert code == 0, err
    with Store(results, read_only=True) as store:
        keys = store.graded_keys()
        assert set(store.costs()) == keys and keys
        assert "--cost" in str(store.con.execute("SELECT command FROM runs").fetchone())
    gold = study(load(results), seed=0, resamples=20)["arms"]
    assert isinstance(gold, dict)
    metric = gold["gold"]["correct_and_incremental"]  # type: ignore[index, call-overload]
    # The tiny gold rebuilds its target from history on every run: correct, not incremental.
    assert metric["value"] == 0.0 and metric["n"] == 1


# -- every built-in task ships incremental.sql -----------------------------------------------


def test_a_built_in_task_without_incremental_sql_is_a_finding() -> None:
    spec = load_spec(BUILTIN_DIR / "store_daily_revenue")
    assert is_builtin(spec)
    missing = gate.missing_incremental(replace(spec, incremental_sql=None))
    assert [(f.check, f.schedule, f.seed) for f in missing] == [("incremental", None, None)]
    assert missing[0].reason.startswith("no incremental.sql: a built-in task ships a gold")
    assert missing[0].reason.endswith(f"({spec.budget.read_amplification:g})")
    assert gate.missing_incremental(replace(spec, incremental_sql="SELECT 1;")) == []


def test_a_users_task_may_omit_incremental_sql(tmp_path: Path) -> None:
    # A copy of a built-in task is the user's own: only the package's folders are the corpus.
    copy = tmp_path / "store_daily_revenue"
    shutil.copytree(BUILTIN_DIR / "store_daily_revenue", copy)
    (copy / "incremental.sql").unlink(missing_ok=True)
    spec = load_spec(copy)
    assert spec.incremental_sql is None and not is_builtin(spec)
    assert gate.missing_incremental(spec) == []


def test_the_gate_reports_a_missing_incremental_sql() -> None:
    spec = replace(load_spec(BUILTIN_DIR / "store_daily_revenue"), incremental_sql=None)
    # No replay: an executor that hands every job back empty (no incremental job is even
    # scheduled).
    jobs: list[str] = []

    class Clean:
        name, workers = "clean", 1

        def run(self, units: list[gate.Job], on_results: Any) -> None:
            jobs.extend(job.artifact for job in units)
            on_results([(job, gate.JobResult(job.task_id, job.artifact)) for job in units])

    report = gate.run([spec], seeds=(0,), executor=Clean())
    assert "incremental" not in jobs and spec.id in report.failed_tasks
    assert [f.reason.split(":")[0] for f in report.findings if f.check == "incremental"] == [
        "no incremental.sql"]
