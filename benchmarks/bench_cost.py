"""Cost measurement: read amplification of the built-in arms on `trickle`, and what measuring
costs in wall time.

- Read amplification (rows read from tables in `main` over the whole replay / records
  delivered) of every artifact of the gold, template and negatives arms (and of
  `incremental.sql` where a task ships one) on `trickle`, seed 0: median and max per arm and
  task mode. Only PASS and FAIL replays are counted (an ERROR stops early and reads less).
- The overhead of measuring: a default `grade` (snapshot, both controls and every declared
  hazard for seeds 0..4) of each task's gold, wall time with and without cost measurement,
  alternated and repeated, in this one process.

    python benchmarks/bench_cost.py [--task ID]... [--per-mode N] [--repeat R]

Without --task, the first N built-in tasks of each mode (default 2) are the sample.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

from arrivalbench.core.grading import Point, grade, grade_all, plan
from arrivalbench.core.task import MODES, TaskSpec, builtin_ids, load_spec
from arrivalbench.study import arms as armlib

ARMS = ("gold", "template", "negatives")


def sample(per_mode: int) -> list[TaskSpec]:
    by_mode: dict[str, list[TaskSpec]] = defaultdict(list)
    for task in builtin_ids():
        spec = load_spec(task)
        if len(by_mode[spec.mode]) < per_mode:
            by_mode[spec.mode].append(spec)
    return [s for mode in MODES for s in by_mode[mode]]


def amplification(specs: list[TaskSpec]) -> None:
    figures: dict[tuple[str, str], list[float]] = defaultdict(list)
    for spec in specs:
        scripts = [(a.arm, a.sql) for arm in ARMS for a in armlib.builtin(arm, [spec])]
        if spec.incremental_sql is not None:
            scripts.append(("incremental", spec.incremental_sql))
        for arm, sql in scripts:
            verdict, outcome = grade(spec, sql, Point("trickle", 0), measure=True)
            assert outcome.cost is not None
            if verdict.status != "ERROR":
                figures[(arm, spec.mode)].append(outcome.cost.read_amplification)
                print(f"  {spec.id:32} {spec.mode:9} {arm:11} {verdict.status:5} "
                      f"amplification {outcome.cost.read_amplification:7.2f} "
                      f"(budget {spec.budget.read_amplification:g})")
    print(f"\nread amplification on trickle, seed 0 ({len(specs)} tasks)")
    print(f"  {'arm':11} {'mode':9} {'n':>3} {'median':>8} {'max':>8}")
    for (arm, mode), values in sorted(figures.items()):
        print(f"  {arm:11} {mode:9} {len(values):3} {statistics.median(values):8.2f} "
              f"{max(values):8.2f}")


def overhead(specs: list[TaskSpec], repeat: int) -> None:
    print(f"\ndefault grade of the gold, wall seconds (median of {repeat}, alternated)")
    totals = {False: 0.0, True: 0.0}
    for spec in specs:
        points = plan(spec)
        list(grade_all(spec, spec.gold_sql, points))  # warm: log, caches, expected
        times: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(repeat):
            for measure in (False, True):
                start = time.perf_counter()
                list(grade_all(spec, spec.gold_sql, points, measure=measure))
                times[measure].append(time.perf_counter() - start)
        off, on = statistics.median(times[False]), statistics.median(times[True])
        totals[False] += off
        totals[True] += on
        print(f"  {spec.id:32} {len(points):3} replays  off {off:6.2f}  on {on:6.2f}  "
              f"ratio {on / off:5.2f}")
    print(f"  all: off {totals[False]:.2f} s, on {totals[True]:.2f} s, ratio "
          f"{totals[True] / totals[False]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", action="append", default=[])
    parser.add_argument("--per-mode", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-overhead", action="store_true")
    args = parser.parse_args()
    specs = [load_spec(t) for t in args.task] or sample(args.per_mode)
    amplification(specs)
    if not args.skip_overhead:
        overhead(specs, args.repeat)


if __name__ == "__main__":
    main()
