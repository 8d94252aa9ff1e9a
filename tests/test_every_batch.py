"""The every-batch check: the target after each completed run against the reference over the
records delivered so far."""

from __future__ import annotations

import pytest

from arrivalbench.core.checkpoints import delivered, reference_over, replay_checked
from arrivalbench.core.grading import Point, grade
from arrivalbench.core.replay import expected
from arrivalbench.core.schedules import Batch, Schedule
from arrivalbench.core.task import TaskSpec, load_spec
from conftest import TINY_GOLD, TINY_NO_DEDUP, TINY_ROWS, write_task

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
    plain, _ = grade(tiny, LATE_BLOOMER, Point("in_order", 0))
    checked, _ = grade(tiny, LATE_BLOOMER, Point("in_order", 0), every_batch=True)
    assert plain.status == "PASS" and plain.detail == {}
    assert checked.status == "FAIL"
    assert checked.detail["reconverged"] is True
    first = checked.detail["first_divergence"]
    assert first["batch"] == 0 and first["diff"]["counts"]["missing"] > 0


def test_without_the_flag_verdict_bytes_do_not_change(tiny: TaskSpec) -> None:
    for script in (TINY_GOLD, TINY_NO_DEDUP):
        plain, _ = grade(tiny, script, Point("duplicates", 1))
        checked, _ = grade(tiny, script, Point("duplicates", 1), every_batch=True)
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
    verdict, _ = grade(tiny, dropper, Point("in_order", 0), every_batch=True)
    assert verdict.status == "ERROR" and verdict.detail["phase"] == "read-target"
    first = verdict.detail["first_divergence"]
    assert first["batch"] == 0 and "shop_revenue" in first["error"]
