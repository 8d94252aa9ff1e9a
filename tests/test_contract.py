"""The execution contract on the built-in tasks, and determinism of verdicts."""

from __future__ import annotations

from collections import defaultdict

import pytest

from arrivalbench.core.engine import Limits
from arrivalbench.core.engine import duckdb as engine
from arrivalbench.core.grading import Point, plan, schedule
from arrivalbench.core.task import TaskSpec, builtin_ids, load_spec
from arrivalbench.core.verdict import Verdict
from conftest import Grader, grade_each

BUILTINS = ["customer_current_address", "store_daily_revenue", "web_page_views"]
SEEDS = 2


def verdicts(spec: TaskSpec, script: str, seeds: int = SEEDS) -> dict[str, list[Verdict]]:
    by_kind: dict[str, list[Verdict]] = defaultdict(list)
    for verdict, _outcome in grade_each(spec, script, plan(spec, seeds)):
        by_kind[verdict.schedule].append(verdict)
    return by_kind


def test_the_builtin_tasks_cover_every_hazard_and_mode() -> None:
    assert set(BUILTINS) <= set(builtin_ids())
    specs = [load_spec(t) for t in BUILTINS]
    assert {s.mode for s in specs} == {"append", "upsert", "aggregate"}
    assert {h for s in specs for h in s.hazards} == {
        "late_arrival", "out_of_order", "duplicates", "crash_retry", "backfill",
        "schema_evolution"}


@pytest.mark.parametrize("task_id", BUILTINS)
def test_gold_passes_everything(task_id: str) -> None:
    spec = load_spec(task_id)
    results = verdicts(spec, spec.gold_sql)
    assert set(results) == {"snapshot", "in_order", "trickle", *spec.hazards}
    failing = [(v.schedule, v.seed, v.detail) for vs in results.values() for v in vs
               if v.status != "PASS"]
    assert failing == []


@pytest.mark.parametrize(("task_id", "negative"), [
    (t, n.name) for t in BUILTINS for n in load_spec(t).negatives])
def test_negative_passes_controls_and_fails_what_it_declares(task_id: str, negative: str) -> None:
    spec = load_spec(task_id)
    declared = next(n for n in spec.negatives if n.name == negative)
    results = verdicts(spec, declared.sql)
    for kind in ("snapshot", "in_order", "trickle"):
        assert all(v.status == "PASS" for v in results[kind]), (kind, results[kind][0].detail)
    for hazard in spec.hazards:
        failed = any(v.status != "PASS" for v in results[hazard])
        assert failed == (hazard in declared.fails), hazard


# -- the contract, clause by clause ---------------------------------------------------------------

TEMP_STATE = """
CREATE TEMP TABLE IF NOT EXISTS order_history AS SELECT * FROM incoming.orders LIMIT 0;
INSERT INTO order_history
SELECT DISTINCT * FROM incoming.orders
WHERE order_id NOT IN (SELECT order_id FROM order_history);
CREATE OR REPLACE TABLE daily_store_revenue AS
SELECT store_id, CAST(ordered_at AS DATE) AS day,
       CAST(COALESCE(SUM(amount), 0) AS DECIMAL(12,2)) AS revenue, COUNT(*) AS orders
FROM order_history GROUP BY ALL;
"""


def test_temp_tables_do_not_survive_to_the_next_run(grade_one: Grader) -> None:
    spec = load_spec("store_daily_revenue")
    assert grade_one(spec, TEMP_STATE, "snapshot").status == "PASS"
    verdict = grade_one(spec, TEMP_STATE, "in_order")
    assert verdict.status == "FAIL"
    # only the last batch is left: most store-days are missing or short
    assert verdict.detail["counts"]["missing"] + verdict.detail["counts"]["changed"] > 10
    persistent = TEMP_STATE.replace("CREATE TEMP TABLE", "CREATE TABLE")
    assert grade_one(spec, persistent, "in_order").status == "PASS"


def _statements(script: str) -> int:
    with engine.database(Limits()) as db:
        return len(db.split(script))


def test_a_transaction_survives_crash_retry(grade_one: Grader) -> None:
    spec = load_spec("store_daily_revenue")
    gold = spec.gold_sql
    assert "BEGIN TRANSACTION;" in gold and "COMMIT;" in gold
    bare = gold.replace("BEGIN TRANSACTION;", "").replace("COMMIT;", "")
    assert _statements(bare) == _statements(gold) - 2 == 6
    # Statement 3 of the bare script records the orders as counted, statement 4 counts them: a
    # run aborted after 4 statements has recorded orders it never counted.
    harmful = [seed for seed in range(40) if any(
        b.abort_after(6) == 4 for b in schedule(spec, "crash_retry", seed).batches)]
    assert harmful, "some seed aborts between the two statements"
    for seed in harmful[:2]:
        assert grade_one(spec, gold, "crash_retry", seed).status == "PASS"
        verdict = grade_one(spec, bare, "crash_retry", seed)
        assert verdict.status == "FAIL" and verdict.detail["counts"]["changed"] > 0
        assert grade_one(spec, bare, "in_order", seed).status == "PASS"


def test_an_open_transaction_is_rolled_back_at_the_end_of_a_run(grade_one: Grader) -> None:
    spec = load_spec("store_daily_revenue")
    never_committed = spec.gold_sql.replace("COMMIT;", "")
    verdict = grade_one(spec, never_committed, "in_order")
    assert verdict.status == "ERROR" and verdict.detail["phase"] == "read-target"


