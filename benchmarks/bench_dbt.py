"""dbt projects as artifacts: what a dbt run per batch costs (issue 11's target: a default
`grade` of a one-model project under 3 minutes on one core).

On the passing example (examples/dbt/passing, task ad_clicks_clean) it measures
  - the median wall time of one dbt run per batch (over a replay on in_order),
  - the wall time of one replay on in_order (the project already parsed),
  - the wall time of a default `grade` (snapshot, both controls, every declared hazard, seeds
    0..N-1) in this process, pinned to one core where the OS allows, parse included,
  - the same grade of the task's gold.sql, the same logic as a plain SQL script, and the ratio.

    python benchmarks/bench_dbt.py [--seeds N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from arrivalbench.core.artifacts import Artifact, Run, load
from arrivalbench.core.artifacts.script import Script
from arrivalbench.core.engine.duckdb import Database
from arrivalbench.core.grading import DEFAULT_SEEDS, grade_all, plan, schedule
from arrivalbench.core.replay import expected, replay
from arrivalbench.core.task import load_spec

TASK = "ad_clicks_clean"
PROJECT = Path(__file__).resolve().parent.parent / "examples" / "dbt" / "passing"


@dataclass(frozen=True)
class Timed:
    """An artifact whose runs are timed one by one."""

    inner: Artifact
    times: list[float]

    @property
    def digest(self) -> str:
        return self.inner.digest

    @property
    def text(self) -> str:
        return self.inner.text

    def start(self, db: Database) -> Run:
        run = self.inner.start(db)

        def timed(abort: float | None) -> None:
            start = time.perf_counter()
            try:
                run(abort)
            finally:
                self.times.append(time.perf_counter() - start)

        return timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=DEFAULT_SEEDS)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    spec = load_spec(TASK)
    expected(spec)

    start = time.perf_counter()
    project = load(PROJECT, spec)
    parse = time.perf_counter() - start
    print(f"parse + compile (once per process, dbt import included): {parse:.1f} s")

    timed = Timed(project, [])
    sched = schedule(spec, "in_order", 0)
    outcome = replay(spec, timed, sched)
    assert outcome.failure is None
    print(f"one dbt run per batch, median over {len(timed.times)} batches: "
          f"{statistics.median(timed.times):.3f} s")
    print(f"one replay on in_order ({len(sched.batches)} batches): "
          f"{outcome.wall_seconds:.1f} s")

    points = plan(spec, args.seeds)
    start = time.perf_counter()
    verdicts = [v.status for v, _o in grade_all(spec, project, points)]
    dbt_grade = time.perf_counter() - start + parse
    assert set(verdicts) == {"PASS"}, verdicts
    start = time.perf_counter()
    verdicts = [v.status for v, _o in grade_all(spec, Script(spec.gold_sql), points)]
    sql_grade = time.perf_counter() - start
    print(f"default grade ({len(points)} replays, seeds 0..{args.seeds - 1}), one core: "
          f"dbt project {dbt_grade:.1f} s (parse included), gold.sql {sql_grade:.2f} s, "
          f"ratio {dbt_grade / sql_grade:.0f}x")


if __name__ == "__main__":
    main()
