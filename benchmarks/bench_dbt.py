"""dbt projects as artifacts: what a dbt run per batch costs (the target: a default
`grade` of a one-model project under 3 minutes on one core).

On the passing example (examples/dbt/passing, task ad_clicks_clean) it measures
  - the median wall time of one dbt run per batch (over a replay on in_order),
  - the wall time of one replay on in_order (the project already parsed),
  - the wall time of a default `grade` (snapshot, both controls, every declared hazard, seeds
    0..N-1) in this process, pinned to one core where the OS allows, parse included,
  - the same grade of the task's gold.sql, the same logic as a plain SQL script, and the ratio.

With --own-data DIR it measures instead, each in a fresh process with an empty cache (the
full-refresh oracle included): a default `grade examples/your_data/shop --data DIR --model
orders_high_water_mark` (meant to stay under 90 s on two cores) and an `init --from-dbt`
of the same; wall time and the CPU seconds of the process and its children (on a loaded
machine the CPU seconds are the comparable figure).

    python benchmarks/bench_dbt.py [--seeds N]
    python benchmarks/bench_dbt.py --own-data examples/your_data
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
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
SHOP = Path(__file__).resolve().parent.parent / "examples" / "your_data" / "shop"


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


def cold(argv: list[str], cache: Path) -> tuple[float, float, int]:
    """Wall and CPU seconds (this command's process tree) of `arrivalbench argv` with an
    empty cache, and its exit status."""
    shutil.rmtree(cache, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", "from arrivalbench.cli import main; main()",
                           *argv],
                          env={**os.environ, "XDG_CACHE_HOME": str(cache)},
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def own_data(data: Path) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        cache = Path(scratch) / "cache"
        wall, cpu, code = cold(["grade", str(SHOP), "--data", str(data), "--model",
                                "orders_high_water_mark"], cache)
        print(f"grade --data {data} (default seeds, cold cache): {wall:.1f} s wall, "
              f"{cpu:.1f} s CPU, exit {code}")
        wall, cpu, code = cold(["init", str(Path(scratch) / "task"), "--from-dbt", str(SHOP),
                                "--data", str(data), "--model", "orders_high_water_mark"],
                               cache)
        print(f"init --from-dbt {data}: {wall:.1f} s wall, {cpu:.1f} s CPU, exit {code}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=DEFAULT_SEEDS)
    parser.add_argument("--own-data", type=Path, metavar="DIR")
    args = parser.parse_args()
    if args.own_data is not None:
        own_data(args.own_data)
        return
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
