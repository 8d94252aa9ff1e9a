"""The cost of a replay: rows read from `main` and rows written, from DuckDB's profiler. Costs
sit beside verdicts and never change them, and the sandbox holds under the profiler."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arrivalbench.core.artifacts import script_ref
from arrivalbench.core.engine import Limits
from arrivalbench.core.engine.cost import Cost, check_measurable, measure
from arrivalbench.core.grading import GradeOptions, Point, schedule
from arrivalbench.core.schedules import KINDS
from arrivalbench.core.task import TaskSpec, load_spec
from arrivalbench.errors import ParameterError
from arrivalbench.study.keys import key_of
from arrivalbench.study.store import Replayed, Store
from conftest import TINY_GOLD, TINY_NO_DEDUP, TINY_ROWS, cli, grade1
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
    verdict, outcome = grade1(tiny, TINY_GOLD, Point("in_order", 0), measure=True)
    assert verdict.status == "PASS" and outcome.cost is not None
    sizes = [len(b.records) for b in sched.batches]
    seen = [sum(sizes[: n + 1]) for n in range(len(sizes))]  # in order: no record twice
    shops = [len({TINY_ROWS[row]["shop"] for b in sched.batches[: n + 1]
                  for _source, row in b.records}) for n in range(len(sizes))]
    # Each run inserts its batch (incoming is not counted), reads all of `seen` and writes
    # one row per shop so far.
    assert outcome.cost == Cost(sum(seen), sum(sizes) + sum(shops), sum(sizes))


def test_cost_is_off_by_default(tiny: TaskSpec) -> None:
    assert grade1(tiny, TINY_GOLD, Point("in_order", 0))[1].cost is None


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
    off, plain = grade1(tiny, SCRIPTS[name], Point(kind, 1))
    on, measured = grade1(tiny, SCRIPTS[name], Point(kind, 1), measure=True)
    assert on.json() == off.json()
    assert plain.cost is None and measured.cost is not None


def test_a_prepared_statement_makes_the_cost_incomplete(tiny: TaskSpec) -> None:
    """EXECUTE returns no operator tree: its reads are unseen, and the cost says so."""
    base = grade1(tiny, TINY_GOLD, Point("in_order", 0), measure=True)[1].cost
    more = grade1(tiny, SCRIPTS["prepared"], Point("in_order", 0), measure=True)[1].cost
    assert base is not None and more is not None
    assert base.complete and "unprofiled" not in base.document()
    assert not more.complete and more.document()["unprofiled"] == more.unprofiled > 0


def test_limits_still_apply_under_the_profiler(tiny: TaskSpec) -> None:
    endless = TINY_GOLD + "SELECT count(*) FROM range(1000000000000);\n"
    verdict = grade1(tiny, endless, Point("in_order", 0), Limits(statement_seconds=0.5),
                    measure=True)[0]
    assert verdict.detail["phase"] == "timeout" and verdict.detail["statement"] == 3
    huge = "CREATE TABLE shop_revenue AS SELECT list(i) AS l FROM range(200000000) t(i);"
    verdict = grade1(tiny, huge, Point("snapshot", 0), Limits(statement_seconds=5,
                                                             memory="64MB"), measure=True)[0]
    assert verdict.detail["phase"] == "memory", verdict.detail


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "schema_evolution"])
def test_a_corpus_task_grades_the_same_with_cost(kind: str) -> None:
    spec = load_spec("ledger_running_balance")
    for sql in (spec.gold_sql, *(n.sql for n in spec.negatives)):
        off = grade1(spec, sql, Point(kind, 0))[0]
        on, outcome = grade1(spec, sql, Point(kind, 0), measure=True)
        assert on.json() == off.json() and outcome.cost is not None


# -- the results file and the CLI ------------------------------------------------------------


def test_costs_are_stored_beside_verdicts_keyed_like_them(tmp_path: Path) -> None:
    from test_store import verdict

    with Store(tmp_path / "r.duckdb") as store:
        run = store.start_run("local", 1, 1, ["gold"])
        measured, plain = verdict(0), verdict(1)
        cost = Cost(120, 30, 40, 1)
        assert store.add_verdicts([Replayed(measured, 1, 1, cost), Replayed(plain, 1, 1)], run) == 2
        assert store.costs() == {key_of(measured): cost}
        # A key graded again keeps its first verdict and its first cost.
        store.add_verdicts([Replayed(measured, 1, 1, Cost(1, 1, 1))], run)
        assert store.costs() == {key_of(measured): cost}
        row = store.con.execute("SELECT read_amplification FROM costs").fetchone()
        assert row == (3.0,)
        assert {v.record for v in store.verdicts()} == {measured.json(), plain.json()}


def test_a_unit_graded_with_measure_carries_its_cost(tiny_dir: Path, tiny: TaskSpec) -> None:
    from arrivalbench.study.executors import Unit, compute

    unit = Unit(str(tiny_dir), tiny.digest, script_ref(TINY_GOLD), "in_order", 0)
    assert compute(unit).cost is None
    result = compute(dataclasses.replace(unit, options=GradeOptions(measure=True)))
    assert result.cost is not None and result.graded().cost == result.cost
    assert result.verdict.json() == compute(unit).verdict.json()


def test_grade_cost_json_carries_a_cost_per_verdict(tiny_dir: Path,
                                                    capsys: pytest.CaptureFixture[str],
                                                    tmp_path: Path) -> None:
    script = tmp_path / "p.sql"
    script.write_text(TINY_GOLD, encoding="utf-8")
    args = ("grade", str(script), "--task", str(tiny_dir), "--schedule", "in_order",
            "--seeds", "2", "--json")
    code, plain, _ = cli(capsys, *args)
    code_cost, measured, _ = cli(capsys, *args, "--cost")
    assert code == code_cost == 0
    entries = json.loads(measured)["verdicts"]
    assert [sorted(e["cost"]) for e in entries] == [
        ["read_amplification", "rows_read", "rows_written"]] * 2
    assert all(e["cost"]["read_amplification"] > 1 for e in entries)
    for entry in entries:
        del entry["cost"]
    assert entries == json.loads(plain)["verdicts"]


def test_grade_cost_prints_a_cost_table(tiny_dir: Path, capsys: pytest.CaptureFixture[str],
                                        tmp_path: Path) -> None:
    script = tmp_path / "p.sql"
    script.write_text(TINY_GOLD, encoding="utf-8")
    code, out, _ = cli(capsys, "grade", str(script), "--task", str(tiny_dir), "--schedule",
                       "snapshot", "--cost")
    assert code == 0 and "read amplification" in out and "1.00" in out


def test_an_engine_that_cannot_measure_is_refused_in_one_line() -> None:
    with pytest.raises(ParameterError, match=r"^measure: engine 'dbt' cannot measure") as got:
        check_measurable("dbt")
    assert got.value.what == "measure"
    with pytest.raises(ParameterError, match=r"^measure: a dbt project's statements are not "):
        check_measurable("duckdb", script=False)
    check_measurable("duckdb")


def test_only_statements_that_read_or_write_rows_are_wrapped() -> None:
    import duckdb

    from arrivalbench.core.engine.cost import wrap

    con = duckdb.connect()
    script = ("SELECT 1; INSERT INTO t VALUES (1); BEGIN; COMMIT; SET threads = 4; "
              "COPY t TO 'x.csv'; DROP TABLE t; CALL pragma_version(); CREATE TABLE u AS SELECT 1")
    kinds = {}
    for statement in con.extract_statements(script):
        wrapped = wrap(con, statement)
        kinds[statement.type.name] = None if wrapped is None else wrapped.type.name
    assert kinds == {"SELECT": "EXPLAIN", "INSERT": "EXPLAIN", "TRANSACTION": None, "SET": None,
                     "COPY": None, "DROP": None, "CALL": None, "CREATE": "EXPLAIN"}
