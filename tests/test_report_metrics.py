"""The metric functions and the bootstrap, one behaviour at a time."""

from __future__ import annotations

import dataclasses
import json
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from arrivalbench.report.bootstrap import interval, resample_indices
from arrivalbench.report.load import CellRow, TurnRow, VerdictRow
from arrivalbench.report.metrics import (
    CellFacts,
    Metric,
    ReplayCounts,
    arm_metrics,
    cell_facts,
    estimate,
    mean_of,
    newest_verdicts,
    per_task,
    point_values,
    rates,
    repair_class,
    spread,
    task_mean,
    task_median,
    task_min,
)
from arrivalbench.report.terminal import summary_table

NAN = float("nan")


def cell(task: str = "t", replicate: int = 0, snapshot: str | None = "PASS",
         **hazards: str) -> CellFacts:
    """A cell with hazard verdicts given as letters per seed: duplicates="PF"."""
    letters = {"P": "PASS", "F": "FAIL", "E": "ERROR"}
    return CellFacts("arm", task, replicate, True, snapshot, {},
                     {h: tuple(letters[x] for x in v) for h, v in hazards.items()})


# -- verdict selection, turns, cells -------------------------------------------------------------


def test_the_newest_verdict_is_the_one_the_latest_run_stored() -> None:
    """Versions are `<release>+<hash>`: as text, the build stored later may sort first."""
    older, newer = "0.3.0+f3a9c2e17b40", "0.3.0+0b81d44ac9e2"
    rows = [VerdictRow("d", "a", "duplicates", 0, "FAIL", "2.0.1", older, run_id=1),
            VerdictRow("d", "a", "duplicates", 0, "PASS", "2.0.1", newer, run_id=2),
            VerdictRow("d", "a", "duplicates", 1, "PASS", "2.0.1", older, run_id=3),
            VerdictRow("d", "a", "duplicates", 1, "ERROR", "2.0.1", newer, run_id=2),
            VerdictRow("d", "a", "duplicates", 2, "ERROR", "2.0.1", older),
            VerdictRow("d", "a", "duplicates", 2, "PASS", "2.0.1", newer, run_id=1)]
    chosen = newest_verdicts(rows)
    assert [(v.seed, v.verdict) for v in chosen] == [(0, "PASS"), (1, "PASS"), (2, "PASS")]
    assert newest_verdicts(reversed(rows)) == chosen


def test_repair_class() -> None:
    def turns(*verdicts: str | None) -> list[TurnRow]:
        return [TurnRow("m", "t", 0, i + 1, v) for i, v in enumerate(verdicts)]

    assert repair_class(turns("PASS")) == "first_turn"
    assert repair_class(turns("FAIL", "ERROR", "PASS")) == "repaired"
    assert repair_class(turns(None, "PASS")) == "repaired"
    assert repair_class(turns("FAIL", "FAIL", "FAIL")) is None
    assert repair_class(list(reversed(turns("PASS", "FAIL")))) == "first_turn"  # by turn number


def test_cell_facts_joins_on_artifact_and_task_digest() -> None:
    cells = [CellRow("gold", "t", "d1", 0, "a"), CellRow("other", "t", "d2", 0, "a"),
             CellRow("m", "t", "d1", 0, None, "no script")]
    verdicts = [VerdictRow("d1", "a", "snapshot", 0, "PASS"),
                VerdictRow("d1", "a", "in_order", 0, "PASS"),
                VerdictRow("d1", "a", "trickle", 0, "PASS"),
                VerdictRow("d1", "a", "backfill", 1, "FAIL"),
                VerdictRow("d1", "a", "backfill", 0, "PASS"),
                VerdictRow("d1", "a", "chaos", 0, "FAIL"),
                VerdictRow("d2", "a", "snapshot", 0, "FAIL")]
    gold, other, none = cell_facts(cells, verdicts)
    assert gold.snapshot == "PASS" and gold.hazards == {"backfill": ("PASS", "FAIL")}
    assert gold.controls_pass and gold.eligible and gold.silent and not gold.crash
    assert other.snapshot == "FAIL" and other.hazards == {}  # same artifact, other task digest
    assert not none.gradeable and none.snapshot is None and not none.graded


