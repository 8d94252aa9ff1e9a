"""Explicit delivery plans: Schedule -> plan -> Schedule round trips, and every malformed plan is
one error naming the bad value."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arrivalbench.core import clock, plans
from arrivalbench.core.grading import schedule
from arrivalbench.core.log import load_log
from arrivalbench.core.plans import PlanError
from arrivalbench.core.schedules import KINDS, Batch, Schedule
from arrivalbench.core.task import TaskSpec, load_spec
from conftest import write_task

PROPERTY = settings(deadline=None, max_examples=40,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def tiny_spec(tmp_path_factory: pytest.TempPathFactory) -> TaskSpec:
    return load_spec(write_task(tmp_path_factory.mktemp("plans")))


def _roundtrip(spec: TaskSpec, sched: Schedule) -> Schedule:
    # Through text, as a plan file travels.
    return plans.parse(spec, json.loads(json.dumps(plans.document(spec, sched))))


@PROPERTY
@given(kind=st.sampled_from([k for k in KINDS if k not in ("schema_evolution", "chaos")]),
       seed=st.integers(0, 10_000))
def test_generated_schedules_round_trip(tiny_spec: TaskSpec, kind: str, seed: int) -> None:
    sched = schedule(tiny_spec, kind, seed)
    back = _roundtrip(tiny_spec, sched)
    assert (back.kind, back.seed, back.batches, back.evolution_from) == \
        (sched.kind, sched.seed, sched.batches, sched.evolution_from)
    assert back.clock is None  # the clock written out is the one its records give


rows = st.integers(0, 11)
batches = st.lists(st.builds(
    lambda refs, abort: Batch(tuple(("orders", r) for r in refs), *abort),
    st.lists(rows, max_size=6),
    st.one_of(st.just((None, None)), st.integers(1, 5).map(lambda k: (None, k)),
              st.floats(0.01, 1.0).map(lambda s: (s, None)))), min_size=1, max_size=6)


@PROPERTY
@given(batches=batches, seed=st.integers(0, 99))
def test_any_plan_round_trips(tiny_spec: TaskSpec, batches: list[Batch], seed: int) -> None:
    sched = Schedule("plan", seed, tuple(batches))
    back = _roundtrip(tiny_spec, sched)
    assert back.batches == sched.batches and back.seed == seed


@PROPERTY
@given(batches=batches, statements=st.integers(1, 6))
def test_an_abort_past_the_last_statement_is_refused(tiny_spec: TaskSpec, batches: list[Batch],
                                                     statements: int) -> None:
    sched = Schedule("plan", 0, tuple(batches))
    too_far = [b.abort_at for b in batches if b.abort_at is not None and b.abort_at > statements]
    if too_far:
        with pytest.raises(PlanError, match=f"aborts after statement {too_far[0]}"):
            plans.check_statements(sched, statements)
    else:
        plans.check_statements(sched, statements)


def test_evolution_batch_round_trips() -> None:
    spec = load_spec("checkout_funnel_daily")  # declares an evolution column
    for seed in range(3):
        sched = schedule(spec, "schema_evolution", seed)
        assert sched.evolution_from is not None
        assert _roundtrip(spec, sched).evolution_from == sched.evolution_from


def test_keys_may_be_quoted_numbers(tiny_spec: TaskSpec) -> None:
    data = {"batches": [{"batch": 0, "records": [{"source": "orders", "key": {"order_id": "7"}}],
                         "abort": None}]}
    assert plans.parse(tiny_spec, data).batches[0].records == (("orders", 6),)


def _plan(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "plan": 1, "task": "tiny", "schedule": "plan", "seed": 0, "evolution_from": None,
        "batches": [{"batch": 0, "records": [{"source": "orders", "key": {"order_id": 1}}],
                     "abort": None}]}
    doc.update(changes)
    return doc


def test_a_plan_may_set_its_clock(tiny_spec: TaskSpec) -> None:
    data = plans.document(tiny_spec, schedule(tiny_spec, "in_order", 0))
    derived = [b["clock"] for b in data["batches"]]  # type: ignore[index, union-attr]
    for number, item in enumerate(data["batches"]):  # type: ignore[arg-type, union-attr]
        item["clock"] = f"2030-01-01 00:00:{number:02d}"  # type: ignore[index]
    sched = plans.parse(tiny_spec, data)
    assert [clock.text(t) for t in clock.of(sched, load_log(tiny_spec))] == \
        [f"2030-01-01 00:00:{n:02d}" for n in range(len(derived))]
    assert sched.digest != schedule(tiny_spec, "in_order", 0).digest


@pytest.mark.parametrize(("clocks", "message"), [
    (["2024-01-02 00:00:00", "2024-01-01 00:00:00"],
     "batches[1]: clock 2024-01-01 00:00:00 is before the previous batch's "
     "(2024-01-02 00:00:00); a clock never goes backwards"),
    (["2024-01-02 00:00:00", None], "batches[1]: clock null: give the batch's processing time"),
    (["yesterday", "2024-01-01 00:00:00"], "batches[0]: clock \"yesterday\""),
])
def test_a_clock_that_goes_backwards_or_is_partial_is_refused(
        tiny_spec: TaskSpec, clocks: list[str | None], message: str) -> None:
    data = _plan(batches=[{"batch": n, "records": [], "abort": None, "clock": c}
                          for n, c in enumerate(clocks)])
    with pytest.raises(PlanError, match=re.escape(message)):
        plans.parse(tiny_spec, data, "p.json")


def _batch(**changes: Any) -> list[dict[str, Any]]:
    b: dict[str, Any] = {"batch": 0, "records": [], "abort": None}
    b.update(changes)
    return [b]


@pytest.mark.parametrize(("data", "message"), [
    ([], "must be a JSON object"),
    (_plan(colour=1), "unknown key 'colour'"),
    (_plan(plan=7), "plan version 7"),
    (_plan(task="other"), "plan for task 'other'"),
    (_plan(seed=-1), "seed must be a whole number of at least 0, got the number -1"),
    (_plan(seed="1"), "seed must be a whole number of at least 0, got the string '1'"),
    (_plan(schedule=3), "schedule must be a string, got the number 3"),
    (_plan(batches={}), "batches must be a list of batch objects, got an object"),
    (_plan(batches=[]), "batches is empty; a plan delivers at least one batch"),
    (_plan(batches=[{"batch": "0", "records": []}]),
     "batches[0]: batch must be a whole number, got the string '0'"),
    (_plan(batches=_batch(records="all")), "records must be a list, got the string 'all'"),
    (_plan(batches=[{"batch": 1, "records": []}]), "batch number 1 is out of order"),
    (_plan(batches=_batch(records=[{"source": "orders", "key": {"order_id": 99}}])),
     "unknown record key {\"order_id\":99}"),
    (_plan(batches=_batch(records=[{"source": "refunds", "key": {"order_id": 1}}])),
     "unknown source 'refunds'"),
    (_plan(batches=_batch(records=[{"source": "orders", "key": {"id": 1}}])),
     "must give exactly the record key of orders: order_id"),
    (_plan(batches=_batch(records=[["orders", 1]])), "a record is"),
    (_plan(batches=_batch(abort={"after_statement": 0})),
     "abort after_statement must be a statement number of at least 1, got the number 0"),
    (_plan(batches=_batch(abort={"after_statement": True})), "got the boolean true"),
    (_plan(batches=_batch(abort={"share": 1.5})),
     "abort share must be a number in (0, 1], 1 being after the last statement, got the "
     "number 1.5"),
    (_plan(batches=_batch(abort="late")), "abort \"late\""),
    (_plan(batches=_batch(wait=1)), "unknown key 'wait'"),
    (_plan(evolution_from=0), "declares no evolution column"),
])
def test_bad_plans_name_the_value(tiny_spec: TaskSpec, data: object, message: str) -> None:
    with pytest.raises(PlanError) as caught:
        plans.parse(tiny_spec, data, "p.json")
    text = str(caught.value)
    assert message in text and text.startswith("p.json") and "\n" not in text


def test_unreadable_plan_files(tiny_spec: TaskSpec, tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="no such plan file"):
        plans.load(tiny_spec, tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(PlanError, match="not JSON"):
        plans.load(tiny_spec, bad)
