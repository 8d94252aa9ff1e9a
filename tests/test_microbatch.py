"""dbt at the batch's clock: `run_started_at` and a microbatch model's current time are the
clock of the batch the run is given, never the wall clock, and a microbatch model's failures
that are late data beyond its lookback are told apart from bugs (docs/dbt.md, "Microbatch
models"). Real dbt throughout; the example's tasks are derived once per module."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

pytest.importorskip("dbt.cli.main")

from arrivalbench.core import lateness
from arrivalbench.core.artifacts import read
from arrivalbench.core.engine import Limits
from arrivalbench.core.engine import duckdb as engine
from arrivalbench.core.grading import GradeOptions, judge, schedule
from arrivalbench.core.log import load_log
from arrivalbench.core.replay import deliveries, expected
from arrivalbench.core.schedules import Batch
from arrivalbench.core.task import TaskSpec, load_spec
from arrivalbench.corpus.own_data import derived
from conftest import cli
from test_dbt import write_project

EXAMPLE = Path(__file__).parent.parent / "examples" / "your_data"
SHOP = EXAMPLE / "shop"
ACCUMULATE = GradeOptions(landing="accumulate")



@pytest.fixture(scope="module")
def microbatch(cache: Path) -> TaskSpec:
    return derived(SHOP, EXAMPLE, "orders_microbatch")


STAMPED = """{{ config(materialized='incremental', unique_key='click_id',
          incremental_strategy='delete+insert') }}
select click_id, cast('{{ run_started_at.strftime("%Y-%m-%d %H:%M:%S") }}' as timestamp)
       as started
from {{ source('raw', 'clicks') }}
qualify row_number() over (partition by click_id order by clicked_at) = 1
"""


def test_run_started_at_is_the_clock_of_the_batch(tmp_path: Path) -> None:
    spec = load_spec("ad_clicks_clean")
    project = read(write_project(tmp_path / "p", STAMPED), spec)
    staged = deliveries(spec, load_log(spec), schedule(spec, "in_order", 0))
    try:
        with engine.database(Limits()) as db:
            run = project.start(db)
            db.stage(staged.tables)
            for at in (dt.datetime(2019, 6, 1, 8, 30), dt.datetime(2031, 1, 2, 3, 4, 5)):
                db.load(0, staged.columns(0))
                run(Batch((), clock=at))
                assert {row[1] for row in db.read("ad_clicks").rows} == {at}
    finally:
        project.close()


def test_the_reference_is_built_once_from_begin_to_the_reference_clock(
        microbatch: TaskSpec) -> None:
    """A daily microbatch model from 2024-03-01 over five days of orders: its full refresh at
    the reference's clock, not today's, holds every order once."""
    assert len(expected(microbatch).rows) == 12
    assert microbatch.target.key == ("order_id",)


def test_late_data_beyond_the_lookback_is_told_apart(microbatch: TaskSpec) -> None:
    model = read(SHOP, microbatch, models=["orders_microbatch"])
    sched = schedule(microbatch, "late_arrival", 0)
    try:
        graded = judge(microbatch, model, sched, options=ACCUMULATE)
        assert graded.verdict.status == "FAIL"
        beyond = graded.verdict.detail["beyond_allowance"]
        assert isinstance(beyond, dict)
        assert beyond["allowance"] == {"lookback": 1, "batch_size": "day"}
        assert [r["key"] for r in beyond["records"]] == [{"order_id": 7}]  # type: ignore[index]
        bounded = judge(microbatch, model, sched,
                        options=GradeOptions(landing="accumulate", allowance=lateness.MODEL))
        assert bounded.verdict.status == "PASS", bounded.verdict.detail
        assert bounded.verdict.allowance == "model"
    finally:
        model.close()


def test_a_wrong_microbatch_model_is_a_bug_not_late_data(microbatch: TaskSpec) -> None:
    model = read(SHOP, microbatch, models=["orders_microbatch_high_water_mark"])
    try:
        graded = judge(microbatch, model, schedule(microbatch, "in_order", 0),
                       options=ACCUMULATE)
        assert graded.verdict.status == "FAIL"
        assert "beyond_allowance" not in graded.verdict.detail
    finally:
        model.close()


def test_grade_marks_late_by_design_and_passes_under_the_models_allowance(
        microbatch: TaskSpec, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["grade", str(SHOP), "--data", str(EXAMPLE), "--model", "orders_microbatch",
            "--seeds", "1", "--schedule", "in_order", "--schedule", "late_arrival"]
    code, out, _ = cli(capsys, *args)
    assert code == 1
    assert "late_arrival (late, by design)" in out and "FAIL 1 (1 late, by design)" in out
    assert "orders {\"order_id\":7}: event 2024-03-03 09:00:00, landed 2024-03-05" in out
    code, out, _ = cli(capsys, *args, "--allowed-lateness", "model", "--json")
    assert code == 0
    assert {v["verdict"] for v in json.loads(out)["verdicts"]} == {"PASS"}


def test_explain_lists_the_late_records_of_its_minimal_plan(
        microbatch: TaskSpec, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["explain", str(SHOP), "--data", str(EXAMPLE), "--model", "orders_microbatch",
            "--schedule", "late_arrival", "--seed", "0"]
    code, out, _ = cli(capsys, *args, "--json")
    doc = json.loads(out)
    assert code == 1 and doc["landing"] == "accumulate"
    late = doc["minimal"]["late"]
    assert late["allowance"] == {"lookback": 1, "batch_size": "day"}
    assert [r["key"] for r in late["records"]] == [{"order_id": 7}]
    code, out, _ = cli(capsys, *args, "--allowed-lateness", "model")
    assert code == 0 and "nothing to explain" in out