def test_reconverged_and_late_replays_are_counted_apart() -> None:
    """A final PASS whose every-batch record diverged on the way is reconverged; a FAIL made
    of late data alone is late, by design; neither moves a metric, and results that hold
    neither keep the document they had."""
    def record(status: str, **detail: object) -> str:
        return json.dumps({"verdict": status, "detail": detail})

    cells = [CellRow("arm", "t", "d", 0, "a")]
    rows = [VerdictRow("d", "a", "snapshot", 0, "PASS"),
            VerdictRow("d", "a", "late_arrival", 0, "PASS", every_batch=record(
                "FAIL", reconverged=True)),
            VerdictRow("d", "a", "late_arrival", 1, "PASS", every_batch=record("PASS")),
            VerdictRow("d", "a", "backfill", 0, "FAIL", record=record(
                "FAIL", beyond_allowance={"late": 1}), every_batch=record("FAIL")),
            VerdictRow("d", "a", "duplicates", 0, "FAIL", record=record("FAIL"))]
    [facts] = cell_facts(cells, rows)
    assert facts.replays == ReplayCounts(every_batch_checked=3, reconverged=1,
                                         late_by_design=1)
    doc = arm_metrics("arm", [facts], seed=0, resamples=10)
    assert doc["replays"] == {"every_batch_checked": 3, "reconverged": 1, "late_by_design": 1}
    plain = [dataclasses.replace(v, every_batch=None, record="") for v in rows]
    assert "replays" not in arm_metrics("arm", cell_facts(cells, plain), seed=0, resamples=10)
    assert doc["hazards"] == arm_metrics("arm", cell_facts(cells, plain), seed=0,
                                         resamples=10)["hazards"]
    console = Console(width=200, record=True)
    console.print(summary_table({"arms": {"arm": doc}, "seed": 0}))
    shown = console.export_text()
    assert re.search(r"replays reconverged\s*│?\s*1", shown)
    assert re.search(r"FAILs late, by design\s*│?\s*1", shown)


def test_controls_pass_needs_both_controls() -> None:
    base = cell(duplicates="P")
    assert not base.controls_pass
    one = CellFacts("a", "t", 0, True, "PASS", {"in_order": ("PASS",)}, base.hazards)
    both = CellFacts("a", "t", 0, True, "PASS", {"in_order": ("PASS",), "trickle": ("PASS",)},
                     base.hazards)
    failing = CellFacts("a", "t", 0, True, "PASS",
                        {"in_order": ("PASS",), "trickle": ("PASS", "ERROR")}, base.hazards)
    assert (one.controls_pass, both.controls_pass, failing.controls_pass) == (False, True, False)


def test_snapshot_passing_cell_without_hazard_verdicts_is_not_eligible() -> None:
    facts = [cell("t1"), cell("t2", duplicates="F")]
    silent = per_task(facts, ["t1", "t2"], rates(facts)["silent"])
    assert math.isnan(silent[0]) and silent[1] == 1.0


# -- task means ----------------------------------------------------------------------------------


def test_per_task_rate_is_the_mean_over_the_tasks_cells() -> None:
    facts = [cell("a", 0, duplicates="PF"), cell("a", 1, duplicates="PP"),
             cell("a", 2, duplicates="EP"), cell("b", 0, "FAIL", duplicates="FF"),
             cell("c", 0, duplicates="PP")]
    r = rates(facts)
    assert per_task(facts, ["a", "b", "c"], r["hazard:duplicates"]).tolist()[0] == 1 / 3
    assert math.isnan(per_task(facts, ["a", "b", "c"], r["hazard:duplicates"])[1])
    assert per_task(facts, ["a", "b", "c"], r["snapshot_pass"]).tolist() == [1.0, 0.0, 1.0]


def test_task_mean_leaves_out_undefined_tasks() -> None:
    assert task_mean(np.array([1.0, NAN, 0.0])) == 0.5
    assert math.isnan(task_mean(np.array([NAN, NAN])))
    assert math.isnan(task_mean(np.array([])))
    assert task_mean(np.array([[1.0, NAN], [NAN, NAN]])).tolist()[0] == 1.0  # row-wise


