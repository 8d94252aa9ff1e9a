"""The every-batch check: the target after each completed run against the reference over the
records delivered so far."""

from __future__ import annotations

import pytest

from arrivalbench.core.checkpoints import delivered, reference_over, replay_checked
from arrivalbench.core.engine import Limits, Table
from arrivalbench.core.grading import Point
from arrivalbench.core.replay import expected
from arrivalbench.core.schedules import Batch, Schedule
from arrivalbench.core.task import TaskSpec, load_spec
from arrivalbench.core.values import row_sort_key
from conftest import TINY_GOLD, TINY_NO_DEDUP, TINY_ROWS, grade1, write_task

# Right once all twelve orders are in, wrong (empty) before: the final table alone passes.
LATE_BLOOMER = TINY_GOLD.replace("FROM seen GROUP BY shop",
                                 "FROM seen WHERE (SELECT count(*) FROM seen) >= 12 "
                                 "GROUP BY shop")


def test_delivered_counts_an_aborted_batch_once_its_retry_completes() -> None:
    a, b, c = ("orders", 0), ("orders", 1), ("orders", 2)
    sched = Schedule("plan", 0, (Batch((a,)), Batch((b, c), 1.0), Batch((b, c)),
                                 Batch((c,), None, 1)))
    assert delivered(sched) == {0: frozenset({a}), 2: frozenset({a, b, c})}


def test_reference_over_everything_is_the_reference(tiny: TaskSpec) -> None:
    every = frozenset(("orders", r) for r in range(len(TINY_ROWS)))
    assert reference_over(tiny, every) == expected(tiny)


def test_reference_over_a_part_is_the_reference_of_a_smaller_log(tiny: TaskSpec,
                                                                   tmp_path_factory:
                                                                   pytest.TempPathFactory
                                                                   ) -> None:
    part = [0, 3, 4, 9]
    small = load_spec(write_task(tmp_path_factory.mktemp("small"), "tiny",
                                 rows=[TINY_ROWS[r] for r in part]))
    got = reference_over(tiny, frozenset(("orders", r) for r in part))
    assert sorted(got.rows) == sorted(expected(small).rows)


def test_a_pipeline_right_only_at_the_end_fails_only_with_the_check(tiny: TaskSpec) -> None:
    plain, _ = grade1(tiny, LATE_BLOOMER, Point("in_order", 0))
    checked, _ = grade1(tiny, LATE_BLOOMER, Point("in_order", 0), every_batch=True)
    assert plain.status == "PASS" and plain.detail == {}
    assert checked.status == "FAIL"
    assert checked.detail["reconverged"] is True
    first = checked.detail["first_divergence"]
    assert first["batch"] == 0 and first["diff"]["counts"]["missing"] > 0


def test_without_the_flag_verdict_bytes_do_not_change(tiny: TaskSpec) -> None:
    for script in (TINY_GOLD, TINY_NO_DEDUP):
        plain, _ = grade1(tiny, script, Point("duplicates", 1))
        checked, _ = grade1(tiny, script, Point("duplicates", 1), every_batch=True)
        assert (plain.status, plain.schedule_digest) == (checked.status,
                                                          checked.schedule_digest)
        if plain.status == "PASS":
            assert checked.json() == plain.json()
        else:  # a final FAIL keeps its diff and gains where it started
            assert {k: v for k, v in checked.detail.items() if k != "first_divergence"} == \
                plain.detail


def test_every_completed_run_is_checked_and_aborted_ones_are_not(tiny: TaskSpec) -> None:
    sched = Schedule("plan", 0, (Batch((("orders", 0),)), Batch((("orders", 1),), 1.0),
                                 Batch((("orders", 1),))))
    checked = replay_checked(tiny, TINY_NO_DEDUP, sched)
    assert [c.batch for c in checked.checks] == [0, 2]
    assert not checked.checks[1].ok  # order 2 counted twice: the aborted run had committed


