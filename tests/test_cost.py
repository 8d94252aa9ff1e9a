"""The cost of a replay: rows read from `main` and rows written, from DuckDB's profiler. Costs
sit beside verdicts and never change them, and the sandbox holds under the profiler."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arrivalbench.engine import Limits
from arrivalbench.engine.cost import Cost, measure
from arrivalbench.grading import Point, grade, schedule
from arrivalbench.schedules import KINDS
from arrivalbench.task import TaskSpec, load_spec
from conftest import TINY_GOLD, TINY_NO_DEDUP, TINY_ROWS
from test_sandbox import HOSTILE, PRELUDE


def scan(table: str, rows: int, scanned: int = 999) -> dict[str, object]:
    return {"type": "TABLE_SCAN", "extra_info": {"Table": table}, "intermediate_rows": rows,
            "rows_scanned": scanned, "children": []}


def test_measure_counts_logical_rows_of_main_tables_and_rows_fed_to_writers() -> None:
    insert = {"type": "BATCH_INSERT", "intermediate_rows": 1, "children": [
        {"type": "HASH_JOIN", "intermediate_rows": 7, "children": [
            scan("replay_3.main.history", 5), scan("replay_3.incoming.orders", 40),
            scan("temp.main.scratch", 11), scan("replay_2.main.other_db", 13)]}]}
    profile = {"operator": [{"type": "RESULT_COLLECTOR", "children": [
        {"type": "EXPLAIN_ANALYZE", "children": [insert]}]}]}
    assert measure(json.dumps(profile), "replay_3") == (5, 7)
    # INSERT ... ON CONFLICT: a MERGE_INTO over the offered rows with an INSERT below it.
    upsert = {"type": "MERGE_INTO", "intermediate_rows": 1, "children": [
        {"type": "HASH_JOIN", "intermediate_rows": 4, "children": [
            scan("replay_3.main.history", 2)]},
        {"type": "INSERT", "intermediate_rows": 0, "children": [
            {"type": "PROJECTION", "intermediate_rows": 4, "children": []}]}]}
    assert measure(json.dumps({"operator": [upsert]}), "replay_3") == (2, 4)
    assert measure('{"result": "error"}', "replay_3") == (0, 0)


@given(st.integers(0, 10**9), st.integers(0, 10**9), st.integers(0, 10**6))
def test_read_amplification_is_rows_read_per_record(read: int, written: int,
                                                    records: int) -> None:
    cost = Cost(read, written, records)
    assert cost.read_amplification == (round(read / records, 6) if records else 0.0)
    assert cost.document() == {"rows_read": read, "rows_written": written,
                               "read_amplification": cost.read_amplification}


def test_a_rebuild_reads_its_whole_history_on_every_run(tiny: TaskSpec) -> None:
    sched = schedule(tiny, "in_order", 0)
    verdict, outcome = grade(tiny, TINY_GOLD, Point("in_order", 0), measure=True)
    assert verdict.verdict == "PASS" and outcome.cost is not None
    sizes = [len(b.records) for b in sched.batches]
    seen = [sum(sizes[: n + 1]) for n in range(len(sizes))]  # in order: no record twice
    shops = [len({TINY_ROWS[row]["shop"] for b in sched.batches[: n + 1]
                  for _source, row in b.records}) for n in range(len(sizes))]
    # Each run inserts its batch (incoming is not counted), reads all of `seen` and writes
    # one row per shop so far.
    assert outcome.cost == Cost(sum(seen), sum(sizes) + sum(shops), sum(sizes))


def test_cost_is_off_by_default(tiny: TaskSpec) -> None:
    assert grade(tiny, TINY_GOLD, Point("in_order", 0))[1].cost is None


SCRIPTS = {
    "gold": TINY_GOLD,
    "no_dedup": TINY_NO_DEDUP,
    "transaction": "BEGIN;\n" + TINY_GOLD + "COMMIT;\n",
    "binder error": TINY_GOLD + "SELECT nosuch FROM seen;\n",
    "parser error": TINY_GOLD + "SELEC 1;\n",
    "catalog error": "CREATE TABLE seen (a INT);\nCREATE TABLE seen (a INT);\n",
    "aborted transaction": "BEGIN;\nSELECT 1/0::INT FROM nosuch;\nSELECT 1;\nCOMMIT;\n",
    "constraint": "CREATE TABLE IF NOT EXISTS k (a INT PRIMARY KEY);\n"
                  "INSERT INTO k SELECT 1 FROM incoming.orders;\n",
    "prepared": TINY_GOLD + "PREPARE p AS SELECT count(*) FROM seen;\nEXECUTE p;\n",
    **{f"hostile {name}": PRELUDE + sql + ";\n" + TINY_GOLD for name, sql in HOSTILE.items()},
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
@pytest.mark.parametrize("kind", ["in_order", "crash_retry", "duplicates"])
def test_verdict_bytes_are_the_same_with_cost_on_or_off(tiny: TaskSpec, name: str,
                                                        kind: str) -> None:
    off, plain = grade(tiny, SCRIPTS[name], Point(kind, 1))
    on, measured = grade(tiny, SCRIPTS[name], Point(kind, 1), measure=True)
    assert on.json() == off.json()
    assert plain.cost is None and measured.cost is not None


def test_a_prepared_statement_makes_the_cost_incomplete(tiny: TaskSpec) -> None:
    """EXECUTE returns no operator tree: its reads are unseen, and the cost says so."""
    base = grade(tiny, TINY_GOLD, Point("in_order", 0), measure=True)[1].cost
    more = grade(tiny, SCRIPTS["prepared"], Point("in_order", 0), measure=True)[1].cost
    assert base is not None and more is not None
    assert base.complete and "unprofiled" not in base.document()
    assert not more.complete and more.document()["unprofiled"] == more.unprofiled > 0


def test_limits_still_apply_under_the_profiler(tiny: TaskSpec) -> None:
    endless = TINY_GOLD + "SELECT count(*) FROM range(1000000000000);\n"
    verdict = grade(tiny, endless, Point("in_order", 0), Limits(statement_seconds=0.5),
                    measure=True)[0]
    assert verdict.detail["phase"] == "timeout" and verdict.detail["statement"] == 3
    huge = "CREATE TABLE shop_revenue AS SELECT list(i) AS l FROM range(200000000) t(i);"
    verdict = grade(tiny, huge, Point("snapshot", 0), Limits(statement_seconds=5,
                                                             memory="64MB"), measure=True)[0]
    assert verdict.detail["phase"] == "memory", verdict.detail


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "schema_evolution"])
def test_a_corpus_task_grades_the_same_with_cost(kind: str) -> None:
    spec = load_spec("ledger_running_balance")
    for script in (spec.gold_sql, *(n.sql for n in spec.negatives)):
        off = grade(spec, script, Point(kind, 0))[0]
        on, outcome = grade(spec, script, Point(kind, 0), measure=True)
        assert on.json() == off.json() and outcome.cost is not None
