"""Arms: gold, negatives, the template generated from a spec, folders of submissions."""

from __future__ import annotations

from pathlib import Path

import pytest

from arrivalbench.core.grading import Point, plan
from arrivalbench.core.task import TaskSpec, builtin_ids, load_spec
from arrivalbench.errors import ArrivalBenchError, TaskError
from arrivalbench.study import arms, template
from arrivalbench.study.submissions import submissions
from conftest import TINY_GOLD, TINY_YAML, grade1, write_task


def test_gold_and_negatives_carry_their_provenance(tiny: TaskSpec) -> None:
    [gold] = arms.gold(tiny)
    assert (gold.arm, gold.replicate, gold.ref.text) == ("gold", 0, tiny.gold_sql)
    assert gold.provenance == {"file": str(tiny.path / "gold.sql")}
    negatives = arms.negatives(load_spec("store_daily_revenue"))
    spec = load_spec("store_daily_revenue")
    assert [(n.arm, n.replicate, n.provenance["negative"]) for n in negatives] == [
        ("negatives", i, neg.name) for i, neg in enumerate(spec.negatives)]
    first = negatives[0]
    assert first.ref.text == spec.negatives[0].sql
    assert first.provenance == {"file": f"negatives/{spec.negatives[0].name}.sql",
                                "negative": spec.negatives[0].name,
                                "fails": list(spec.negatives[0].fails)}


def test_builtin_rejects_an_unknown_arm(tiny: TaskSpec) -> None:
    with pytest.raises(ArrivalBenchError, match="arms 'golden': unknown; did you mean gold"):
        arms.builtin("golden", [tiny])


# -- the template ----------------------------------------------------------------------------


def test_template_names_columns_and_binds_sources_to_history(tiny: TaskSpec) -> None:
    sql = template.template_sql(tiny)
    assert "*" not in sql.split("CREATE OR REPLACE TABLE")[0]  # never SELECT * into history
    assert 'INSERT INTO main."orders_history" ("order_id", "shop", "amount", "placed_at")' in sql
    assert 'h."order_id" IS NOT DISTINCT FROM d."order_id"' in sql
    assert 'CREATE OR REPLACE TABLE main."shop_revenue" AS' in sql
    assert 'FROM main."orders_history" AS "orders" GROUP BY shop' in sql


def test_template_passes_every_declared_hazard_of_a_builtin_task_of_each_mode() -> None:
    """One task per mode (the corpus grows; `arrivalbench run` grades the template on all)."""
    first: dict[str, TaskSpec] = {}
    for task in builtin_ids():
        spec = load_spec(task)
        first.setdefault(spec.mode, spec)
    assert set(first) == {"append", "upsert", "aggregate"}
    for spec in first.values():
        sql = template.template_sql(spec)
        for point in plan(spec, 1, ["snapshot", *spec.hazards]):
            verdict, _ = grade1(spec, sql, point)
            assert verdict.status == "PASS", (spec.id, point, verdict.detail)


def test_template_ignores_a_new_column_and_survives_a_crash(tmp_path: Path) -> None:
    spec_yaml = {**TINY_YAML, "hazards": ["crash_retry", "schema_evolution", "duplicates"],
                 "evolution": {"source": "orders", "column": "coupon", "type": "VARCHAR"},
                 "negatives": {}}
    spec = load_spec(write_task(tmp_path, spec=spec_yaml, negatives={}))
    sql = template.template_sql(spec)
    for kind in ("schema_evolution", "crash_retry", "duplicates"):
        for seed in range(3):
            verdict, _ = grade1(spec, sql, Point(kind, seed))
            assert verdict.status == "PASS", (kind, seed, verdict.detail)


def bound(tmp_path: Path, reference: str, name: str = "t") -> str:
    spec = load_spec(write_task(tmp_path, name=name, spec={**TINY_YAML, "id": name},
                                reference=reference))
    return template.bind_sources(spec, {"orders": 'main."H"'})


def test_bind_sources_keeps_aliases_and_the_authors_text(tmp_path: Path) -> None:
    got = bound(tmp_path, "-- lead comment\nSELECT o.shop, count(*) AS n  -- inline\n"
                          "FROM orders o JOIN (SELECT shop FROM Orders) x USING (shop)\n"
                          "WHERE o.order_id IN (SELECT order_id FROM main.orders)\n"
                          "GROUP BY ALL;  -- trailing\n")
    assert got == ('-- lead comment\nSELECT o.shop, count(*) AS n  -- inline\n'
                   'FROM main."H" o JOIN (SELECT shop FROM main."H" AS "Orders") x USING (shop)\n'
                   'WHERE o.order_id IN (SELECT order_id FROM main."H" AS "orders")\n'
                   'GROUP BY ALL')


def test_bind_sources_leaves_ctes_strings_and_other_schemas_alone(tmp_path: Path) -> None:
    got = bound(tmp_path, "WITH orders AS (SELECT * FROM main.orders WHERE shop <> 'orders') "
                          "SELECT 'FROM orders' AS s, * FROM orders, incoming.orders")
    assert got == ("WITH orders AS (SELECT * FROM main.\"H\" AS \"orders\" WHERE shop <> "
                   "'orders') SELECT 'FROM orders' AS s, * FROM orders, incoming.orders")


def test_bind_sources_errors_name_the_reference(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match=r"reference\.sql: reads none of the sources"):
        bound(tmp_path, "SELECT 1 AS shop, 2 AS revenue, 3 AS orders FROM range(1)", "a")
    with pytest.raises(TaskError, match=r"reference\.sql: must hold exactly one query"):
        bound(tmp_path, "SELECT * FROM orders; SELECT * FROM orders", "b")


