"""`arrivalbench generate`: a model arm through Inspect AI, stored and graded like any arm.

The arm is `<model>:<variant>`. Each sample (task, replicate) is one conversation of the snapshot
repair loop (`inspect_task`), run by `inspect_ai.eval` with Inspect's providers, retries and
concurrency. For each sample the results file gets:

- the final script as an artifact, with its idiom signature;
- the cell (arm, task, replicate) pointing at it, or with no artifact and a reason when the
  sample ended with no script: `no_sql`, `token_cap`, `provider_error` (or `limit`,
  `harness_error`);
- every turn (its script, snapshot verdict and the feedback sent), and the transcript with the
  token counts.

Then `grid.grade_arms` grades the new cells on every schedule. A cell already stored for the
current version of its task is not generated again (except after a provider or harness error),
so the same command resumes, and a larger `--replicates` adds replicates.

Inspect's logs go to a folder next to the results file, `<results stem>.inspect-logs/`, which
holds a `.gitignore` of its own so that it never lands in a repository.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from arrivalbench.agent.evaluate import (
    check_finished,
    evaluate,
    model_arguments,
    require_inspect,
)
from arrivalbench.agent.plan import Plan, make_plan
from arrivalbench.agent.record import Outcome, store
from arrivalbench.agent.request import Request, parse_model_args
from arrivalbench.core.task import source_of

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog
    from inspect_ai.util import DisplayType

    from arrivalbench.study.grid import Summary

# What the command line and callers use, wherever it is defined.
__all__ = ["Outcome", "Plan", "Request", "make_plan", "parse_model_args", "run"]


def run(request: Request, *, model_args: dict[str, Any] | None = None,
        display: DisplayType | None = None, grade: bool = True, progress: bool = True) -> Outcome:
    """Generate the missing samples of `request`, store them, then grade the arm's cells."""
    require_inspect()
    plan = make_plan(request)
    arguments = model_arguments(request, model_args)
    logs: list[EvalLog] = evaluate(plan, arguments, display) if plan.todo else []
    outcome = store(plan, logs)
    check_finished(logs, outcome.stored)
    if grade and (outcome.stored or plan.stored):
        outcome = dataclasses.replace(outcome, grading=_grade(plan, progress))
    return outcome


def _grade(plan: Plan, progress: bool) -> Summary:
    """Every cell of the arm on the plan's tasks, graded on every schedule."""
    from arrivalbench.study import grid

    request = plan.request
    return grid.grade_arms(request.results, [request.arm],
                           tasks=[source_of(spec) for spec in plan.specs],
                           seeds=request.seeds, workers=request.workers, progress=progress,
                           engine=request.engine)