def test_a_missing_target_is_reported_at_its_first_run(tiny: TaskSpec) -> None:
    dropper = TINY_GOLD + "DROP TABLE shop_revenue;\n"
    verdict, _ = grade1(tiny, dropper, Point("in_order", 0), every_batch=True)
    assert verdict.status == "ERROR" and verdict.detail["phase"] == "read-target"
    first = verdict.detail["first_divergence"]
    assert first["batch"] == 0 and "shop_revenue" in first["error"]


# -- the sets of a chain in one query ------------------------------------------------------------


def _prefixes(spec: TaskSpec) -> list[frozenset[tuple[str, int]]]:
    from arrivalbench.core.grading import plan, schedule

    sets: list[frozenset[tuple[str, int]]] = []
    for point in plan(spec, 2):
        found = delivered(schedule(spec, point.schedule, point.seed))
        sets += [found[n] for n in sorted(found)]
    return list(dict.fromkeys(sets))


@pytest.mark.parametrize("task", ["web_sessions", "checkout_funnel_daily",
                                  "wallet_balance_history"])
def test_the_sets_of_a_chain_in_one_query_are_each_set_alone(
        task: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows, joins, CTEs and several targets: the one query per chain (DuckDB runs it
    as a lateral join) gives exactly the rows of every set computed on its own."""
    from arrivalbench.core import checkpoints

    spec = load_spec(task)
    sets = _prefixes(spec)
    monkeypatch.setattr(checkpoints, "_STEPPED", {})
    for target in range(len(spec.targets)):
        together = checkpoints._compute(spec, sets, Limits(), target=target)
        assert list(checkpoints._STEPPED.values()) == [True] * (target + 1)
        with monkeypatch.context() as alone:
            alone.setattr(checkpoints, "_together", lambda *args: None)
            each = checkpoints._compute(spec, sets, Limits(), target=target)
        assert [(t.columns, sorted(t.rows, key=row_sort_key)) for t in together] == \
            [(t.columns, sorted(t.rows, key=row_sort_key)) for t in each]


def test_a_query_whose_sets_together_disagree_is_computed_set_by_set(
        tiny: TaskSpec, monkeypatch: pytest.MonkeyPatch) -> None:
    from arrivalbench.core import checkpoints

    sets = _prefixes(tiny)
    monkeypatch.setattr(checkpoints, "_STEPPED", {})
    real = checkpoints._together

    def off_by_one(*args: object) -> list[Table] | None:
        found = real(*args)  # type: ignore[arg-type]
        return None if found is None else [Table(t.columns, t.rows[1:]) for t in found]

    monkeypatch.setattr(checkpoints, "_together", off_by_one)
    got = checkpoints._compute(tiny, sets, Limits())
    assert list(checkpoints._STEPPED.values()) == [False]
    assert got == [reference_over(tiny, s) for s in sets]


def test_sources_are_read_up_to_the_outer_step_by_name_not_by_a_shadowing_cte() -> None:
    from arrivalbench.core.checkpoints import stepped

    query = ("WITH orders AS (SELECT * FROM main.orders WHERE amount > 0) "
             "SELECT o.shop, count(*) FROM orders AS o JOIN refunds USING (order_id) GROUP BY 1")
    text = stepped(query, {"orders": "__log_0_orders", "refunds": "__log_0_refunds"},
                   {"orders": ("order_id", "shop", "amount"), "refunds": ("order_id",)})
    assert text is not None
    assert text.count("__step <= __s.k") == 2  # main.orders in the CTE, and refunds
    assert 'FROM orders AS o' in text  # the CTE itself is left alone
    assert stepped("SELECT (", {}, {}) is None


def test_a_verdict_stops_comparing_at_the_first_divergence(tiny: TaskSpec) -> None:
    from arrivalbench.core.grading import schedule

    sched = schedule(tiny, "duplicates", 1)
    full = replay_checked(tiny, TINY_NO_DEDUP, sched)
    first = replay_checked(tiny, TINY_NO_DEDUP, sched, first_only=True)
    assert full.first_divergence is not None
    assert first.first_divergence == full.first_divergence
    assert first.checks == full.checks[:full.checks.index(full.first_divergence) + 1]
    assert len(first.checks) < len(full.checks)  # the runs after it were not compared