SELECT_STAR_HISTORY = """
CREATE TABLE IF NOT EXISTS page_events_history AS SELECT * FROM incoming.page_events LIMIT 0;
INSERT INTO page_events_history SELECT * FROM incoming.page_events
WHERE event_id NOT IN (SELECT event_id FROM page_events_history);
CREATE OR REPLACE TABLE page_views AS
SELECT event_id, session_id, user_id,
       COALESCE(NULLIF(rtrim(lower(regexp_extract(url,
           '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*([^?#]*)', 1)), '/'), ''), '/') AS page_path,
       NULLIF(regexp_replace(lower(regexp_extract(referrer,
           '^[A-Za-z][A-Za-z0-9+.-]*://([^/?#:]*)', 1)), '^www\\.', ''), '') AS referrer_host,
       CAST(viewed_at AS DATE) AS view_date, viewed_at
FROM (SELECT DISTINCT * FROM page_events_history);
"""


def test_select_star_into_a_history_table_breaks_under_schema_evolution(
        grade_one: Grader) -> None:
    spec = load_spec("web_page_views")
    for kind in ("snapshot", "in_order", "trickle", "duplicates", "late_arrival"):
        assert grade_one(spec, SELECT_STAR_HISTORY, kind).status == "PASS", kind
    for seed in range(SEEDS):
        verdict = grade_one(spec, SELECT_STAR_HISTORY, "schema_evolution", seed)
        assert verdict.status in ("ERROR", "FAIL")
        evolution_from = schedule(spec, "schema_evolution", seed).evolution_from
        assert verdict.detail["batch"] == evolution_from
        assert "columns" in verdict.detail["message"]


VERSION_GUARDED_MERGE = """
CREATE TABLE IF NOT EXISTS latest (
    customer_id INTEGER PRIMARY KEY, version INTEGER NOT NULL, op VARCHAR NOT NULL,
    street VARCHAR, unit VARCHAR, city VARCHAR, postal_code VARCHAR, country VARCHAR,
    updated_at TIMESTAMP);

MERGE INTO latest AS l
USING (
    SELECT customer_id, version, op, street, unit, city, postal_code, country, updated_at
    FROM incoming.customer_changes
    QUALIFY row_number() OVER (PARTITION BY customer_id ORDER BY version DESC) = 1
) AS c
ON l.customer_id = c.customer_id
WHEN MATCHED AND c.version > l.version THEN UPDATE SET
    version = c.version, op = c.op, street = c.street, unit = c.unit, city = c.city,
    postal_code = c.postal_code, country = c.country, updated_at = c.updated_at
WHEN NOT MATCHED THEN INSERT
    (customer_id, version, op, street, unit, city, postal_code, country, updated_at)
    VALUES (c.customer_id, c.version, c.op, c.street, c.unit, c.city, c.postal_code,
            c.country, c.updated_at);

CREATE OR REPLACE TABLE customer_current_address AS
SELECT customer_id, street, unit, city, postal_code, country, updated_at
FROM latest WHERE op = 'upsert';
"""


def test_a_version_guarded_upsert_passes_everything() -> None:
    spec = load_spec("customer_current_address")
    results = verdicts(spec, VERSION_GUARDED_MERGE)
    assert {k: {v.status for v in vs} for k, vs in results.items()} == {
        k: {"PASS"} for k in ("snapshot", "in_order", "trickle", *spec.hazards)}
    unguarded = VERSION_GUARDED_MERGE.replace("AND c.version > l.version", "")
    points = [Point("snapshot", 0), Point("out_of_order", 0), Point("out_of_order", 1)]
    unguarded_verdicts = [v.status for v, _ in grade_each(spec, unguarded, points)]
    assert unguarded_verdicts[0] == "PASS" and "FAIL" in unguarded_verdicts[1:]


# -- determinism ---------------------------------------------------------------------------------


def test_grading_in_reverse_order_gives_identical_bytes() -> None:
    """No replay leaves anything behind that changes the next one."""
    spec = load_spec("store_daily_revenue")
    script = next(n.sql for n in spec.negatives if n.name == "max_watermark")
    points = plan(spec, 1)
    first = [v.json() for v, _ in grade_each(spec, script, points)]
    backwards = [v.json() for v, _ in grade_each(spec, script, list(reversed(points)))]
    assert list(reversed(backwards)) == first
    assert any('"verdict":"FAIL"' in j for j in first)


def test_verdict_record_carries_every_field() -> None:
    spec = load_spec("web_page_views")
    [(verdict, outcome)] = list(grade_each(spec, spec.gold_sql, [Point("duplicates", 1)]))
    document = verdict.document()
    assert set(document) == {"schema_version", "task", "task_digest", "schedule", "seed",
                             "schedule_digest", "artifact", "engine", "engine_version",
                             "harness_version", "landing", "allowance", "verdict", "detail"}
    assert (document["landing"], document["allowance"]) == ("batch", None)
    assert document["task_digest"] == spec.digest
    assert document["schedule_digest"] == schedule(spec, "duplicates", 1).digest
    assert document["artifact"].startswith("sha256:")
    assert document["engine"] == "duckdb" and document["engine_version"] == engine.VERSION
    text = verdict.json()
    assert text == verdict.json() and ", " not in text and "wall" not in text
    assert outcome.wall_seconds >= outcome.engine_seconds > 0
