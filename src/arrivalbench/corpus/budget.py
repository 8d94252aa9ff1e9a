"""The read budget of a task: whether a replay's cost stays within it, and the gate's check
that the task's `incremental.sql` is correct and within budget.

A replay is within budget when its cost was measured completely (no statement ran whose reads
the profiler could not see) and its read amplification is at most the task's budget. A cell is
*incremental* when every replay of it is within budget; the budget is stated for `trickle`, the
schedule with the most runs, where a pipeline that rebuilds from history scores highest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arrivalbench import words
from arrivalbench.core.engine.cost import Cost
from arrivalbench.core.grading import GradeOptions, Point, grade
from arrivalbench.core.task import Budget, TaskSpec
from arrivalbench.words import count

BUDGET_SCHEDULE = "trickle"


def within(cost: Cost | None, budget: Budget) -> bool:
    return (cost is not None and cost.complete
            and cost.read_amplification <= budget.read_amplification)


def over_budget(cost: Cost | None, budget: Budget) -> str | None:
    """Why a replay is not within budget, naming the figure; None when it is."""
    if cost is None:
        return "its cost was not measured"
    if not cost.complete:
        return (f"{count(cost.unprofiled, 'statement')} (EXECUTE, CALL) ran whose reads the "
                "profiler cannot see")
    if cost.read_amplification > budget.read_amplification:
        return (f"read amplification {cost.read_amplification:g} ({cost.rows_read} rows read "
                f"for {cost.records} records delivered) exceeds the budget "
                f"{budget.read_amplification:g}")
    return None


@dataclass(frozen=True)
class Breach:
    """One way `incremental.sql` falls short on one replay."""

    schedule: str
    seed: int
    reason: str


def check_incremental(spec: TaskSpec, points: Sequence[Point]) -> tuple[list[Breach], int]:
    """Grade `incremental.sql` on `points` with cost measurement: every verdict must be PASS
    and every `trickle` replay within the task's budget. Returns the breaches and the replays
    run."""
    assert spec.incremental_sql is not None
    breaches: list[Breach] = []
    for point in points:
        [graded] = grade(spec, spec.incremental_sql, [point],
                         options=GradeOptions(measure=point.schedule == BUDGET_SCHEDULE))
        verdict, outcome = graded.verdict, graded.outcome
        if verdict.status != "PASS":
            breaches.append(Breach(point.schedule, point.seed, words.line(verdict)))
        elif point.schedule == BUDGET_SCHEDULE:
            reason = over_budget(outcome.cost, spec.budget)
            if reason is not None:
                breaches.append(Breach(point.schedule, point.seed, reason))
    return breaches, len(points)