def test_group_of_one_defined_hazard_is_that_hazard() -> None:
    assert mean_of(np.array(0.25), np.array(NAN)) == 0.25
    assert mean_of(np.array(0.25), np.array(0.75)) == 0.5
    assert math.isnan(mean_of(np.array(NAN), np.array(NAN)))


def test_ordering_is_the_mean_of_hazard_means_not_of_cells() -> None:
    # late_arrival on 3 tasks (all pass), out_of_order on 1 task (fails): a pooled mean over
    # task-hazard pairs would give 0.75; the group mean of the two hazard means gives 0.5.
    facts = [cell("a", late_arrival="P"), cell("b", late_arrival="P"),
             cell("c", late_arrival="P", out_of_order="F")]
    doc = arm_metrics("x", facts, seed=0)
    assert doc["ordering"]["value"] == 0.5
    assert doc["ordering"]["n"] == 3
    assert doc["idempotency"] == {"value": None, "low": None, "high": None, "n": 0}
    assert doc["ordering_minus_idempotency"]["value"] is None


# -- bootstrap -----------------------------------------------------------------------------------


def test_resamples_are_seeded() -> None:
    first, again, other = (resample_indices(7, s, 50) for s in (3, 3, 4))
    assert first.shape == (50, 7) and first.min() >= 0 and first.max() <= 6
    assert np.array_equal(first, again) and not np.array_equal(first, other)
    expected = np.random.Generator(np.random.PCG64(3)).integers(0, 7, size=(50, 7))
    assert np.array_equal(first, expected)


def test_interval_is_the_percentile_interval_of_the_defined_resamples() -> None:
    samples = np.array([NAN, *range(101)], dtype=float)
    assert interval(samples) == pytest.approx((2.5, 97.5))
    assert all(math.isnan(x) for x in interval(np.array([NAN, NAN])))


def test_estimate_matches_a_naive_bootstrap() -> None:
    rates_ = np.array([1.0, 0.0, NAN, 0.5, 0.25, 1.0])
    indices = resample_indices(len(rates_), 11, 400)
    got = estimate(Metric(("x",), ("x",), task_mean), {"x": rates_}, indices)
    naive = []
    for row in indices:
        drawn = [rates_[i] for i in row if not math.isnan(rates_[i])]
        if drawn:
            naive.append(sum(drawn) / len(drawn))
    low, high = np.percentile(naive, [2.5, 97.5])
    assert got.value == round(float(np.nanmean(rates_)), 6)
    assert (got.low, got.high, got.n) == (round(low, 6), round(high, 6), 5)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.just(NAN), st.floats(0, 1)), min_size=1, max_size=12),
       st.integers(0, 2**32 - 1))
def test_interval_properties(values: list[float], seed: int) -> None:
    v = np.array(values)
    got = estimate(Metric(("x",), ("x",), task_mean), {"x": v},
                   resample_indices(len(v), seed, 200))
    finite = v[np.isfinite(v)]
    assert got.n == finite.size
    if finite.size == 0:
        assert (got.value, got.low, got.high) == (None, None, None)
        return
    assert got.value == pytest.approx(finite.mean(), abs=1e-6)
    assert got.low is not None and got.high is not None
    assert finite.min() - 1e-6 <= got.low <= got.high <= finite.max() + 1e-6
    if np.ptp(finite) == 0:
        assert got.low == got.high == got.value


def test_seed_moves_the_interval_not_the_value() -> None:
    # task i has i + 1 cells, one of which fails silently: per-task rates 1, 1/2, ..., 1/12
    facts = [cell(f"t{i:02}", r, duplicates="F" if r == 0 else "P")
             for i in range(12) for r in range(i + 1)]
    one, other = arm_metrics("x", facts, seed=1), arm_metrics("x", facts, seed=2)
    expected = round(sum(1 / (i + 1) for i in range(12)) / 12, 6)
    assert one["silent"]["value"] == other["silent"]["value"] == expected
    assert (one["silent"]["low"], one["silent"]["high"]) != \
        (other["silent"]["low"], other["silent"]["high"])
    assert one == arm_metrics("x", facts, seed=1)


# -- spread --------------------------------------------------------------------------------------


