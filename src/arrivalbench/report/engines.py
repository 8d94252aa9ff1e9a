"""Both engines in one study: for every arm graded on DuckDB and on the second engine, how far
their verdicts agree, the pass rates side by side, and the cells that pass on one engine only.

Every other table reads one engine per arm (`main_engines`): DuckDB, the default engine and the
engine of every reference, when the arm has a DuckDB verdict; the engine it was graded on when
it has none. So adding PostgreSQL verdicts to a study never moves its DuckDB numbers, and the
engines meet only here.

Matching: a replay is compared when both engines have a verdict for its (task digest, artifact,
schedule, seed), each the newest version on its engine; a verdict on one engine only is left
out, so both sides rest on the same replays (an unfinished run on one engine narrows the
comparison instead of biasing it). Rates are task means with the report's bootstrap over the
arm's compared tasks (a fresh generator per arm, as elsewhere); a side-by-side pass rate keeps
each task only where both engines define it, and the difference has a paired interval.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from arrivalbench.core.engine import DEFAULT_ENGINE, ENGINES
from arrivalbench.core.grading import CHECKED_CONTROLS
from arrivalbench.core.task import HAZARDS
from arrivalbench.core.values import JSON
from arrivalbench.report.bootstrap import RESAMPLES, resample_indices
from arrivalbench.report.compare import shift
from arrivalbench.report.load import CellRow, Results, VerdictRow
from arrivalbench.report.metrics import (
    SCHEDULES,
    CellFacts,
    Metric,
    Vector,
    estimate,
    newest_verdicts,
    per_task,
    rates,
    task_mean,
)
from arrivalbench.report.per_task import letters

SECOND = next(e for e in ENGINES if e != DEFAULT_ENGINE)  # the engine compared with DuckDB
PASS_RATES = ("snapshot_pass", *HAZARDS)

Key = tuple[str, int]  # (schedule, seed)


def graded_engines(cells: Iterable[CellRow], verdicts: Iterable[VerdictRow]
                   ) -> dict[str, tuple[str, ...]]:
    """The engines each arm has verdicts on (DuckDB first, then by name); () for an arm with
    none."""
    by_artifact: dict[tuple[str, str], set[str]] = defaultdict(set)
    for v in verdicts:
        if v.schedule in SCHEDULES:
            by_artifact[(v.task_digest, v.artifact)].add(v.engine)
    found: dict[str, set[str]] = defaultdict(set)
    for c in cells:
        found[c.arm] |= by_artifact.get((c.task_digest, c.artifact or ""), set())
    return {arm: tuple(sorted(names, key=lambda e: (e != DEFAULT_ENGINE, e)))
            for arm, names in found.items()}


def main_engines(graded: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """The engine whose verdicts each arm's metrics read: its first graded engine (DuckDB when
    it has any DuckDB verdict), DuckDB for an arm with no verdict."""
    return {arm: names[0] if names else DEFAULT_ENGINE for arm, names in graded.items()}


@dataclass(frozen=True)
class Matched:
    """A cell with the replays both engines graded: (schedule, seed) -> (DuckDB's verdict, the
    second engine's), in report order."""

    task: str
    replicate: int
    pairs: Mapping[Key, tuple[str, str]]

    def verdicts(self, side: int) -> CellFacts:
        """The cell on one engine (0: DuckDB, 1: the second), on the compared replays only."""
        by: dict[str, list[str]] = defaultdict(list)
        for (schedule, _), pair in self.pairs.items():
            by[schedule].append(pair[side])
        snapshot = by.pop("snapshot", [None])[0]
        return CellFacts("", self.task, self.replicate, True, snapshot,
                         {k: tuple(v) for k, v in by.items() if k in CHECKED_CONTROLS},
                         {k: tuple(v) for k, v in by.items() if k in HAZARDS})


def schedule_order(key: Key) -> tuple[int, int]:
    return SCHEDULES.index(key[0]), key[1]


ByEngine = Mapping[str, Mapping[tuple[str, str], Mapping[Key, str]]]


def by_engine(verdicts: Iterable[VerdictRow]) -> ByEngine:
    """engine -> (task digest, artifact) -> (schedule, seed) -> verdict, for the two engines,
    the newest version of each replay on each, on the schedules the report reads."""
    on: dict[str, dict[tuple[str, str], dict[Key, str]]] = {DEFAULT_ENGINE: {}, SECOND: {}}
    for v in newest_verdicts(verdicts):
        if v.engine in on and v.schedule in SCHEDULES and (v.schedule != "snapshot"
                                                          or v.seed == 0):
            on[v.engine].setdefault((v.task_digest, v.artifact), {})[(v.schedule, v.seed)] = \
                v.verdict
    return on


def on_main_engines(results: Results, engines: Mapping[str, str]) -> Results:
    """`results` with each arm's cells on its main engine only; an arm with no cell recorded on
    that engine (one same script graded on both) keeps its cells."""
    recorded = {(c.arm, c.engine) for c in results.cells}
    return dataclasses.replace(results, cells=tuple(
        c for c in results.cells if c.engine == engines.get(c.arm, DEFAULT_ENGINE)
        or (c.arm, engines.get(c.arm, DEFAULT_ENGINE)) not in recorded))


def matched_cells(cells: Iterable[CellRow], on: ByEngine) -> tuple[list[Matched], int]:
    """The cells with at least one replay graded on both engines, by task and replicate, and
    the number of cells graded on one engine only. A cell is one (task, replicate) of an arm:
    on each engine its artifact is that engine's cell's (the built-in arms have a pipeline per
    engine), or the one artifact the arm holds when it was graded as it is on both."""
    by_cell: dict[tuple[str, int], dict[str, CellRow]] = defaultdict(dict)
    for c in cells:
        if c.artifact is not None:
            by_cell[(c.task, c.replicate)][c.engine] = c
    matched, one_engine = [], 0
    for (task, replicate), mine in sorted(by_cell.items()):
        first = mine.get(DEFAULT_ENGINE) or mine[SECOND]
        second = mine.get(SECOND, first)
        a = on[DEFAULT_ENGINE].get((first.task_digest, first.artifact or ""), {})
        b = on[SECOND].get((second.task_digest, second.artifact or ""), {})
        common = sorted(a.keys() & b.keys(), key=schedule_order)
        if common:
            matched.append(Matched(task, replicate, {k: (a[k], b[k]) for k in common}))
        elif a or b:
            one_engine += 1
    return matched, one_engine


def _by_task(values: Iterable[tuple[str, float]], tasks: Sequence[str]) -> Vector:
    """The mean per task of (task, value) pairs; NaN for a task without one."""
    index = {t: i for i, t in enumerate(tasks)}
    sums, counts = np.zeros(len(tasks)), np.zeros(len(tasks))
    for task, value in values:
        sums[index[task]] += value
        counts[index[task]] += 1
    out: Vector = np.full(len(tasks), np.nan)
    np.divide(sums, counts, out=out, where=counts > 0)
    return out


def _agreement(cell: Matched, schedule: str | None) -> float | None:
    """The share of the cell's compared replays (of `schedule`; None: all) with the same
    verdict on both engines; None when it has none."""
    pairs = [p for (s, _), p in cell.pairs.items() if schedule is None or s == schedule]
    return sum(a == b for a, b in pairs) / len(pairs) if pairs else None


MEAN = Metric((), ("x",), task_mean)


def _estimate(v: Vector, indices: np.ndarray) -> dict[str, JSON]:
    return estimate(MEAN, {"x": v}, indices).document()


def arm_comparison(matched: Sequence[Matched], one_engine: int, seed: int,
                   resamples: int = RESAMPLES) -> dict[str, JSON]:
    """The engine comparison of one arm from its matched cells."""
    tasks = sorted({m.task for m in matched})
    indices = resample_indices(len(tasks), seed, resamples)
    agreement: dict[str, JSON] = {}
    for name, schedule in (("all", None), *((s, s) for s in SCHEDULES)):
        shares = [(m.task, a) for m in matched if (a := _agreement(m, schedule)) is not None]
        agreement[name] = _estimate(_by_task(shares, tasks), indices)
    sides = [[m.verdicts(side) for m in matched] for side in (0, 1)]
    side_rates = [rates(facts) for facts in sides]
    pass_rates: dict[str, JSON] = {}
    for name in PASS_RATES:
        rate = name if name == "snapshot_pass" else f"hazard:{name}"
        va, vb = (per_task(facts, tasks, r[rate]) for facts, r in zip(sides, side_rates,
                                                                       strict=True))
        both = np.isfinite(va) & np.isfinite(vb)
        xa, xb = np.where(both, va, np.nan), np.where(both, vb, np.nan)
        pass_rates[name] = {DEFAULT_ENGINE: _estimate(xa, indices),
                            SECOND: _estimate(xb, indices),
                            "difference": shift(MEAN, {"x": xa}, {"x": xb}, indices)["shift"]}
    per_cell: list[JSON] = [{"task": m.task, "replicate": m.replicate, "replays": len(m.pairs),
                             "agree": sum(a == b for a, b in m.pairs.values())}
                            for m in matched]
    return {"tasks": len(tasks),
            "cells": {"compared": len(matched), "one_engine": one_engine},
            "replays": sum(len(m.pairs) for m in matched),
            "agreement": agreement, "pass_rates": pass_rates, "per_cell": per_cell,
            "split": split_cells(matched)}


def split_cells(matched: Sequence[Matched]) -> list[JSON]:
    """(cell, schedule) pairs that pass every compared seed on one engine and not on the other,
    with their verdict letters per seed on each."""
    rows: list[JSON] = []
    for m in matched:
        for schedule in SCHEDULES:
            pairs = [p for (s, _), p in m.pairs.items() if s == schedule]
            a, b = [p[0] for p in pairs], [p[1] for p in pairs]
            if pairs and (set(a) == {"PASS"}) != (set(b) == {"PASS"}):
                rows.append({"task": m.task, "replicate": m.replicate, "schedule": schedule,
                             DEFAULT_ENGINE: letters(a), SECOND: letters(b)})
    return rows


def compare_engines(cells: Sequence[CellRow], verdicts: Sequence[VerdictRow],
                    arms: Sequence[str], seed: int, resamples: int = RESAMPLES
                    ) -> dict[str, JSON] | None:
    """The `engine_comparison` object of metrics.json; None when no arm has a replay graded on
    both engines."""
    on = by_engine(verdicts)
    out: dict[str, JSON] = {}
    for arm in arms:
        matched, one_engine = matched_cells([c for c in cells if c.arm == arm], on)
        if matched:
            out[arm] = arm_comparison(matched, one_engine, seed, resamples)
    if not out:
        return None
    return {"engines": [DEFAULT_ENGINE, SECOND], "arms": out}
