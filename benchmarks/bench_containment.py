"""What containment costs and bounds (the figures SECURITY.md quotes).

    python benchmarks/bench_containment.py [--before SRC] [--only hostile|dbt|throughput]

- hostile: every DuckDB script of tests/hostile/duckdb graded on snapshot through the local
  executor (one worker, where the process bounds hold), and every dbt probe of the corpus
  loaded: the peak RSS of the grader (parent and worker) and the longest wall time.
- dbt: `arrivalbench grade examples/dbt/passing --task ad_clicks_clean` (a default grade) in a
  fresh process: wall time and peak RSS of the grader and of its dbt child.
- throughput: gold and negative scripts of three built-in tasks, every default schedule, seed
  0-1, through the local executor with 2 workers: replays per second. With `--before SRC` (a
  `src` folder of another checkout, e.g. /work/main/src) the same is measured with that code,
  for the before/after comparison.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TASKS = ("ad_clicks_clean", "store_daily_revenue", "web_page_views")


def rss_children_mb() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def rss_self_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def hostile() -> dict[str, object]:
    sys.path.insert(0, str(ROOT / "tests"))
    import tempfile

    from arrivalbench.core.artifacts import load
    from arrivalbench.core.task import load_spec, source_of
    from arrivalbench.core.values import digest
    from arrivalbench.errors import ArrivalBenchError
    from arrivalbench.study.executors import LocalExecutor, Unit
    from test_hostile import DBT_PROBES, HOSTILE

    spec = load_spec("ad_clicks_clean")
    units = []
    for path in sorted((HOSTILE / "duckdb").glob("*.sql")):
        sql = path.read_text()
        units.append(Unit(source_of(spec), spec.digest, digest(sql), sql, "snapshot", 0))
    executor = LocalExecutor(1)
    walls: dict[str, float] = {}
    start = time.perf_counter()
    executor.run(units, lambda batch: walls.update(
        (u.script.splitlines()[0], r.wall_seconds) for u, r in batch))
    duckdb_wall = time.perf_counter() - start
    longest = max(walls.values())
    dbt_walls = {}
    for name, (build, _message) in sorted(DBT_PROBES.items()):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder) / "p"
            build(root)
            began = time.perf_counter()
            with contextlib.suppress(ArrivalBenchError):
                load(root, spec)
            dbt_walls[name] = time.perf_counter() - began
    return {"duckdb_probes": len(units), "dbt_probes": len(dbt_walls),
            "duckdb_total_wall_s": round(duckdb_wall, 1),
            "longest_replay_wall_s": round(longest, 1),
            "longest_dbt_probe_wall_s": round(max(dbt_walls.values()), 1),
            "worker_peak_rss_mb": round(max(executor.stats.peak_rss.values()) / 2**20),
            "grader_parent_peak_rss_mb": round(rss_self_mb())}


def dbt(src: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    before = rss_children_mb()
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", "import sys; from arrivalbench.cli import "
                           "main; main(sys.argv[1:])", "grade",
                           str(ROOT / "examples" / "dbt" / "passing"), "--task",
                           "ad_clicks_clean", "--json"], env=env, capture_output=True,
                          text=True)
    wall = time.perf_counter() - start
    statuses = _statuses(json.loads(done.stdout)) if done.stdout.strip() \
        else [done.stderr.strip()[-200:]]
    return {"wall_s": round(wall, 1), "exit": done.returncode,
            "max_rss_of_a_process_mb": round(max(before, rss_children_mb())),
            "verdicts": statuses}


def _statuses(document: object) -> list[str]:
    """Every verdict status in a `grade --json` document, wherever it sits."""
    found: list[str] = []
    if isinstance(document, dict):
        if document.get("status") in ("PASS", "FAIL", "ERROR"):
            found.append(str(document["status"]))
        for value in document.values():
            found += _statuses(value)
    elif isinstance(document, list):
        for value in document:
            found += _statuses(value)
    return found


def throughput_here() -> dict[str, object]:
    from arrivalbench.core.grading import plan
    from arrivalbench.core.task import load_spec, source_of
    from arrivalbench.core.values import digest
    from arrivalbench.study.executors import LocalExecutor, Unit

    units = []
    for task in TASKS:
        spec = load_spec(task)
        for sql in (spec.gold_sql, *(n.sql for n in spec.negatives)):
            units += [Unit(source_of(spec), spec.digest, digest(sql), sql, p.schedule, p.seed)
                      for p in plan(spec, 2)]
    count = 0

    def on_results(batch: list[object]) -> None:
        nonlocal count
        count += len(batch)

    start = time.perf_counter()
    LocalExecutor(2).run(units, on_results)
    wall = time.perf_counter() - start
    return {"replays": count, "wall_s": round(wall, 1), "replays_per_s": round(count / wall, 2)}


def throughput(src: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run([sys.executable, __file__, "--only", "throughput-here"], env=env,
                          capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, help="the src folder of the code before")
    parser.add_argument("--only", choices=["hostile", "dbt", "throughput", "throughput-here"])
    args = parser.parse_args()
    if args.only == "throughput-here":
        print(json.dumps(throughput_here()))
        return
    here = ROOT / "src"

    def show(name: str, figures: dict[str, object]) -> None:
        print(json.dumps({name: figures}), flush=True)

    if args.only in (None, "dbt"):
        show("dbt_after", dbt(here))
        if args.before:
            show("dbt_before", dbt(args.before))
    if args.only in (None, "throughput"):
        show("throughput_after", throughput(here))
        if args.before:
            show("throughput_before", throughput(args.before))
    if args.only in (None, "hostile"):
        show("hostile", hostile())


if __name__ == "__main__":
    main()
