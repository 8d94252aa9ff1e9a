"""Replay performance of the built-in golds (the targets: overhead ratio <= 1.3, a default
`grade` under 3 s on one core for a task of ~500 records).

For each task it measures
  - the median wall time of one replay per schedule kind (seeds 0..N-1, after one warm-up),
  - the harness overhead ratio: sum of Outcome.wall_seconds / sum of Outcome.engine_seconds over
    a default grade (wall = the whole replay: loading `incoming`, running, reading the target;
    engine = time inside DuckDB on the pipeline's own statements),
  - the wall time of a default `arrivalbench grade` in a fresh process, pinned to one core with
    `taskset -c 0` when available, and of the same process doing nothing but start (`--version`).

    python benchmarks/bench_replay.py [--task ID]... [--seeds N] [--repeat R]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

from arrivalbench.core.grading import DEFAULT_SEEDS, grade_all, plan, schedule
from arrivalbench.core.log import load_log
from arrivalbench.core.replay import expected, replay
from arrivalbench.core.task import TaskSpec, load_spec

TASKS = ["store_daily_revenue", "customer_current_address", "web_page_views"]
CLI = "from arrivalbench.cli import main; main()"


def replay_medians(spec: TaskSpec, seeds: int) -> dict[str, float]:
    kinds = ["snapshot", "in_order", "trickle", *spec.hazards]
    medians = {}
    for kind in kinds:
        replay(spec, spec.gold_sql, schedule(spec, kind, 0))  # warm: log, caches, instance
        times = []
        for seed in range(1 if kind == "snapshot" else seeds):
            sched = schedule(spec, kind, seed)
            start = time.perf_counter()
            replay(spec, spec.gold_sql, sched)
            times.append(time.perf_counter() - start)
        medians[kind] = statistics.median(times)
    return medians


def overhead(spec: TaskSpec) -> tuple[float, float, float, int]:
    """(wall, engine, wall of the in-process grade, replays) over a default grade."""
    expected(spec)
    start = time.perf_counter()
    wall = engine = 0.0
    count = 0
    for verdict, outcome in grade_all(spec, spec.gold_sql, plan(spec, DEFAULT_SEEDS)):
        assert verdict.status == "PASS", (verdict.schedule, verdict.seed, verdict.detail)
        wall += outcome.wall_seconds
        engine += outcome.engine_seconds
        count += 1
    return wall, engine, time.perf_counter() - start, count


def fresh_process(args: list[str], repeat: int) -> tuple[float, float]:
    """The median wall time and CPU time (user + system) of `arrivalbench ARGS` in a new
    process, on one core if possible. CPU time is the figure to trust on a busy machine."""
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        result = subprocess.run([*pin, sys.executable, "-c", CLI, *args],
                                capture_output=True, check=False)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if result.returncode != 0:
            raise SystemExit(f"arrivalbench {' '.join(args)} exited {result.returncode}: "
                             f"{result.stderr.decode()[-500:]}")
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", action="append", help="a built-in id or folder (repeatable)")
    parser.add_argument("--seeds", type=int, default=DEFAULT_SEEDS)
    parser.add_argument("--repeat", type=int, default=3, help="fresh-process runs per task")
    options = parser.parse_args()
    specs = [load_spec(t) for t in options.task or TASKS]

    pinned = "taskset -c 0" if shutil.which("taskset") else "unpinned (no taskset)"
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} cores, load average {load}")
    startup, startup_cpu = fresh_process(["--version"], options.repeat)
    print(f"fresh process start-up (`arrivalbench --version`, {pinned}): {startup:.2f} s wall, "
          f"{startup_cpu:.2f} s CPU\n")

    medians = {s.id: replay_medians(s, options.seeds) for s in specs}
    kinds = list(dict.fromkeys(k for m in medians.values() for k in m))
    width = max(len(s.id) for s in specs)
    print("median wall time of one replay of the gold, ms (batches in the seed-0 schedule)")
    print(f"{'task':<{width}}  {'records':>7}  " + "  ".join(f"{k:>16}" for k in kinds))
    for spec in specs:
        records = len(load_log(spec).timeline)
        cells = []
        for kind in kinds:
            if kind in medians[spec.id]:
                batches = len(schedule(spec, kind, 0).batches)
                cells.append(f"{medians[spec.id][kind] * 1000:>10.1f} ({batches:>3})")
            else:
                cells.append(f"{'-':>16}")
        print(f"{spec.id:<{width}}  {records:>7}  " + "  ".join(cells))

    print(f"\ndefault grade of the gold (snapshot + controls and hazards x {options.seeds} seeds)")
    print("  replays: wall = sum of Outcome.wall_seconds, engine = of Outcome.engine_seconds;")
    print("  in-process = the whole grade_all loop (replays + oracle); "
          "fresh = `arrivalbench grade`")
    print(f"{'task':<{width}}  {'replays':>7}  {'wall s':>7}  {'engine s':>8}  {'ratio':>5}  "
          f"{'in-process s':>12}  {'oracle+rest s':>13}  {'fresh wall s':>12}  "
          f"{'fresh CPU s':>11}")
    for spec in specs:
        wall, engine, inside, count = overhead(spec)
        fresh, fresh_cpu = fresh_process(["grade", str(spec.path / "gold.sql"), "--task",
                                          str(spec.path), "--seeds", str(options.seeds),
                                          "--json"], options.repeat)
        print(f"{spec.id:<{width}}  {count:>7}  {wall:>7.2f}  {engine:>8.2f}  "
              f"{wall / engine:>5.2f}  {inside:>12.2f}  {inside - wall:>13.2f}  {fresh:>12.2f}  "
              f"{fresh_cpu:>11.2f}")


if __name__ == "__main__":
    main()
