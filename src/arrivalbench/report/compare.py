"""Two arms over the same tasks (`report --compare A B`): the shift of every metric, B minus A,
with a paired bootstrap interval, and the cells whose class changed.

Paired: only the tasks both arms have cells on are used, and for each metric and each of its
per-task inputs only the tasks where both arms define that input, so the two values rest on the
same tasks (each arm's value here may differ from its own column, which uses all its tasks).
One resample draws task indices once and applies them to both arms; the shift's interval is the
percentile interval of B - A over those resamples. Cells are matched on (task, replicate).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from arrivalbench.core.values import JSON
from arrivalbench.errors import ArrivalBenchError
from arrivalbench.report.bootstrap import RESAMPLES, interval, resample_indices
from arrivalbench.report.metrics import (
    CellFacts,
    Estimate,
    Metric,
    Vector,
    metric_specs,
    per_task,
    rates,
    rounded,
    tree,
)
from arrivalbench.report.per_task import verdict_class


def common_tasks(a: str, b: str, facts_a: Sequence[CellFacts],
                 facts_b: Sequence[CellFacts]) -> list[str]:
    """The tasks both arms have cells on; bad input (one line) when there is none."""
    tasks_a, tasks_b = {f.task for f in facts_a}, {f.task for f in facts_b}
    common = sorted(tasks_a & tasks_b)
    if not common:
        raise ArrivalBenchError(
            f"compare {a} with {b}: the arms share no task ({a}: {_few(tasks_a)}; {b}: "
            f"{_few(tasks_b)}); compare two arms graded on the same tasks")
    return common


def _few(tasks: set[str]) -> str:
    names = sorted(tasks)
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _paired(metric: Metric, va: Mapping[str, Vector], vb: Mapping[str, Vector]
            ) -> tuple[list[Vector], list[Vector]]:
    """Each input of both arms, kept only on the tasks where both define it."""
    xs, ys = [], []
    for name in metric.inputs:
        both = np.isfinite(va[name]) & np.isfinite(vb[name])
        xs.append(np.where(both, va[name], np.nan))
        ys.append(np.where(both, vb[name], np.nan))
    return xs, ys


def shift(metric: Metric, va: Mapping[str, Vector], vb: Mapping[str, Vector],
          indices: np.ndarray) -> dict[str, JSON]:
    xs, ys = _paired(metric, va, vb)
    a, b = float(metric.estimate(*xs)), float(metric.estimate(*ys))
    used = (metric.used(*xs) if metric.used is not None
            else np.any(np.isfinite(np.stack(xs)), axis=0))
    value = b - a
    if np.isfinite(value):
        low, high = interval(metric.estimate(*(y[indices] for y in ys))
                             - metric.estimate(*(x[indices] for x in xs)))
    else:
        low = high = float("nan")
    return {"a": rounded(a), "b": rounded(b),
            "shift": Estimate(rounded(value), rounded(low), rounded(high),
                              int(used.sum())).document()}


def changed_cells(facts_a: Sequence[CellFacts], facts_b: Sequence[CellFacts],
                  tasks: Sequence[str]) -> dict[str, JSON]:
    keep = set(tasks)
    by_a = {(f.task, f.replicate): f for f in facts_a if f.task in keep}
    by_b = {(f.task, f.replicate): f for f in facts_b if f.task in keep}
    both = sorted(by_a.keys() & by_b.keys())
    changed: list[JSON] = []
    for task, replicate in both:
        ca, cb = verdict_class(by_a[(task, replicate)]), verdict_class(by_b[(task, replicate)])
        if ca != cb:
            changed.append({"task": task, "replicate": replicate, "a": ca, "b": cb})
    return {"compared": len(both), "only_a": len(by_a.keys() - by_b.keys()),
            "only_b": len(by_b.keys() - by_a.keys()), "changed": changed}


def compare(a: str, b: str, facts: Sequence[CellFacts], seed: int,
            resamples: int = RESAMPLES) -> dict[str, JSON]:
    """The `comparison` object of metrics.json."""
    facts_a = [f for f in facts if f.arm == a]
    facts_b = [f for f in facts if f.arm == b]
    tasks = common_tasks(a, b, facts_a, facts_b)
    keep = set(tasks)
    facts_a = [f for f in facts_a if f.task in keep]
    facts_b = [f for f in facts_b if f.task in keep]
    rates_a, rates_b = rates(facts_a), rates(facts_b)
    names = [n for n in rates_a if n in rates_b]
    va = {n: per_task(facts_a, tasks, rates_a[n]) for n in names}
    vb = {n: per_task(facts_b, tasks, rates_b[n]) for n in names}
    indices = resample_indices(len(tasks), seed, resamples)
    metrics = tree((m.path, shift(m, va, vb, indices)) for m in metric_specs(names))
    return {"a": a, "b": b, "tasks": len(tasks), "metrics": metrics,
            "cells": changed_cells(facts_a, facts_b, tasks)}
