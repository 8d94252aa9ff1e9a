"""The whole metrics.json document: the arms' metrics (`metrics.study`), the arms left out for
having no script at all, each small arm's cells, the `--compare` comparison and, for a study
graded on more than DuckDB, the engine of each arm and the engine comparison."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence

from arrivalbench.core.engine import DEFAULT_ENGINE
from arrivalbench.core.values import JSON
from arrivalbench.errors import ArrivalBenchError
from arrivalbench.report.bootstrap import RESAMPLES
from arrivalbench.report.compare import compare
from arrivalbench.report.engines import (
    compare_engines,
    graded_engines,
    main_engines,
    on_main_engines,
)
from arrivalbench.report.load import Results
from arrivalbench.report.metrics import cell_facts, study
from arrivalbench.report.per_task import cell_rows, is_small


def without_scripts(results: Results) -> dict[str, JSON]:
    """Arms none of whose cells has a script (a trial run, a model that never answered): their
    cell count and reasons. Such an arm has no verdict, so it gets no column anywhere."""
    out: dict[str, JSON] = {}
    for arm in results.arms:
        cells = [c for c in results.cells if c.arm == arm]
        if all(c.artifact is None for c in cells):
            reasons = Counter(c.reason or "no reason given" for c in cells)
            out[arm] = {"cells": len(cells), "reasons": dict(sorted(reasons.items()))}
    return out


def build(results: Results, seed: int, pair: Sequence[str] = (),
          resamples: int = RESAMPLES) -> dict[str, JSON]:
    """metrics.json of `results`; with `pair` (A, B), the comparison of B against A."""
    empty = without_scripts(results)
    for arm in pair:
        if arm in empty:
            cells = sum(c.arm == arm for c in results.cells)
            raise ArrivalBenchError(f"compare arm {arm}: this arm has no script (none of its "
                                    f"{cells} cells has one); compare arms that were graded")
    kept = tuple(a for a in results.arms if a not in empty)
    if not kept:
        raise ArrivalBenchError(f"no arm to report: no cell of {', '.join(results.arms)} has a "
                                "script; grade an arm first (arrivalbench run)")
    graded = graded_engines(results.cells, results.verdicts)
    engines = main_engines(graded)
    everything, results = results, on_main_engines(results, engines)
    doc = study(dataclasses.replace(results, arms=kept), seed, resamples, engines)
    facts = cell_facts(results.cells, results.verdicts, results.idioms, results.turns, engines)
    arms = doc["arms"]
    assert isinstance(arms, dict)
    for arm, metrics in arms.items():
        mine = [f for f in facts if f.arm == arm]
        if is_small(mine):
            assert isinstance(metrics, dict)
            metrics["per_task"] = cell_rows(mine)
    out: dict[str, JSON] = {"arms": arms, "no_scripts": empty}
    if pair:
        out["comparison"] = compare(pair[0], pair[1], facts, seed, resamples)
    # a DuckDB-only study gets neither key, so its report keeps its bytes
    if any(e != DEFAULT_ENGINE for arm in kept for e in graded.get(arm, ())):
        out["engines"] = {arm: engines.get(arm, DEFAULT_ENGINE) for arm in kept}
        both = compare_engines(everything.cells, everything.verdicts, kept, seed, resamples)
        if both is not None:
            out["engine_comparison"] = both
    out["seed"] = doc["seed"]
    out["results_digest"] = doc["results_digest"]
    return out