def test_spread_only_for_replicated_arms() -> None:
    facts = [cell("a", 0, duplicates="P"), cell("a", 1, duplicates="F")]
    assert spread("negatives", facts) is None  # distinct controls, not replications
    assert spread("gold", facts[:1]) is None  # a single replicate
    got = spread("model:unhinted", facts)
    assert got is not None
    assert got["gap"] == {"replicates": [0, 1], "values": [0.0, 1.0], "min": 0.0, "max": 1.0,
                          "sd": 0.707107}


# -- weakest link and paired differences ---------------------------------------------------------


def simulated_arm(rng: np.random.Generator, tasks: int, rate: float) -> list[CellFacts]:
    """Every cell passes each hazard with the same true probability `rate`. Each task declares
    both ordering hazards but only `duplicates` of the idempotency group, so the ordering
    group's weakest link is a minimum over two hazards and idempotency's over one."""
    facts = []
    for t in range(tasks):
        for r in range(3):
            verdicts = {h: "P" if rng.random() < rate else "F"
                        for h in ("late_arrival", "out_of_order", "duplicates")}
            facts.append(cell(f"t{t:02}", r, **verdicts))
    return facts


def test_weakest_link_is_biased_where_the_group_mean_is_not() -> None:
    """Both groups have the same true pass rate (0.7). Over many simulated arms the group-mean
    difference averages about zero, while the weakest-link difference leans against the group
    with more hazards: the minimum of two noisy estimates falls below the true rate."""
    rng = np.random.Generator(np.random.PCG64(20261130))
    groups, weakest = [], []
    for _ in range(300):
        facts = simulated_arm(rng, tasks=8, rate=0.7)
        values = point_values(facts)
        groups.append(values[("ordering_minus_idempotency",)])
        weakest.append(values[("weakest_link", "ordering_minus_idempotency")])
    group_mean, weakest_mean = float(np.mean(groups)), float(np.mean(weakest))
    standard_error = float(np.std(groups, ddof=1)) / math.sqrt(len(groups))
    assert abs(group_mean) < 3 * standard_error  # unbiased: within noise of zero
    # E[min of two] - p: for 8 tasks x 3 cells the per-hazard rate has sd ~0.094, and the
    # expected minimum of two such falls ~0.053 below p
    assert weakest_mean < -0.035
    assert weakest_mean < group_mean - 0.03


def test_weakest_link_is_the_smallest_hazard_mean() -> None:
    facts = [cell("a", late_arrival="P", out_of_order="F", duplicates="P"),
             cell("b", late_arrival="P", crash_retry="F")]
    doc = arm_metrics("x", facts, seed=0)
    # late 1, out_of_order 0 (a), duplicates 1 (a), crash_retry 0 (b)
    assert doc["weakest_link"]["ordering"]["value"] == 0.0
    assert doc["weakest_link"]["idempotency"]["value"] == 0.0
    assert doc["ordering"]["value"] == 0.5 and doc["idempotency"]["value"] == 0.5


def test_paired_differences_per_task() -> None:
    facts = [cell("a", late_arrival="P", duplicates="F"),   # 1 - 0 = 1
             cell("b", out_of_order="F", crash_retry="P"),  # 0 - 1 = -1
             cell("c", late_arrival="P", duplicates="P"),   # 0
             cell("d", late_arrival="P", out_of_order="F", duplicates="F"),  # 0.5 - 0 = 0.5
             cell("e", late_arrival="P")]                   # no idempotency: left out
    doc = arm_metrics("x", facts, seed=0)
    paired = doc["paired"]
    assert (paired["ordering_better"], paired["idempotency_better"], paired["ties"]) == (2, 1, 1)
    assert paired["median"]["value"] == 0.25 and paired["median"]["n"] == 4
    assert paired["mean"]["value"] == 0.125


def test_task_median_and_min_ignore_undefined_tasks() -> None:
    assert task_median(np.array([1.0, NAN, 0.0, 0.5])) == 0.5
    assert math.isnan(task_median(np.array([NAN, NAN])))
    assert task_median(np.array([[1.0, NAN], [NAN, NAN]])).tolist()[0] == 1.0
    assert task_min(np.array([0.5, NAN, 0.25])) == 0.25
    assert math.isnan(task_min(np.array([NAN])))