def test_history_names_avoid_every_task_name(tmp_path: Path) -> None:
    spec_yaml = {**TINY_YAML, "target": {**TINY_YAML["target"], "name": "orders_history"}}
    reference = "SELECT shop, CAST(COALESCE(SUM(amount), 0) AS DECIMAL(12,2)) AS revenue, " \
                "COUNT(*) AS orders FROM orders GROUP BY shop"
    spec = load_spec(write_task(tmp_path, spec=spec_yaml, reference=reference,
                                gold=TINY_GOLD.replace("shop_revenue", "orders_history")))
    assert template.history_tables(spec) == {"orders": "_orders_history"}
    verdict, _ = grade1(spec, template.template_sql(spec), Point("duplicates", 0))
    assert verdict.status == "PASS", verdict.detail


# -- submissions -----------------------------------------------------------------------------


def test_submissions_layout_replicates_and_default_arm_name(tmp_path: Path,
                                                            tiny: TaskSpec) -> None:
    folder = tmp_path / "alice"
    (folder / "tiny").mkdir(parents=True)
    (folder / "tiny.sql").write_text("SELECT 0")
    (folder / "tiny" / "2.sql").write_text("SELECT 2")
    (folder / "tiny" / "10.sql").write_text("SELECT 10")
    (folder / "README.md").write_text("not a script")
    got = submissions(folder, [tiny])
    assert got.arm == "alice"
    assert [(a.arm, a.spec.id, a.replicate, a.ref.text) for a in got.artifacts] == [
        ("alice", "tiny", 0, "SELECT 0"), ("alice", "tiny", 2, "SELECT 2"),
        ("alice", "tiny", 10, "SELECT 10")]
    assert got.artifacts[1].provenance == {"file": str((folder / "tiny" / "2.sql").resolve())}
    assert got.warnings == []
    assert submissions(folder, [tiny], arm_name="humans").arm == "humans"


def test_submissions_warn_and_skip_what_cannot_be_used(tmp_path: Path, tiny: TaskSpec) -> None:
    folder = tmp_path / "subs"
    (folder / "tiny").mkdir(parents=True)
    (folder / "tiny.sql").write_text("SELECT 1")
    (folder / "tiny" / "0.sql").write_text("SELECT 0")  # replicate 0 given twice
    (folder / "tiny" / "best.sql").write_text("SELECT 1")  # not a replicate number
    (folder / "tiny" / "3.sql").write_text("   \n")  # empty
    (folder / "tiny" / "4.sql").write_bytes(b"SELECT '\xff'")  # not UTF-8
    (folder / "no_such_task.sql").write_text("SELECT 1")
    (folder / "store_daily_revenue.sql").write_text("SELECT 1")  # built-in, not graded now
    with pytest.raises(ArrivalBenchError, match=r"1 entry names no task: no_such_task\.sql"):
        submissions(folder, [tiny])
    got = submissions(folder, [tiny], allow_unmatched=True)
    assert [(a.replicate, a.ref.text) for a in got.artifacts] == [(0, "SELECT 1")]
    messages = "\n".join(got.warnings)
    assert len(got.warnings) == 5, messages
    assert f"{folder / 'tiny' / '0.sql'}: replicate 0 of tiny is already given by" in messages
    assert f"{folder / 'tiny' / 'best.sql'}: name a replicate <n>.sql" in messages
    assert f"{folder / 'tiny' / '3.sql'}: empty; a pipeline holds at least one SQL " \
        "statement; skipped" in messages
    assert f"{folder / 'tiny' / '4.sql'}: not UTF-8 text; save it as UTF-8; skipped" in messages
    assert f"{folder / 'no_such_task.sql'}: names no task; left out" in messages
    assert all("\n" not in w for w in got.warnings)


def test_submissions_with_nothing_usable_is_an_error(tmp_path: Path, tiny: TaskSpec) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    (folder / "tiny.sql").write_text("")
    with pytest.raises(ArrivalBenchError, match=r"submissions .*empty: no usable submission"):
        submissions(folder, [tiny])
    with pytest.raises(ArrivalBenchError, match="no such folder"):
        submissions(tmp_path / "missing", [tiny])


def test_submissions_cannot_take_a_builtin_arm_name(tmp_path: Path, tiny: TaskSpec) -> None:
    folder = tmp_path / "gold"
    folder.mkdir()
    (folder / "tiny.sql").write_text("SELECT 1")
    with pytest.raises(ArrivalBenchError, match="built-in arm"):
        submissions(folder, [tiny])
    assert submissions(folder, [tiny], arm_name="gold_humans").arm == "gold_humans"


# -- idiom signatures ------------------------------------------------------------------------


def test_idioms_are_judged_against_the_task() -> None:
    spec = load_spec("account_balances")  # postings, record key posting_id
    entity_keys = "INSERT INTO accounts SELECT DISTINCT account_id FROM incoming.postings"
    assert arms.idioms(entity_keys, spec) == []  # neither a guard nor a history of records
    records = "INSERT INTO log SELECT DISTINCT posting_id, amount FROM incoming.postings"
    assert arms.idioms(records, spec) == ["batch_dedup", "history_table"]


def test_idioms_of_an_unreadable_script_say_so() -> None:
    assert arms.idioms("not SQL at all", load_spec("account_balances")) == ["unparsed"]
